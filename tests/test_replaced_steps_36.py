"""A record that lists a split, a training and a test beside a cross-validation is guided to
the cross-validation first, and the steps its folds did are not pushed after it (#36).

Asked "Does a CSP+LDA decoder generalise across sessions? ..." on an epoched study, the real
1.5B model's record listed `["load", "preprocess", "epoch", "split", "cross_validate"]` (and
`["preprocess", "epoch", "cross_validate", "evaluate"]` for a within-session comparison). The
next-step note walked the asked steps in workflow order, so brainchat itself told the model
"Next step for this request: split_dataset"; the model split (the scenario's "split_dataset
must not be called"), and after its cross-validation the note and the reminder pushed the split,
training and test again, and brainchat's closing round called evaluate_model. A step that does
others itself (`replaces` in eeg/guidance/steps.py) now comes first in the note, and once it
succeeded the steps it does are no longer asked of the model. Nothing is refused: a model that
splits anyway is let through (the record lists the split). Replayed through the scripted server
over real HTTP, against the real EEG tools on demo data."""

from __future__ import annotations

import pytest

from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.testing.scripted_server import Text
from test_unasked_steps import agent, fenced

from support import collect, of, record

ACROSS = (
    "Does a CSP+LDA decoder generalise across sessions? Check it on the loaded recordings and "
    "give me its chance level and p-value."
)
CROSSVAL = fenced(
    "cross_validate", {"protocol": "cross_session", "pipelines": ["csp_lda"], "permutations": 0}
)
# the record as the 1.5B model made it: the cross-validation's own parts listed beside it
WHOLE = record(
    ["load", "preprocess", "epoch", "split", "cross_validate"],
    fixed={"cross_validate": {"protocol": "cross_session"}},
)


@pytest.fixture
async def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=12, seed=1)
    study = Study(data)
    tools = {t.name: t for t in build_eeg_tools(study)}
    files = [f"demo/sub-01_ses-0{i}_task-mi_eeg.edf" for i in (1, 2)]
    await tools["load_data"].ainvoke({"files": files})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    return study


def notes(server) -> list[str]:
    """The last message of each decide request (the next-step note or reminder)."""
    return [str(r.messages[-1]["content"]) for r in server.requests_for("fc")[1:]]


async def test_the_cross_validation_is_the_next_step_and_nothing_follows_it(scripted_server, study):
    s = scripted_server
    s.queue("fc", WHOLE, Text(CROSSVAL), Text("Done."))
    s.queue("ans", Text("Across sessions CSP+LDA scores as cross_validate reports."))
    events = await collect(agent(s, study).run(ACROSS))
    ran = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert ran == [("cross_validate", "success")]  # no closing evaluation, no split
    told = notes(s)
    assert told[0].startswith("(Study stage: epoched. Next step for this request: cross_validate")
    # after it: no split, training or test is pushed or reminded
    assert not any("split_dataset" in n or "Not done yet" in n for n in told[1:]), told
    assert of(events, "run_finished")[0].reason == "answered"
    assert study.state.stage == "epoched" and not study.state.models


async def test_a_split_the_record_lists_is_still_let_through(scripted_server, study):
    """Guidance, not a refusal: the record lists the split, so a model that splits first runs."""
    s = scripted_server
    s.queue("fc", WHOLE, Text(fenced("split_dataset", {"by": "session"})), Text(CROSSVAL))
    s.queue("fc", Text("Done."))
    s.queue("ans", Text("Across sessions CSP+LDA scores as cross_validate reports."))
    events = await collect(agent(s, study).run(ACROSS))
    ran = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert ran == [("split_dataset", "success"), ("cross_validate", "success")]
    # after the split the note still points at the cross-validation
    assert "Next step for this request: cross_validate" in notes(s)[1]


@pytest.mark.parametrize(
    ("asked", "stage", "done", "first"),
    [
        (["split", "cross_validate"], "epoched", set(), "cross_validate"),
        (["split", "train", "evaluate", "cross_validate"], "epoched", set(), "cross_validate"),
        (["cross_validate", "evaluate"], "epoched", set(), "cross_validate"),
        # its prerequisites still come first: nothing to cross-validate before the epochs
        (["load", "epoch", "split", "cross_validate"], "empty", set(), "load_data"),
        (["epoch", "split", "cross_validate"], "loaded", set(), "epoch_data"),
        # no cross-validation asked: the split leads as before
        (["split", "train", "evaluate"], "epoched", set(), "split_dataset"),
    ],
)
def test_which_call_the_note_names_first(asked, stage, done, first) -> None:
    step = EEG.next_call(asked, {"stage": stage}, done, {})
    assert step is not None and step.split(" ")[0] == first, step


def one_model_agent(server, study, limits):
    """As support.eeg_agent builds it, with one model "m" in both roles (the bench's set-up: the
    answer's speed is then measured from the function-call replies)."""
    from brainchat.agent.graph import build_agent
    from brainchat.llm import make_chat_model
    from brainchat.session.study_slot import study_facts
    from brainchat.session.toolbox import eeg_rule

    from support import spec

    tools = build_eeg_tools(study)
    m = spec(server, "m", tool_calling="prompt", guidance="auto")
    return build_agent(
        make_chat_model(m, "function_call"),
        make_chat_model(m, "answer"),
        tools,
        limits,
        specs={"function_call": m, "answer": m},
        context=study.summary,
        facts=lambda: study_facts(study),
        hidden=eeg_rule(study, [t.name for t in tools]),
        domain=EEG,
    )


async def test_a_schema_held_reply_measures_no_writing_speed(scripted_server, study):
    """A guided model's replies held to a JSON schema come whole (not streamed), so their time
    holds the prompt's reading too: the real 1.5B model's one call of ~30 tokens after a
    1,500-token prompt, on two busy cores, "measured" 0.4 tokens/s, and brainchat kept half
    the run for an answer it then judged too slow to write (`about 1017 s`): the run ended at
    150 s of 300 with brainchat's own list of facts instead of the model's answer (three
    cross-validation scenarios). Such a reply now tells no speed; the model answers."""
    from brainchat.settings import AgentLimits

    s = scripted_server
    # each whole reply arrives after 2 s, as a long prompt's would, with the model's ~30 tokens
    slow = {"ttft": 2.0, "completion_tokens": 30}
    s.queue("m", WHOLE, Text(CROSSVAL, **slow), Text("Done.", **slow))
    s.queue("m", Text("Across sessions CSP+LDA scores as cross_validate reports."))
    limits = AgentLimits(evaluation="model", max_execution_time=30)
    events = await collect(one_model_agent(s, study, limits).run(ACROSS))
    assert [e.name for e in of(events, "tool_finished")] == ["cross_validate"]
    assert not [n for n in of(events, "notice") if n.kind == "timeout"]
    assert of(events, "run_finished")[0].reason == "answered"
    assert "cross_validate reports" in of(events, "run_finished")[0].answer


async def test_the_answer_request_shows_how_to_cite_right_after_the_sources(
    scripted_server, tmp_path
):
    """Told to cite only in the sources' header, the real 1.5B answer model wrote "EEGNet ...
    uses depthwise and separable convolutions" from source [1] and cited nothing (the golden
    search scenario's "the answer cites no source"). The answer request now ends its sources
    with the form a citing sentence takes, numbered as the first source is."""
    from brainchat.agent.graph import build_agent
    from brainchat.llm import make_chat_model
    from brainchat.settings import AgentLimits
    from brainchat.testing.scripted_server import Call, ToolCalls
    from brainchat.tools.search import FixtureBackend, make_search_tool

    from support import spec, write_fixture

    s = scripted_server
    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})
    s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet"})]), Text("Enough."))
    s.queue("ans", Text("EEGNet uses depthwise convolutions [1]."))
    fc = make_chat_model(spec(s, "fc"), "function_call")
    ans = make_chat_model(spec(s, "ans"), "answer")
    agent_ = build_agent(fc, ans, [search], AgentLimits(evaluation="model"))
    await collect(agent_.run("What kind of convolutions does EEGNet use? Cite your sources."))
    text = str(s.requests_for("ans")[-1].messages[-1]["content"])
    sources = text.index("Web sources (cite as [n]")
    how = text.index('A sentence that uses a source ends with its number: "... [1]."')
    assert how > text.rindex("\n[", 0, how) > sources  # after the last source listed
    # what each source says sits next to its number; its title follows as where it is from
    said = "[1] EEGNet uses depthwise and separable convolutions for EEG decoding."
    assert said in text and "(from: EEGNet: a compact CNN for EEG-based BCIs — " in text
    # the sources' specifics, not a title and a number (the 1.5B model's "EEGNet is a compact
    # CNN for EEG-based BCIs, as reported [1]." dropped the convolutions the request asked for)
    assert "their specifics (names, methods, figures) included, not their titles alone" in text


ACROSS_ZH = "CSP+LDA 解码器能跨会话泛化吗？请在已加载的记录上检验，并告诉我它的机会水平和 p 值。"


async def test_a_value_the_record_chose_is_not_pushed_again_after_its_tool_refuted_it(
    scripted_server, study
):
    """Asked in Chinese whether a decoder generalises across sessions, the real 1.5B model's
    record held `train_model: {"device": "cuda"}` (a choice among the tool's values, written
    nowhere in the request). The next-step note named it; train_model failed ("no CUDA GPU is
    available; use 'auto' or 'cpu'"), the note named it again, and the model repeated the call
    until the loop detector ended the run. Once a failed call carried it, the note drops it."""
    s = scripted_server
    cuda = fenced("train_model", {"model": "csp_lda", "device": "cuda"})
    made = record(
        ["load", "epoch", "train", "evaluate"],
        language="zh-CN",
        fixed={"train_model": {"device": "cuda"}},
    )
    s.queue("fc", made, Text(fenced("split_dataset", {"by": "session"})), Text(cuda))
    s.queue("fc", Text(fenced("train_model", {"model": "csp_lda"})))
    s.queue("fc", Text(fenced("evaluate_model", {"model": "csp_lda"})), Text("Done."))
    s.queue("ans", Text("CSP+LDA 的结果见评估。"))
    events = await collect(agent(s, study).run(ACROSS_ZH))
    ran = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert ran[:3] == [
        ("split_dataset", "success"), ("train_model", "error"), ("train_model", "success")
    ]  # fmt: skip
    told = notes(s)
    # before the failure the record's choice guides the note; after it, it is left out
    assert 'train_model with {"device": "cuda"}' in told[1]
    assert "Next step for this request: train_model." in told[2], told[2]
    assert "cuda" not in told[2]


NEW_SUBJECT = "Would a CSP+LDA decoder trained on these recordings work on a new session?"


async def test_a_step_whose_call_was_declined_is_asked_no_more(scripted_server, study):
    """The real 1.5B model's record of a generalisation question listed a split, a training, a
    test and `clear`; the model split, trained and tested, then sent clear_study, which needs
    approval and was not approved, and the note kept naming the step, so the model sent it
    again to the loop limit. A step whose call was declined is settled: the user said no. The
    run answers once the other steps are done, and no note or reminder names it again."""
    s = scripted_server
    made = record(["split", "train", "evaluate", "clear"])
    s.queue("fc", made, Text(fenced("split_dataset", {"by": "session"})))
    s.queue("fc", Text(fenced("train_model", {"model": "csp_lda"})))
    s.queue("fc", Text(fenced("evaluate_model", {"model": "csp_lda"})))
    s.queue("fc", Text(fenced("clear_study", {})))
    s.queue("ans", Text("CSP+LDA was tested on the held-out session; the study was kept."))
    events = await collect(agent(s, study).run(NEW_SUBJECT))
    ran = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert ran == [
        ("split_dataset", "success"), ("train_model", "success"),
        ("evaluate_model", "success"), ("clear_study", "refused"),
    ]  # fmt: skip
    told = notes(s)
    # the round that was declined is the last: the run answers at once
    assert len(told) == 4 and told[3].endswith("Next step for this request: clear_study.)")
    assert of(events, "run_finished")[0].reason == "answered"
    assert study.state.stage != "empty"
    asked = str(s.requests_for("ans")[-1].messages[-1]["content"])
    assert "Not run, because it was not approved (say so): clear_study." in asked


async def test_a_request_whose_only_step_was_declined_is_answered_at_once(scripted_server, study):
    """Asked to throw the study away, the real 1.5B model sent clear_study, which was not
    approved, and then went on with calls nobody asked for (a load, plots, an epoching of the
    user's study). With the only asked step settled by the user's no, the run answers after that
    round."""
    s = scripted_server
    s.queue("fc", record(["clear"]), Text(fenced("clear_study", {})))
    s.queue("ans", Text("The study was not cleared: clearing it was not approved."))
    events = await collect(agent(s, study).run("Throw away everything in my study."))
    assert [(e.name, e.status) for e in of(events, "tool_finished")] == [("clear_study", "refused")]
    assert of(events, "run_finished")[0].reason == "answered"
    assert study.state.stage == "epoched"  # as it was
    asked = str(s.requests_for("ans")[-1].messages[-1]["content"])
    assert "Not run, because it was not approved (say so): clear_study." in asked


@pytest.mark.parametrize(
    ("steps", "stage", "opening"),
    [
        (["load"], "loaded", ["get_study_state"]),  # a load of a loaded study: what it holds
        (["load", "epoch"], "epoched", ["get_study_state"]),
        (["load", "epoch"], "loaded", []),  # the epochs are still to cut: no report first
        ([], "loaded", []),  # no step at all: nothing to read first
        (["load"], "empty", ["list_data_files"]),
    ],
)
def test_a_request_the_study_already_holds_reads_its_state_first(steps, stage, opening) -> None:
    """Asked "我的研究里现在有什么？" of a loaded study, the real 1.5B model's record named the
    step `load` (not `inspect`): the study held it, nothing was pushed, and the model answered
    from its prompt with no call (the golden scenario's "expected a call get_study_state")."""
    assert EEG.opening(steps, False, {"stage": stage}) == opening
