"""Once the request's own steps are done, a further pipeline step nobody asked for is not run,
and the model is told so and goes on.

A guided model (one that calls tools through the prompt) first makes a record of the request
(agent/record.py): the steps it asks for, by their ids in the EEG workflow table
(eeg/guidance/steps.py). The `AskedSteps` guard (agent/guided.py) reads that record, never the
request's words: while an asked step is not done every call runs; once each asked step has
succeeded (with no failure of one since) a step the record does not name is refused with the
reason, and the run goes on; steps that only report (a listing, the study's state, an
evaluation, a cross-validation) run anyway, a plot only when the record asks for a figure; a
round that adds nothing after that ends the loop. A strong model calling tools natively gets
none of this (a minimal profile): its calls run as sent.

A small model's replies (Qwen2.5-Coder-1.5B: every call in one fenced block, or a step past the
asked ones) are replayed through the scripted server over real HTTP, against the real EEG tools.
"""

from __future__ import annotations

import json

import pytest

from brainchat.agent.guided import AskedSteps
from brainchat.agent.record import RequestRecord
from brainchat.agent.state import RunContext
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.usage import UsageCallback, UsageLedger

from support import collect, eeg_agent, is_record, of, record

LIMITS = AgentLimits(evaluation="model", max_execution_time=120)


def fenced(name: str, arguments: dict) -> str:
    """One call as the 1.5B model writes it at temperature 0."""
    return f"```json\n{json.dumps({'name': name, 'arguments': arguments})}\n```"


# verbatim: the model's load once the listing was in its request
LOAD = (
    "```json\n"
    '{"name": "load_data", "arguments": {"files": ["demo/sub-01_ses-01_task-mi_eeg.edf", '
    '"demo/sub-01_ses-02_task-mi_eeg.edf"]}}\n```'
)
BANDPASS = fenced("bandpass_filter", {"l_freq": 8, "h_freq": 30})
EPOCH = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})
SPLIT = fenced("split_dataset", {"by": "trial"})
BOTH = ["demo/sub-01_ses-01_task-mi_eeg.edf", "demo/sub-01_ses-02_task-mi_eeg.edf"]
LOAD_BOTH = "Load both sessions of sub-01."


def batch(*calls: str) -> str:
    """Several calls in one fenced block, one per line: the 1.5B model's usual form."""
    return (
        "```json\n"
        + "\n".join(c.removeprefix("```json\n").removesuffix("\n```") for c in calls)
        + "\n```"
    )


def agent(server, study, *, tool_calling="prompt", guidance="auto", limits=LIMITS):
    """As the app's session builds it (support.eeg_agent). Prompt tool calling with guidance
    `auto` is the guided profile."""
    return eeg_agent(server, study, limits, tool_calling=tool_calling, guidance=guidance)


@pytest.fixture
def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(data)


def ran(events) -> list[tuple[str, str]]:
    return [(e.name, e.status) for e in of(events, "tool_finished")]


def refusal(events, name: str) -> str:
    (refused,) = [e for e in of(events, "tool_finished") if e.name == name]
    assert refused.status == "refused"
    return refused.error


NOT_ASKED = "not run: the request does not ask for {}, and every step it asks for (load_data) is done"  # fmt: skip


async def test_a_load_request_does_not_epoch_and_the_run_goes_to_the_answer(scripted_server, study):
    s = scripted_server
    s.queue("fc", record(["load"]), Text(LOAD), Text(EPOCH))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run(LOAD_BOTH))
    assert is_record(s.requests_for("fc")[0])  # the record came first
    assert ran(events) == [
        ("list_data_files", "success"), ("load_data", "success"), ("epoch_data", "refused")
    ]  # fmt: skip
    assert study.state.stage == "loaded"  # not epoched behind the user's back
    assert refusal(events, "epoch_data").startswith(NOT_ASKED.format("epoch_data"))
    # the round ran nothing new and the asked step is done: the answer, told why the step was
    # not run, and no "the loop was cut" instruction for a small model to repeat
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    told = json.dumps(s.requests_for("ans")[0].messages)
    assert "not run: the request does not ask for epoch_data" in told
    assert "loop detection" not in told
    assert of(events, "run_finished")[0].reason == "answered"


async def test_a_repeat_after_the_asked_steps_ends_the_run_as_answered_not_as_a_loop(
    scripted_server, study
):
    """The 1.5B model listed the folder twice, loaded both files, then sent the load again.
    The repeats count toward loop detection, but every asked step is done and the round added
    nothing: the run answers as done. A loop stop would tell the answer model that steps of the
    request remain (the small model echoed that instruction as its answer)."""
    s = scripted_server
    listing = Text(fenced("list_data_files", {"pattern": "*.edf"}))
    s.queue("fc", record(["load"], positions=[1, -1]), listing, listing, Text(LOAD), Text(LOAD))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load the first and the last session of sub-01."))
    assert ran(events)[-2:] == [("load_data", "success"), ("load_data", "skipped")]
    assert of(events, "run_finished")[0].reason == "answered"
    assert not [n for n in of(events, "notice") if n.kind == "loop"]
    told = s.requests_for("ans")[0].messages[-1]["content"]
    assert "loop detection" not in told and "remain" not in told


async def test_a_round_that_only_reads_what_is_there_after_the_asked_steps_answers(
    scripted_server, study
):
    """Once the asked load is done, the model reads the study's state, then would list the
    folder (Qwen2.5-Coder-1.5B, a Chinese leave-one-subject-out request): the state read ran (a
    report is never refused) and told the model nothing the request asks for, so the run
    answers after that round, and the model is not asked for another."""
    s = scripted_server
    state = Text(fenced("get_study_state", {}))
    s.queue("fc", record(["load"], positions=[1, -1]), Text(LOAD), state)
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load the first and the last session of sub-01."))
    assert ran(events)[-2:] == [("load_data", "success"), ("get_study_state", "success")]
    reason = of(events, "evaluation")[-1].reason
    assert "every step the request asks for is done" in reason
    assert "this round only read what is there (get_study_state)" in reason
    assert of(events, "run_finished")[0].reason == "answered"
    assert len(s.requests_for("fc")) == 3  # the record, the load, the state read


async def test_a_report_the_request_asks_for_is_no_idle_round(scripted_server, study):
    """A request for the load and the study's state: the state read is an asked step, so the
    round that ran it is no reason to stop before the model says it is done."""
    s = scripted_server
    state = Text(fenced("get_study_state", {}))
    s.queue("fc", record(["load", "inspect"], positions=[1, -1]), Text(LOAD), state, Text("Done."))
    s.queue("ans", Text("Both sessions of sub-01 are loaded: 22 channels."))
    events = await collect(agent(s, study).run("Load the first and the last session, and describe them."))  # fmt: skip
    assert ("get_study_state", "success") in ran(events)
    assert len(s.requests_for("fc")) == 4  # the record, the load, the state read, "Done."


async def test_a_limit_reached_after_the_asked_steps_does_not_say_steps_remain(
    scripted_server, study
):
    """The time limit cut the model's next thought after both files were loaded: the answer
    model is told of the limit, but not that steps of the request remain, for none do."""
    s = scripted_server
    slow = Text(fenced("get_study_state", {}), ttft=10.0)
    s.queue("fc", record(["load"], positions=[1, -1]), Text(LOAD), slow)
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    quick = AgentLimits(evaluation="model", max_execution_time=4)
    events = await collect(agent(s, study, limits=quick).run("Load the first and the last session of sub-01."))  # fmt: skip
    assert ("load_data", "success") in ran(events)
    assert of(events, "run_finished")[0].reason == "timeout"
    told = s.requests_for("ans")[0].messages[-1]["content"]
    assert "remain" not in told and "Asked for but never run" not in told


async def test_named_files_are_not_sent_back_for_a_subject_the_request_writes(
    scripted_server, study
):
    """The request writes "sub-01" and the record fixes load_data's `subjects` selector; the
    model names sub-01's two files. BIDS selectors select nothing beside named files (the
    tool's own repair drops them), so a suggestion adding one would change nothing: the load
    runs as sent (the 1.5B model, sent back for it, gave up without loading)."""
    s = scripted_server
    fixed = {"load_data": {"subjects": ["sub-01"]}}
    s.queue("fc", record(["load"], language="zh-CN", fixed=fixed), Text(LOAD), Text("完成。"))
    s.queue("ans", Text("已加载 sub-01 的两个会话。"))
    events = await collect(agent(s, study).run("加载 sub-01 的两个会话"))
    assert ran(events) == [("list_data_files", "success"), ("load_data", "success")]
    assert study.state.stage == "loaded"


async def test_a_native_model_is_not_held_back(scripted_server, study):
    """A minimal profile (native tool calling, guidance auto): no record is made, nothing is
    listed first, and a step past the asked ones runs as sent."""
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": BOTH})]))
    s.queue("fc", ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]), Text("Done."))
    s.queue("ans", Text("Loaded and epoched."))
    events = await collect(agent(s, study, tool_calling="native").run(LOAD_BOTH))
    assert ran(events) == [("load_data", "success"), ("epoch_data", "success")]
    assert study.state.stage == "epoched"
    assert not any("response_format" in r.params for r in s.requests_for("fc"))
    started = [(e.name, e.args) for e in of(events, "tool_call_started")]
    assert started[1] == ("epoch_data", {"tmin": 0.5, "tmax": 2.5})  # not rewritten


async def test_an_empty_block_after_the_asked_steps_goes_to_the_answer(scripted_server, study):
    """After the load, a small model wrote an empty ```json block: it adds nothing, the asked
    step is done, and the run answers instead of asking again until the loop stop."""
    s = scripted_server
    s.queue("fc", record(["load"]), Text(LOAD), Text("```json\n```"))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run(LOAD_BOTH))
    assert [st for _, st in ran(events)] == ["success", "success", "error"]
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    assert of(events, "run_finished")[0].reason == "answered"


async def test_calls_in_one_reply_past_the_asked_step_are_refused_one_by_one(
    scripted_server, study
):
    """The model's usual form: every call in one fenced block. The load runs; the epoching and
    the split after it, which nobody asked for, do not."""
    s = scripted_server
    s.queue("fc", record(["load"]), Text(batch(LOAD, EPOCH, SPLIT)), Text("Loaded."))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run(LOAD_BOTH))
    assert ran(events)[1:] == [
        ("load_data", "success"), ("epoch_data", "refused"), ("split_dataset", "refused")
    ]  # fmt: skip
    assert refusal(events, "split_dataset").startswith(NOT_ASKED.format("split_dataset"))
    assert study.state.stage == "loaded"


async def test_a_named_pipeline_runs_to_its_last_asked_step_and_no_further(scripted_server, study):
    """Steps nobody named still run while the request's own are not all done (a band-pass
    before the asked epoching here); once the epochs exist, the split is not run."""
    s = scripted_server
    asked = record(["load", "epoch"], fixed={"epoch_data": {"tmin": 0.5, "tmax": 2.5}})
    s.queue("fc", asked, Text(LOAD), Text(BANDPASS), Text(EPOCH), Text(SPLIT))
    s.queue("ans", Text("Loaded, filtered and epoched."))
    events = await collect(agent(s, study).run("Load both files, then epoch 0.5-2.5 s."))
    assert ran(events)[1:] == [
        ("load_data", "success"), ("bandpass_filter", "success"), ("epoch_data", "success"),
        ("split_dataset", "refused"),
    ]  # fmt: skip
    assert study.state.stage == "epoched"
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason


async def test_after_a_failure_of_an_asked_call_the_next_step_runs(scripted_server, study):
    """The asked steps succeeded, but an asked-for call failed after them (a reload with a bad
    name, in the same reply): the step after it runs."""
    s = scripted_server
    bad = fenced("load_data", {"files": ["demo/sub-09_ses-01_task-mi_eeg.edf"]})  # no such file
    s.queue("fc", record(["load"]), Text(LOAD), Text(batch(bad, EPOCH)), Text("Done."))
    s.queue("ans", Text("Loaded and epoched."))
    events = await collect(agent(s, study).run(LOAD_BOTH))
    assert [st for n, st in ran(events) if n == "load_data"] == ["success", "error"]
    assert ("epoch_data", "success") in ran(events) and study.state.stage == "epoched"


async def test_a_record_naming_no_step_holds_nothing_back(scripted_server, study):
    """ "the loaded recordings" describes the study, it does not ask to load: the record names
    no step, so nothing is listed first and nothing is refused (a load, then an epoching)."""
    s = scripted_server
    s.queue("fc", record([], needs_tools=True), Text(LOAD), Text(EPOCH), Text("Done."))
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study).run("What do the loaded recordings look like?"))
    assert ran(events) == [("load_data", "success"), ("epoch_data", "success")]
    assert study.state.stage == "epoched"


def run_with(steps: list[str], done: list[str], *, plot: bool = False) -> RunContext:
    """A run whose record asks for `steps` and whose ledger has `done` succeeded, in order."""
    usage = UsageLedger({})
    run = RunContext(
        question="", started=0.0, deadline=1e9, usage=usage, callback=UsageCallback(usage)
    )
    run.record = RequestRecord(steps=steps, plot=plot)
    for i, name in enumerate(done):
        run.ledger.open(f"c{i}", name, {}, i + 1).finish("success", result=f"{name} ok")
    return run


@pytest.mark.parametrize(
    ("steps", "done", "call", "refused"),
    [
        (["load"], ["load_data"], "epoch_data", True),
        (["load", "epoch"], ["load_data"], "epoch_data", False),  # asked
        (["load", "evaluate"], ["load_data"], "epoch_data", False),  # evaluate not done yet
        (["load"], ["load_data", "bandpass_filter"], "epoch_data", True),
        (["load", "preprocess"], ["load_data"], "bandpass_filter", False),
        (["load", "cross_validate"], ["load_data"], "epoch_data", False),  # cv not done yet
        (["load"], [], "epoch_data", False),  # the asked step is not done: nothing held back
        (["load"], ["load_data"], "evaluate_model", False),  # reports, changes nothing
        (["load"], ["load_data"], "cross_validate", False),
        (["load"], ["load_data"], "list_data_files", False),
        (["load"], ["load_data"], "get_study_state", False),
        ([], ["load_data"], "epoch_data", False),  # a record naming no step holds nothing back
        (["load"], ["load_data"], "web_search", False),  # no step of the workflow
    ],
)
def test_which_steps_are_held_back(scripted_server, study, steps, done, call, refused) -> None:
    """The guard's table, one call at a time: wide on purpose, since a step wrongly held back
    is a step the user asked for that never runs."""
    d = agent(scripted_server, study).deps
    decision = AskedSteps().before_tool(d, run_with(steps, done), {"name": call, "args": {}})
    assert (decision is not None) is refused, decision


async def test_a_failed_call_nobody_asked_for_opens_nothing(scripted_server, study):
    """After the asked-for load, a small model called evaluate_model ("no epochs yet: call
    epoch_data first"), then epoch_data. Only a failure of a call the request asks for lets the
    step its error points to run."""
    s = scripted_server
    s.queue("fc", record(["load"]), Text(LOAD), Text(batch(fenced("evaluate_model", {}), EPOCH)))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run(LOAD_BOTH))
    assert ran(events)[1:] == [
        ("load_data", "success"), ("evaluate_model", "error"), ("epoch_data", "refused")
    ]  # fmt: skip
    assert study.state.stage == "loaded"


async def test_a_failed_call_outside_the_pipeline_does_not_end_the_run(scripted_server, study):
    """The request asks for more than its pipeline steps (a plot): once the load is done, a
    failed plot is work still to do, and the model's next try runs."""
    s = scripted_server
    bad = fenced("plot_raw", {"file": "demo/nope.edf"})
    s.queue("fc", record(["load", "plot"], plot=True), Text(LOAD), Text(bad))
    s.queue("fc", Text(fenced("plot_raw", {})), Text("Done."))
    s.queue("ans", Text("Loaded and plotted."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01 and plot them."))
    assert [st for n, st in ran(events) if n == "plot_raw"] == ["error", "success"]


async def test_a_question_about_which_files_there_are_is_answered_by_the_listing(
    scripted_server, study
):
    """After brainchat's listing a small model loaded both files, which a question about which
    files there are does not ask for: the study stays empty."""
    s = scripted_server
    s.queue("fc", record(["list"], listing=True), Text(LOAD))
    s.queue("ans", Text("Two files: sub-01 sessions 01 and 02."))
    events = await collect(agent(s, study).run("Which EEG files are in my data folder?"))
    assert ran(events) == [("list_data_files", "success"), ("load_data", "refused")]
    assert study.state.stage == "empty"
    assert refusal(events, "load_data").startswith(
        "not run: the request does not ask for load_data, and every step it asks for "
        "(list_data_files) is done"
    )
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason


@pytest.mark.parametrize(
    ("question", "steps"),
    [
        ("Which EEG files are there, and what is in them?", ["list", "load"]),  # contents: a load
        ("Load the files in my data folder", ["load"]),
    ],
)
async def test_a_question_about_what_the_files_hold_still_loads(
    scripted_server, study, question, steps
):
    s = scripted_server
    s.queue("fc", record(steps, listing=True), Text(LOAD), Text("Loaded."))
    s.queue("ans", Text("Two files, loaded."))
    events = await collect(agent(s, study).run(question))
    assert ("load_data", "success") in ran(events) and study.state.stage == "loaded"


# after the asked steps a small model drew the raw traces, a PSD and a topomap, one per round,
# and ran past the limit of model calls; the first of them as it wrote it
PLOT_AFTER = fenced(
    "plot_raw",
    {
        "channels": ["C3", "Cz", "C4"],
        "start": 0.0,
        "duration": 10.0,
        "file": "demo/sub-01_ses-01_task-mi_eeg.edf",
    },
)  # fmt: skip


async def test_a_plot_nobody_asked_for_after_the_asked_steps_is_not_drawn(scripted_server, study):
    s = scripted_server
    s.queue("fc", record(["load"]), Text(LOAD), Text(PLOT_AFTER))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run(LOAD_BOTH))
    assert ran(events)[1:] == [("load_data", "success"), ("plot_raw", "refused")]
    assert not of(events, "tool_image")  # nothing drawn
    assert refusal(events, "plot_raw").startswith(NOT_ASKED.format("plot_raw"))
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    # the record and two decide rounds: answered after the refused plot, no third round
    assert len(s.requests_for("fc")) == 3


@pytest.mark.parametrize(
    ("steps", "plot", "refused"),
    [
        (["cross_validate"], False, True),  # no figure asked for
        (["cross_validate"], True, False),  # "... and show the PSD"
        (["list"], False, False),  # the listing not done: holds nothing back
    ],
)
def test_a_plot_after_the_asked_steps_runs_only_when_asked(
    scripted_server, study, steps, plot, refused
) -> None:
    d = agent(scripted_server, study).deps
    call = {"name": "plot_psd", "args": {}}
    after = run_with(steps, ["cross_validate"], plot=plot)
    assert (AskedSteps().before_tool(d, after, call) is not None) is refused
    # before the asked step has succeeded a plot is never held back
    assert AskedSteps().before_tool(d, run_with(steps, [], plot=plot), call) is None


TRAIN = fenced("train_model", {"model": "csp_lda"})


async def test_a_model_that_stops_short_of_the_asked_test_has_brainchat_run_it(
    scripted_server, study
):
    """The 1.5B model trained CSP+LDA and stopped, writing an accuracy no tool had computed.
    The record asks for the evaluation, a report whose arguments are optional: brainchat runs
    it (once, shown as a round with a notice), and the model reads its result before it is asked
    whether it needs more. An earlier stop, before there was a model to test (reminded of the
    training), does not use up that one evaluation."""
    s = scripted_server
    asked = record(
        ["load", "preprocess", "epoch", "split", "train", "evaluate"],
        fixed={"train_model": {"model": "csp_lda"}},
    )
    early = Text(json.dumps({"done": "Split; training the CSP+LDA model next."}))
    stops = Text(json.dumps({"done": "Trained; the accuracy is 1.00."}))
    s.queue("fc", asked, Text(LOAD), Text(BANDPASS), Text(EPOCH), Text(SPLIT), early, Text(TRAIN), stops, Text("Done."))  # fmt: skip
    s.queue("ans", Text("The test accuracy is as evaluate_model reports."))
    question = "Load both sessions, band-pass 8-30 Hz, epoch, split by trial, train CSP+LDA and test it."  # fmt: skip
    events = await collect(agent(s, study).run(question))
    assert [name for name, status in ran(events)][-2:] == ["train_model", "evaluate_model"]
    assert ran(events)[-1] == ("evaluate_model", "success")
    (started,) = [e for e in of(events, "tool_call_started") if e.name == "evaluate_model"]
    assert started.call_id.startswith("brainchat_close") and started.args == {}
    assert any("brainchat called evaluate_model" in n.message for n in of(events, "notice"))
    # the model read the evaluation before its last word
    (result,) = [e.content for e in of(events, "tool_finished") if e.name == "evaluate_model"]
    last = "\n".join(str(m["content"]) for m in s.requests_for("fc")[-1].messages)
    assert result.splitlines()[0] in last
    assert of(events, "run_finished")[0].reason == "answered"


async def test_a_native_model_that_stops_is_left_to_stop(scripted_server, study):
    """A minimal profile makes no record: nothing is run for it."""
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": BOTH})]), Text("Loaded; accuracy 1.0."))
    s.queue("ans", Text("Loaded."))
    events = await collect(agent(s, study, tool_calling="native").run("Load both sessions and test CSP+LDA."))  # fmt: skip
    assert [name for name, _ in ran(events)] == ["load_data"]
