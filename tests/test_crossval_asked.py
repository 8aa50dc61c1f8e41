"""A request for a cross-validated result is answered by cross_validate, not by a split and a
training.

Asked "Would a CSP+LDA decoder work on a person it has never seen? Test it fairly on the loaded
subjects.", a small model (Qwen2.5-Coder-1.5B) split by trial, trained CSP+LDA and evaluated it:
a within-data score that answers another question. A guided model's record of the request names
the step `cross_validate`, which does the split, the training and the test itself (its
`replaces` in eeg/guidance/steps.py): until it has succeeded, a split, a training or a test is
refused with "call cross_validate now" (the `AskedSteps` guard, agent/guided.py), and the next
step the model is told of is cross_validate with the values the request fixed. The replies are
replayed in the form the model writes them, through the scripted server over real HTTP, against
the real EEG tools on the demo data."""

from __future__ import annotations

import json

import pytest

from brainchat.agent.guided import AskedSteps
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.testing.scripted_server import Text
from test_unasked_steps import agent, batch, fenced, run_with

from support import collect, of, record

NEW_SUBJECT = (
    "Would a CSP+LDA decoder work on a person it has never seen? Test it fairly on the loaded "
    "subjects."
)
SPLIT_TRAIN_TEST = batch(
    fenced("split_dataset", {"by": "trial"}),
    fenced("train_model", {"model": "csp_lda"}),
    fenced("evaluate_model", {}),
)
CROSSVAL = fenced(
    "cross_validate", {"protocol": "cross_subject", "pipelines": ["csp_lda"], "permutations": 0}
)
ACROSS_SUBJECTS = record(
    ["cross_validate"], fixed={"cross_validate": {"protocol": "cross_subject"}}
)


@pytest.fixture
async def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=3, sessions=1, trials=12, seed=1)
    study = Study(data)
    tools = {t.name: t for t in build_eeg_tools(study)}
    files = [f"demo/sub-0{i}_ses-01_task-mi_eeg.edf" for i in (1, 2, 3)]
    await tools["load_data"].ainvoke({"files": files})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    return study


def ran(events) -> list[tuple[str, str]]:
    return [(e.name, e.status) for e in of(events, "tool_finished")]


async def test_a_split_and_a_training_give_way_to_cross_validate(scripted_server, study):
    s = scripted_server
    s.queue("fc", ACROSS_SUBJECTS, Text(SPLIT_TRAIN_TEST), Text(CROSSVAL), Text(SPLIT_TRAIN_TEST))
    s.queue("ans", Text("Across subjects CSP+LDA scores as cross_validate reports."))
    events = await collect(agent(s, study).run(NEW_SUBJECT))
    assert ran(events) == [
        ("split_dataset", "refused"), ("train_model", "refused"), ("evaluate_model", "refused"),
        ("cross_validate", "success"),
        ("split_dataset", "refused"), ("train_model", "refused"), ("evaluate_model", "error"),
    ]  # fmt: skip
    assert study.state.stage == "epoched" and not study.state.models  # no within-data model
    assert "cross_subject" in study.state.crossval
    # the model is told what to call, before its first call and after the refusal
    first = json.dumps(s.requests_for("fc")[1].messages)  # [0] is the record's request
    assert 'Next step for this request: cross_validate with {\\"protocol\\": \\"cross_subject\\"}' in first  # fmt: skip
    refused = [e.error for e in of(events, "tool_finished")[:3]]
    assert refused[0].startswith(
        "not run: the request asks for cross_validate, and cross_validate does split itself. "
        "Call cross_validate now"
    )
    assert "does train itself" in refused[1] and "does evaluate itself" in refused[2]
    second = json.dumps(s.requests_for("fc")[2].messages)
    assert "cross_validate does split itself. Call cross_validate now" in second
    # once it has cross-validated, the split and training are not asked for and the test
    # fails on its own (no model): the round adds nothing, and the run answers
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    assert of(events, "run_finished")[0].reason == "answered"
    # one pipeline: the answer is asked for the score by name and for no paired test
    told = str(s.requests_for("ans")[-1].messages[-1]["content"])
    assert "paired test: none (one pipeline" in told
    assert "the score's name (ROC AUC)" in told and "no paired test ran, so state none" in told


@pytest.mark.parametrize(
    ("steps", "call", "refused"),
    [
        # cross-validation asked: its own folds, training and test stand in for these
        (["cross_validate"], "split_dataset", True),
        (["cross_validate"], "train_model", True),
        (["cross_validate"], "evaluate_model", True),
        (["cross_validate"], "cross_validate", False),
        (["load", "cross_validate"], "load_data", False),
        (["cross_validate"], "epoch_data", False),  # cross_validate needs the epochs first
        # a request that names the split itself keeps it, beside the cross-validation
        (["split", "train", "cross_validate"], "split_dataset", False),
        (["split", "train", "cross_validate"], "train_model", False),
        # no cross-validation asked: a split, a training and a test run
        (["split", "train", "evaluate"], "split_dataset", False),
        (["train", "evaluate"], "train_model", False),
    ],
)
def test_which_steps_give_way_to_an_asked_cross_validation(
    scripted_server, study, steps, call, refused
) -> None:
    d = agent(scripted_server, study).deps
    decision = AskedSteps().before_tool(d, run_with(steps, []), {"name": call, "args": {}})
    assert (decision is not None) is refused, decision
    if refused:
        assert f"cross_validate does {d.domain.step_of(call).id} itself" in decision.why


async def test_steps_the_study_already_holds_are_not_pushed_again(scripted_server, study):
    """A small model's record names the whole pipeline for a question about an epoched study
    ("load, band-pass, epoch, cross-validate"), fixing no value for the earlier steps: the study
    holds their result, so the next step told is cross_validate and no filter is offered (a
    band-pass on epochs is refused by the tool anyway). A step the request gives values for is
    asked anew (the tool then says what it needs)."""
    s = scripted_server
    whole = record(["load", "preprocess", "epoch", "cross_validate"])
    s.queue("fc", whole, Text(CROSSVAL), Text("Done."))
    s.queue("ans", Text("Across subjects CSP+LDA scores as cross_validate reports."))
    events = await collect(agent(s, study).run(NEW_SUBJECT))
    assert ran(events) == [("cross_validate", "success")]
    first = s.requests_for("fc")[1]
    assert first.messages[-1]["content"] == "(Study stage: epoched. Next step for this request: cross_validate.)"  # fmt: skip
    offered = str(first.messages[0]["content"]).split("You can call these tools")[1]
    assert "\n- cross_validate(" in offered and "\n- bandpass_filter(" not in offered
    assert "\n- load_data(" not in offered


def test_which_asked_steps_the_study_holds() -> None:
    from brainchat.eeg.guidance import EEG

    epoched = {"stage": "epoched"}
    asked = ["load", "preprocess", "epoch", "split", "cross_validate"]
    assert EEG.held(asked, epoched, {}) == {"load", "preprocess", "epoch"}
    assert EEG.held(asked, {"stage": "empty"}, {}) == set()
    # values the request gives ask for the step anew
    assert EEG.held(asked, epoched, {"bandpass_filter": {"l_freq": 8}}) == {"load", "epoch"}
    assert EEG.held(["load"], {"stage": "loaded"}, {"load_data": {"subjects": ["02"]}}) == set()


@pytest.mark.parametrize(
    ("steps", "listing", "stage", "opening"),
    [
        (["load", "epoch"], False, "empty", ["list_data_files"]),  # names come from the folder
        ([], True, "empty", ["list_data_files"]),
        (["inspect"], False, "loaded", ["get_study_state"]),
        (["cross_validate"], False, "epoched", []),  # nothing to look up first
        (["load"], False, "loaded", ["get_study_state"]),  # held already: what it holds, no list
        (["plot"], False, "empty", ["list_data_files"]),  # a plot needs data loaded first
    ],
)
def test_which_reports_brainchat_runs_first(steps, listing, stage, opening) -> None:
    from brainchat.eeg.guidance import EEG

    assert EEG.opening(steps, listing, {"stage": stage}) == opening
