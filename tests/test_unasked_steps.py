"""Once the request's own steps are done, a further pipeline step nobody asked for is not run,
and the model is told so and goes on (issue #23, golden run of 2026-11-25): asked "Load both
sessions of sub-01." or "Load sub-01 ses-01, band-pass 8-30 Hz, then epoch 0.5-2.5 s.",
Qwen2.5-Coder-1.5B went on to epoch and split on its own, and both runs ended with the study at
`split`. A first version ended the run at such a call, and cut off the tool the request did ask
for after it (golden 2/12): here the run goes on. The replies are replayed in the form the model
writes them, through the scripted server over real HTTP, against the real EEG tools."""

from __future__ import annotations

import json

import pytest

from brainchat.agent.asked import unasked_step
from brainchat.agent.state import ToolLedger
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.testing.scripted_server import Text
from test_prompt_epoch_args import BANDPASS, fenced
from test_prompt_pipeline import LOAD, agent

from support import collect, of

EPOCH = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})
SPLIT = fenced("split_dataset", {"by": "trial"})


def batch(*calls: str) -> str:
    """Several calls in one fenced block, one per line: the 1.5B model's usual form."""
    return (
        "```json\n"
        + "\n".join(c.removeprefix("```json\n").removesuffix("\n```") for c in calls)
        + "\n```"
    )


@pytest.fixture
def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(data)


def ran(events) -> list[tuple[str, str]]:
    return [(e.name, e.status) for e in of(events, "tool_finished")]


async def test_a_load_request_does_not_epoch_and_the_run_goes_to_the_answer(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(EPOCH))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert ran(events) == [
        ("list_data_files", "success"), ("load_data", "success"), ("epoch_data", "refused")
    ]  # fmt: skip
    assert study.state.stage == "loaded"  # not epoched behind the user's back
    # the round ran nothing new and the asked step is done: the answer, told why the step was
    # not run, and no "the loop was cut" instruction for a small model to repeat
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    told = json.dumps(s.requests_for("ans")[0].messages)
    assert "not run: the request does not ask for epoch_data" in told
    assert "loop detection" not in told
    assert of(events, "run_finished")[0].reason == "answered"


async def test_an_empty_block_after_the_asked_steps_goes_to_the_answer(scripted_server, study):
    """Golden rerun of 25 Nov (eeg-load-both-sessions): after the load, an empty ```json block,
    then a call of the made-up tool 'invalid_tool_call', then the loop stop."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text("```json\n```"))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert [st for _, st in ran(events)] == ["success", "success", "error"]
    assert of(events, "run_finished")[0].reason == "answered"


async def test_calls_in_one_reply_past_the_asked_step_are_refused_one_by_one(
    scripted_server, study
):
    """The model's usual form: every call in one fenced block. The load runs; the epoching and
    the split after it, which nobody asked for, do not."""
    s = scripted_server
    batch = "\n".join(
        x.removeprefix("```json\n").removesuffix("\n```") for x in (LOAD, EPOCH, SPLIT)
    )
    s.queue("fc", Text(f"```json\n{batch}\n```"), Text("Loaded."))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert ran(events)[1:] == [
        ("load_data", "success"), ("epoch_data", "refused"), ("split_dataset", "refused")
    ]  # fmt: skip
    assert study.state.stage == "loaded"


async def test_a_named_pipeline_runs_to_its_last_asked_step_and_no_further(scripted_server, study):
    """Steps nobody named still run while the request's own are not all done (a band-pass
    before the asked epoching here); once the epochs exist, the split is not run."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS), Text(EPOCH), Text(SPLIT))
    s.queue("ans", Text("Loaded, filtered and epoched."))
    events = await collect(agent(s, study).run("Load both files, then epoch 0.5-2.5 s."))
    assert ran(events)[1:] == [
        ("load_data", "success"), ("bandpass_filter", "success"), ("epoch_data", "success"),
        ("split_dataset", "refused"),
    ]  # fmt: skip
    assert study.state.stage == "epoched"


async def test_after_a_failure_of_an_asked_call_the_next_step_runs(scripted_server, study):
    """The asked steps succeeded, but an asked-for call failed after them (a reload with a bad
    name, in the same reply): the step after it runs."""
    s = scripted_server
    bad = fenced("load_data", {"files": ["demo/sub-09_ses-01_task-mi_eeg.edf"]})  # no such file
    s.queue("fc", Text(LOAD), Text(batch(bad, EPOCH)), Text("Done."))
    s.queue("ans", Text("Loaded and epoched."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert [st for n, st in ran(events) if n == "load_data"] == ["success", "error"]
    assert ("epoch_data", "success") in ran(events) and study.state.stage == "epoched"


async def test_a_request_naming_no_step_holds_nothing_back(scripted_server, study):
    """ "the loaded recordings" describes the study, it does not ask to load: nothing is named,
    so nothing is refused (a reload, then the epoching the cross-validation needs)."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(EPOCH), Text("Done."))
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study).run("What do the loaded recordings look like?"))
    assert ("epoch_data", "success") in ran(events) and study.state.stage == "epoched"


@pytest.mark.parametrize(
    ("question", "call", "refused"),
    [
        ("Load both sessions of sub-01.", "epoch_data", True),
        ("Load sub-01 and cut it into trials from 0.5 to 2.5 s.", "epoch_data", False),
        ("Load sub-01 and tell me its test accuracy with CSP+LDA.", "epoch_data", False),
        ("Load sub-01, band-pass 8-30 Hz.", "epoch_data", True),
        ("Load sub-01 and filter it 8 to 30 Hz.", "bandpass_filter", False),
        ("Load sub-01 and check it across sessions.", "epoch_data", False),  # cross_validate
        ("Load sub-01.", "evaluate_model", False),  # reports, changes nothing
        ("Load sub-01.", "cross_validate", False),
        ("Load sub-01.", "list_data_files", False),  # not a pipeline step
    ],
)
def test_the_words_that_name_a_step(question: str, call: str, refused: bool) -> None:
    """Wide on purpose: a step wrongly taken as named only runs, one wrongly taken as unnamed
    would be refused."""
    ledger = ToolLedger()
    ledger.open("c1", "load_data", {"files": ["x.edf"]}, 1).finish("success", result="loaded")
    if "band-pass" in question:
        ledger.open("c2", "bandpass_filter", {}, 2).finish("success", result="filtered")
    assert bool(unasked_step(question, call, ledger.entries)) is refused


async def test_a_failed_call_nobody_asked_for_opens_nothing(scripted_server, study):
    """Golden run of 25 Nov (eeg-load-both-sessions): after the asked-for load, the model called
    evaluate_model ("no epochs yet: call epoch_data first"), then epoch_data. Only a failure of
    a call the request asks for lets the step its error points to run."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(batch(fenced("evaluate_model", {}), EPOCH)))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert ran(events)[1:] == [
        ("load_data", "success"), ("evaluate_model", "error"), ("epoch_data", "refused")
    ]  # fmt: skip
    assert study.state.stage == "loaded"


async def test_a_failed_call_outside_the_pipeline_does_not_end_the_run(scripted_server, study):
    """The request asks for more than its pipeline steps ("plot"): once the load is done, a
    failed plot is work still to do, and the model's next try runs."""
    s = scripted_server
    bad = fenced("plot_raw", {"file": "demo/nope.edf"})
    s.queue("fc", Text(LOAD), Text(bad), Text(fenced("plot_raw", {})), Text("Done."))
    s.queue("ans", Text("Loaded and plotted."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01 and plot them."))
    assert [st for n, st in ran(events) if n == "plot_raw"] == ["error", "success"]


# the golden run of 27 Nov (eeg-list-files, --keep): after brainchat's listing the 1.5B model
# loaded both files, verbatim, and the study was left loaded for a question about which files
# there are
LISTED_THEN_LOADED = LOAD


async def test_a_question_about_which_files_there_are_is_answered_by_the_listing(
    scripted_server, study
):
    s = scripted_server
    s.queue("fc", Text(LISTED_THEN_LOADED))
    s.queue("ans", Text("Two files: sub-01 sessions 01 and 02."))
    events = await collect(agent(s, study).run("Which EEG files are in my data folder?"))
    assert ran(events) == [("list_data_files", "success"), ("load_data", "refused")]
    assert study.state.stage == "empty"
    (refused,) = [e for e in of(events, "tool_finished") if e.status == "refused"]
    assert "asks which files there are, and list_data_files answered it" in refused.error
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason


@pytest.mark.parametrize(
    "question",
    [
        "Which EEG files are there, and what is in them?",  # their contents need a load
        "Load the files in my data folder",  # a load asked for
    ],
)
async def test_a_question_about_what_the_files_hold_still_loads(scripted_server, study, question):
    s = scripted_server
    s.queue("fc", Text(LISTED_THEN_LOADED), Text("Loaded."))
    s.queue("ans", Text("Two files, loaded."))
    events = await collect(agent(s, study).run(question))
    assert ("load_data", "success") in ran(events) and study.state.stage == "loaded"


# the golden run of 27 Nov (eeg-crossval-within-session, --keep): after the asked-for
# cross_validate the 1.5B model drew the raw traces, a PSD and a topomap, one per round, and ran
# past the scenario's limit of 3 model calls; the calls as it wrote them (after a load here)
PLOTS_AFTER = [
    fenced(
        "plot_raw",
        {
            "channels": ["C3", "Cz", "C4"],
            "start": 0.0,
            "duration": 10.0,
            "file": "demo/sub-01_ses-01_task-mi_eeg.edf",
        },
    ),  # fmt: skip
]


async def test_a_plot_nobody_asked_for_after_the_asked_steps_is_not_drawn(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(PLOTS_AFTER[0]))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert ran(events)[1:] == [("load_data", "success"), ("plot_raw", "refused")]
    assert not of(events, "tool_image")  # nothing drawn
    (refused,) = [e for e in of(events, "tool_finished") if e.status == "refused"]
    assert "the request asks for no plot" in refused.error
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    assert len(s.requests_for("fc")) == 2  # answered after the refused plot, no third round


@pytest.mark.parametrize(
    ("question", "refused"),
    [
        ("Cross-validate CSP+LDA against TS+LR within each session.", True),  # the golden case
        ("Cross-validate CSP+LDA within each session and show the PSD.", False),
        ("Which files are there?", False),  # names no pipeline step: holds nothing back
    ],
)
def test_a_plot_after_the_asked_steps_runs_only_when_asked(question: str, refused: bool) -> None:
    ledger = ToolLedger()
    ledger.open("c1", "cross_validate", {}, 1).finish("success", result="cross_validate ...")
    assert bool(unasked_step(question, "plot_psd", ledger.entries)) is refused
    # before the asked step has succeeded a plot is never held back
    assert not unasked_step(question, "plot_psd", ToolLedger().entries)
