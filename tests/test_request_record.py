"""The record of the request (agent/record.py, agent/understand.py): made once per turn by the
model, in any language, and read by every rule that guides a small model.

The record is asked for with a JSON schema; a server that answers HTTP 400 to the schema is asked
for the same JSON in text, and that is remembered for the model. Of the values the record says
the user fixed, only those the request writes (or a non-default choice among a tool's allowed
values, which a request may say in its own words) are kept: a small model fills in arguments of
its own. A request too long for the model's window beside the record's instructions gets no
record, and the run goes on unguided. Over real HTTP against the scripted server.
"""

from __future__ import annotations

import json

import pytest

from brainchat.agent import habits
from brainchat.agent.record import RequestRecord, parse, written
from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.grounding import units
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Fault, Text

from support import collect, eeg_agent, is_record, of, record, spec

LIMITS = AgentLimits(evaluation="model", max_execution_time=120)
STEPS = [s.id for s in EEG.steps()]


def agent(server, study, **fc_options):
    """The app's guided profile: prompt tool calling, guidance auto, the EEG domain."""
    return eeg_agent(server, study, LIMITS, **fc_options)


@pytest.fixture
def study(tmp_path) -> Study:
    write_demo_set(tmp_path / "data" / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(tmp_path / "data")


DONE = Text(json.dumps({"done": "Nothing to call."}))


@pytest.mark.parametrize(
    "reply",
    [
        '{"language": "zh-CN", "steps": ["load", "preprocess"], "needs_tools": true}',
        'Here it is:\n```json\n{"steps": ["load", "preprocess"], "needs_tools": true}\n```',
        '{"steps": ["load", "not_a_step", "preprocess"], "needs_tools": true, "fixed": {"x": 3}}',
    ],
)
def test_a_record_is_read_bare_fenced_or_in_words_unknown_steps_dropped(reply: str) -> None:
    made = parse(reply, STEPS)
    assert made is not None and made.steps == ["load", "preprocess"] and made.fixed == {}


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "load_data", "arguments": {"files": ["a.edf"]}}',  # a call, not a record
        '{"steps": ["load"]',  # cut off
        "I will load the data.",
        '{"steps": "load", "needs_tools": true}',  # not the record's shape
    ],
)
def test_a_reply_that_is_no_record_gives_none(reply: str) -> None:
    assert parse(reply, STEPS) is None


@pytest.mark.parametrize(
    ("value", "text", "said"),
    [
        (40, "剔除超过 40 微伏的试次", True),
        (8, "8-30 Hz 带通", True),
        (30.0, "8-30 Hz", True),
        ("csp_lda", "CSP+LDA 和切空间分类器哪个更好", True),
        (["csp_lda", "ts_lr"], "compare CSP+LDA with TS+LR", True),
        (["csp_lda", "mdm"], "compare CSP+LDA with TS+LR", False),
        (100, "剔除超过 40 微伏的试次", False),
        ("session", "换一个没见过的被试", False),
        (True, "true", False),  # a switch is never "written"
        (["0"], "按 0.5-2.5 秒分段", False),  # a number as text is a number, not a digit of one
        ("01", "sub-01 ses-01", True),
    ],
)
def test_written_reads_numbers_names_and_lists_in_any_language(value, text, said) -> None:
    assert written(value, text) is said


@pytest.mark.parametrize(
    ("value", "unit", "text", "said"),
    [
        ([0.5, 2.5], "Hz", "按 0.5-2.5 秒分段", False),  # seconds are no frequencies
        ([0.5, 2.5], "s", "按 0.5-2.5 秒分段", True),
        ([0.5, 2.5], "s", "epochs from 0.5 to 2.5 s", True),
        (0.5, "s", "epochs from 500 ms after the cue", True),  # scaled into the argument's unit
        (500, "s", "epochs from 500 ms after the cue", False),
        (0.5, "s", "从提示后 500 毫秒开始分段", True),
        (8, "Hz", "8-30Hz 带通", True),
        (30, "s", "8-30 Hz 带通", False),
        (40, "µV", "剔除超过 40 微伏的试次", True),
        (40, "µV", "drop trials above 40 microvolts", True),
        (40, "µV", "reject 40 uV", True),
        (40, "Hz", "剔除超过 40 微伏的试次", False),
        (50, "Hz", "notch at 50 and 100 Hz", True),
        (2, "s", "sub-02, 2 sessions", True),  # no unit after it: the request may mean it
        (30, "s", "30 subjects", True),  # a word that starts like a unit is no unit
        (1, None, "加载 sub-01 的数据", False),  # a name's digits are no quantity
        (3, None, "plot C3 and C4", False),
        ("01", None, "加载 sub-01 的数据", True),  # but a label may be one
        (2, None, "load session 2", True),
        (-0.5, "s", "epochs from -0.5 to 3 s", True),  # a sign, not a range's dash
        (3, "s", "epochs from -0.5 to 3 s", True),
        (-30, "Hz", "8-30 Hz", False),
        (-1, "s", "a baseline from -1 to -0.5 s", True),
        (-0.5, "s", "a baseline from -1 to -0.5 s", True),
    ],
)
def test_a_number_written_in_another_unit_is_not_the_arguments(value, unit, text, said) -> None:
    assert written(value, text, unit) is said


@pytest.mark.parametrize(
    ("description", "unit"),
    [
        ("low cut-off in Hz (None: low-pass only)", "Hz"),
        ("start of each epoch relative to the event, s", "s"),
        ("[t0, t1] s before the cue; default: epoch start to 0", "s"),
        ("drop epochs whose peak-to-peak exceeds this, in µV", "µV"),
        ("the file(s) to load", None),  # a plural's (s)
        ("the subject's files", None),
        ("fraction for the test set", None),
        ("a window in s or a band in Hz", None),  # two kinds: no one unit
    ],
)
def test_an_arguments_unit_is_the_one_its_description_names(description, unit) -> None:
    assert units.unit_of(description) == unit


async def test_the_record_keeps_only_the_values_the_user_fixed(scripted_server, study) -> None:
    """Values the request writes (40 µV, 8-30 Hz, "8" as the number 8) and a non-default choice
    said in other words (a person never seen: cross_subject) are kept; numbers nobody wrote, a
    default choice and a switch are the model's own filling-in, and are left out. A value the
    request writes asks for its tool's step (40 µV: the epoching the record's steps left out);
    a choice read from other words does not (the protocol adds no cross-validation, and the
    device a small model filled in adds no training to the request). The event shows the record
    as the run keeps it."""
    s = scripted_server
    fixed = {
        "epoch_data": {"reject_uv": 40, "tmin": 0.5},
        "bandpass_filter": {"l_freq": "8", "h_freq": 30},
        "cross_validate": {"protocol": "cross_subject", "folds": 10, "permutations": True},
        "split_dataset": {"by": "trial"},
        "train_model": {"device": "cuda"},
        "no_such_tool": {"x": 1},
    }
    s.queue("fc", record(["load", "preprocess"], language="zh-CN", fixed=fixed), DONE, DONE)
    s.queue("ans", Text("好的。"))
    question = "加载数据，8-30 Hz 滤波，剔除超过 40 微伏的试次，换一个没见过的被试测试"
    events = await collect(agent(s, study).run(question))
    (made,) = of(events, "request_understood")
    assert made.how == "schema" and made.problem == ""
    assert made.record["fixed"] == {
        "epoch_data": {"reject_uv": 40},
        "bandpass_filter": {"l_freq": 8, "h_freq": 30},
        "cross_validate": {"protocol": "cross_subject"},
        "train_model": {"device": "cuda"},
    }
    assert "said" not in made.record  # which ones are written is the run's, not the event's
    assert made.record["language"] == "zh-CN" and made.record["steps"] == ["load", "preprocess", "epoch"]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "shown"),
    [("加载 sub-01，按 0.5-2.5 秒分段", True), ("Load sub-01 and epoch it 0.5-2.5 s.", False)],
)
async def test_a_request_in_chinese_is_shown_each_steps_chinese_terms(
    scripted_server, study, question, shown
) -> None:
    """The step table the record is made from is English; for a request written in Chinese each
    step carries the field's Chinese words for it (分段 is epoching, 划分 a split), so a small
    model maps the request's words to the right step. An English request is shown none."""
    s = scripted_server
    s.queue("fc", record(["load", "epoch"]), DONE, DONE)
    s.queue("ans", Text("好的。"))
    await collect(agent(s, study).run(question))
    system = s.requests_for("fc")[0].messages[0]["content"]
    assert ("- epoch (分段, " in system) is shown and ("- split (划分, " in system) is shown
    assert "- epoch: cut epochs" in system or shown


async def test_a_number_is_kept_only_for_an_argument_of_the_unit_it_is_written_in(
    scripted_server, study
) -> None:
    """The real 1.5B model's records of "按 0.5-2.5 秒分段" fixed time_frequency's `freqs` [0.5,
    2.5] (seconds read as frequencies) and its `decim` 1 (the digit of "sub-01"), and a value
    kept for a tool asks for its step. The numbers are written, but in seconds: the record keeps
    them for epoch_data's tmin/tmax (in s) and drops the freqs (Hz); a name's digits are no
    value; and "500 毫秒" is kept as 0.5 s."""
    s = scripted_server
    fixed = {
        "epoch_data": {"tmin": 0.5, "tmax": 2.5},
        "time_frequency": {"freqs": [0.5, 2.5], "decim": 1},  # 1: the digit of sub-01
        "bandpass_filter": {"l_freq": 8, "h_freq": 30},
    }
    s.queue("fc", record(["load", "preprocess", "epoch"], fixed=fixed), DONE, DONE)
    s.queue("ans", Text("好的。"))
    events = await collect(agent(s, study).run("加载 sub-01，8-30 Hz 滤波，按 0.5-2.5 秒分段"))
    (made,) = of(events, "request_understood")
    assert made.record["fixed"] == {
        "epoch_data": {"tmin": 0.5, "tmax": 2.5},
        "bandpass_filter": {"l_freq": 8, "h_freq": 30},
    }
    assert "time_frequency" not in made.record["steps"]  # no value of it kept: not asked for
    s.queue("fc", record(["epoch"], fixed={"epoch_data": {"tmin": 0.5}}), DONE, DONE)
    s.queue("ans", Text("好的。"))
    events = await collect(agent(s, study).run("从提示后 500 毫秒开始分段"))
    (made,) = of(events, "request_understood")
    assert made.record["fixed"] == {"epoch_data": {"tmin": 0.5}}


async def test_a_server_that_refuses_the_record_schema_is_asked_in_text_and_remembered(
    scripted_server, study, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(habits, "FOLDER", tmp_path)
    s = scripted_server
    refused = Fault(status=400, message="response_format is not supported")
    s.queue("fc", refused, record(["load"]), DONE, DONE)
    s.queue("ans", Text("Loaded."))
    events = await collect(agent(s, study).run("Load sub-01."))
    held, text_form = s.requests_for("fc")[:2]
    assert is_record(held) and "response_format" not in text_form.params
    assert text_form.messages[-1]["content"].endswith("Reply with the JSON object only.")
    (made,) = of(events, "request_understood")
    assert made.how == "text" and made.record["steps"] == ["load"]
    assert habits.recall(spec(s, "fc", tool_calling="prompt")) == {"record_format": "text"}
    # the next run asks in text at once
    s.queue("fc", record(["load"]), DONE, DONE)
    s.queue("ans", Text("Loaded."))
    count = len(s.requests_for("fc"))
    await collect(agent(s, study).run("Load sub-01."))
    first = s.requests_for("fc")[count]
    assert "response_format" not in first.params
    assert first.messages[-1]["content"].endswith("Reply with the JSON object only.")


async def test_an_unreadable_record_says_why_and_the_run_goes_on(scripted_server, study) -> None:
    s = scripted_server
    s.queue("fc", Text("I will load the data now."), DONE)
    s.queue("ans", Text("Nothing ran."))
    events = await collect(agent(s, study).run("Load sub-01."))
    (made,) = of(events, "request_understood")
    assert made.record is None and made.problem == "the reply held no readable record"
    assert of(events, "run_finished")[0].reason == "answered"


async def test_a_request_too_long_for_the_window_gets_no_record(scripted_server, study) -> None:
    """The record's request must fit the model's window like every other: a request that does
    not fit beside the record's instructions is not sent, the event says why, and the run goes
    on without a record (no rule reads one)."""
    s = scripted_server
    s.queue("fc", DONE)
    s.queue("ans", Text("Too long to guide."))
    question = "Load sub-01 and filter it. " + "Some context about the study. " * 35
    events = await collect(agent(s, study, context_window=2048).run(question))
    (made,) = of(events, "request_understood")
    assert made.record is None and "too long for the model's window" in made.problem
    assert not any(is_record(r) for r in s.requests_for("fc"))
    assert of(events, "run_finished")


def test_the_record_schema_closes_steps_and_tools_to_those_that_exist() -> None:
    from brainchat.agent.record import schema

    made = schema(["load", "preprocess"], ["load_data", "bandpass_filter"])
    props = made["properties"]
    assert props["steps"]["items"]["enum"] == ["load", "preprocess"]
    assert set(props["fixed"]["properties"]) == {"load_data", "bandpass_filter"}
    assert props["fixed"]["additionalProperties"] is False
    assert set(made["required"]) == set(RequestRecord.model_fields) - {"said"}
