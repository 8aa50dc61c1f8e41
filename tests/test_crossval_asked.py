"""A request for a cross-validated result is answered by cross_validate, not by a split and a
training (issue #23, golden scenario eeg-crossval-new-subject, 25 Nov): asked "Would a CSP+LDA
decoder work on a person it has never seen? Test it fairly on the loaded subjects.", the 1.5B
model of the real-model bench split by trial, trained CSP+LDA and evaluated it: a within-data
score that answers another question, and the run never cross-validated. The replies are replayed
in the form the model writes them, through the scripted server over real HTTP, against the real
EEG tools on the demo data."""

from __future__ import annotations

import json

import pytest

from brainchat.agent.asked import asks_crossval, unasked_step
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.testing.scripted_server import Text
from test_prompt_epoch_args import fenced
from test_prompt_pipeline import agent
from test_unasked_steps import batch

from support import collect, of

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
    s.queue("fc", Text(SPLIT_TRAIN_TEST), Text(CROSSVAL), Text(SPLIT_TRAIN_TEST))
    s.queue("ans", Text("Across subjects CSP+LDA scores as cross_validate reports."))
    events = await collect(agent(s, study).run(NEW_SUBJECT))
    assert ran(events) == [
        ("split_dataset", "refused"), ("train_model", "refused"), ("evaluate_model", "error"),
        ("cross_validate", "success"),
        ("split_dataset", "refused"), ("train_model", "refused"), ("evaluate_model", "error"),
    ]  # fmt: skip
    assert study.state.stage == "epoched" and not study.state.models  # no within-data model
    assert "cross_subject" in study.state.crossval
    # the model is told why and what to call, before its first call and after the refusal
    first = json.dumps(s.requests_for("fc")[0].messages)
    assert "The next pipeline step for this request: cross_validate" in first
    second = json.dumps(s.requests_for("fc")[1].messages)
    assert "cross_validate makes its own folds" in second and "Call cross_validate now" in second
    # once it has cross-validated, the refused copies add nothing: the run answers
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    assert of(events, "run_finished")[0].reason == "answered"
    # one pipeline: the answer is asked for the score by name and for no paired test (golden
    # run of 27 Nov: a W and a p made up for a run of one pipeline, the score left unnamed)
    told = str(s.requests_for("ans")[-1].messages[-1]["content"])
    assert "paired test: none (one pipeline" in told
    assert "the score's name (ROC AUC)" in told and "no paired test ran, so state none" in told


@pytest.mark.parametrize(
    ("question", "crossval", "split_runs"),
    [
        (NEW_SUBJECT, True, False),
        (
            "Does a CSP+LDA decoder generalise across sessions? Give me its chance level.",
            True,
            False,
        ),
        ("Leave one subject out and compare CSP+LDA with Riemannian MDM.", True, False),
        ("Cross-validate CSP+LDA within each session.", True, False),
        # a request that names the split itself keeps it, beside the cross-validation
        ("Split by trial, train CSP+LDA, then cross-validate it across sessions.", True, True),
        ("Split by trial, train CSP+LDA and test its accuracy.", False, True),
        ("Train a CSP+LDA decoder and tell me its test accuracy.", False, True),
    ],
)
def test_which_requests_ask_for_cross_validation(question, crossval, split_runs) -> None:
    assert asks_crossval(question) is crossval
    assert (unasked_step(question, "split_dataset", []) == "") is split_runs
