"""Once the request's own steps are done, a further pipeline step nobody asked for is not run
(issue #23, golden run of 2026-11-25): asked "Load both sessions of sub-01." or "Load sub-01
ses-01, band-pass 8-30 Hz, then epoch 0.5-2.5 s.", Qwen2.5-Coder-1.5B went on to epoch and split
on its own, and both runs ended with the study at `split`. The replies are replayed in the form
the model writes them, through the scripted server over real HTTP, against the real EEG tools."""

from __future__ import annotations

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.testing.scripted_server import Text
from test_prompt_epoch_args import BANDPASS, fenced
from test_prompt_pipeline import LOAD, agent

from support import collect, of

EPOCH = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})
SPLIT = fenced("split_dataset", {"by": "trial"})


@pytest.fixture
def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(data)


def ran(events) -> list[tuple[str, str]]:
    return [(e.name, e.status) for e in of(events, "tool_finished")]


async def test_a_load_request_ends_at_the_load_when_the_model_goes_on_to_epoch(
    scripted_server, study
):
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(EPOCH))
    s.queue("ans", Text("Both sessions of sub-01 are loaded."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert ran(events) == [("list_data_files", "success"), ("load_data", "success")]
    assert study.state.stage == "loaded"  # not epoched behind the user's back
    assert len(s.requests_for("fc")) == 2  # the epoch reply went to the answer, not to a tool
    (notice,) = [n for n in of(events, "notice") if "does not ask for" in n.message]
    assert "epoch_data" in notice.message and notice.hint.startswith("Ask for the next step")
    assert "epoch_data, which it does not ask for" in of(events, "evaluation")[-1].reason
    assert of(events, "run_finished")[0].reason == "answered"
    assert "Both sessions of sub-01 are loaded." in "".join(
        e.text for e in of(events, "answer_token")
    )


async def test_a_named_pipeline_runs_to_its_last_asked_step_and_no_further(scripted_server, study):
    """Steps nobody named still run while the request's own are not all done (a band-pass
    before the asked epoching here); once the epochs exist, the split is not run."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS), Text(EPOCH), Text(SPLIT))  # SPLIT: not asked for
    s.queue("ans", Text("Loaded, filtered and epoched."))
    events = await collect(agent(s, study).run("Load both files, then epoch 0.5-2.5 s."))
    assert [n for n, _ in ran(events)] == [
        "list_data_files", "load_data", "bandpass_filter", "epoch_data"
    ]  # fmt: skip
    assert study.state.stage == "epoched" and len(s.requests_for("fc")) == 4


async def test_a_failed_step_since_keeps_the_loop_going(scripted_server, study):
    """The asked steps succeeded, but a call failed after them: the model's next step runs."""
    s = scripted_server
    bad = fenced("load_data", {"files": ["demo/sub-09_ses-01_task-mi_eeg.edf"]})  # no such file
    s.queue("fc", Text(LOAD), Text(bad), Text(EPOCH), Text("Done."))
    s.queue("ans", Text("Loaded and epoched."))
    events = await collect(agent(s, study).run("Load both sessions of sub-01."))
    assert [st for n, st in ran(events) if n == "load_data"] == ["success", "error"]
    assert ("epoch_data", "success") in ran(events) and study.state.stage == "epoched"


async def test_the_evaluation_of_a_trained_model_still_runs(scripted_server, study):
    """Asked to train, the model evaluates on the held-out trials: that changes nothing in the
    study and reports on the training, so it is run (only steps that change the study wait)."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(EPOCH), Text(SPLIT),
            Text(fenced("train_model", {"model": "csp_lda"})),
            Text(fenced("evaluate_model", {"model": "csp_lda"})))  # fmt: skip
    s.queue("ans", Text("Trained and evaluated."))
    events = await collect(agent(s, study).run("Load, epoch, split and train CSP+LDA."))
    assert ("evaluate_model", "success") in ran(events)
