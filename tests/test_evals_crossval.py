"""The cross-validation golden scenarios judge outcomes: a model whose protocol the user's words
rule out fails the tools check (brainchat does not rewrite its call), a guided model is sent
back the protocol its record of the request fixed and passes the tools check once it takes it
(and still fails on an answer without the statistics asked for), and an answer that states
statistics no tool produced fails, whatever was called (the scripted server poses as a real
model; the scenario's script is unused)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from brainchat.evals.harness import run_suite
from brainchat.evals.pairs import ModelPair
from test_evals_real import shipped

from support import record, spec

KFOLD = {"protocol": "within_session", "pipelines": ["csp_lda"], "folds": 2, "permutations": 0}


def cross_validate(args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_calls", "calls": [{"name": "cross_validate", "args": args}]}


def posing(
    server: Any, name: str, args: dict[str, Any], answer: str, *first: Any, **fc: Any
) -> ModelPair:
    """A pair named `name` that replies `first` (a record), calls cross_validate with `args`,
    then answers `answer`; `fc`: its function-call spec's settings (guidance)."""
    server.queue(f"{name}-fc", *first, cross_validate(args))
    server.set_default(f"{name}-fc", {"type": "text", "content": "Done."})
    server.queue(f"{name}-answer", {"type": "text", "content": answer})
    return ModelPair(name, spec(server, f"{name}-fc", **fc), spec(server, f"{name}-answer"))


@pytest.mark.slow  # three scenario runs, each cross-validating real recordings
async def test_across_sessions_judges_the_protocol_and_an_invented_p_value(scripted_server) -> None:
    s = scripted_server
    scenario = shipped("eeg-crossval-across-sessions")
    kfold = posing(s, "kfold", KFOLD, "Within each session CSP+LDA scored well.")
    # a guided model: its record fixes cross_session, its k-fold comes back as a suggestion,
    # and it sends the suggested call
    fixed = {"cross_validate": {"protocol": "cross_session"}}
    suggested = {**KFOLD, "protocol": "cross_session"}
    s.queue("guided-fc", record(["cross_validate"], fixed=fixed), cross_validate(KFOLD))
    guided = posing(
        s, "guided", suggested, "Across sessions CSP+LDA scored well.", guidance="guided"
    )
    invented = posing(
        s,
        "invented",
        {"protocol": "cross_session", "pipelines": ["csp_lda"], "permutations": 4},
        "Across sessions CSP+LDA is above its permutation chance level of 0.531, p = 0.042.",
    )
    results = await run_suite([scenario], [kfold, guided, invented], server=s)
    got = {r.pair.name: r for r in results}
    # a native model's k-fold runs as it sent it, and fails the scenario's tools check
    checks = {f["check"] for f in got["kfold"].failures}
    assert {"tools", "answer"} <= checks, got["kfold"].failures
    (ran,) = got["kfold"].trace["calls"]
    assert ran["args"] == KFOLD and ran["status"] == "success"
    # the guided model took the suggestion: cross_session ran, and the tools check passes; the
    # answer still fails, with neither chance level nor p-value
    checks = {f["check"] for f in got["guided"].failures}
    assert "tools" not in checks and "answer" in checks, got["guided"].failures
    sent_back, ran = got["guided"].trace["calls"]
    assert sent_back["args"] == KFOLD and sent_back["status"] == "refused"
    assert 'the request sets protocol "cross_session"' in sent_back["result"]
    suggestion = sent_back["result"].split("Suggested call: ", 1)[1].split(" (the same call", 1)[0]
    assert json.loads(suggestion) == {"name": "cross_validate", "arguments": suggested}
    assert ran["args"] == suggested and ran["status"] == "success"
    failures = got["invented"].failures
    assert {f["check"] for f in failures} == {"answer"}, failures
    assert any("0.042" in f["message"] for f in failures)  # the p-value no tool produced


# the cross_validate result of that run, its figures as the tool wrote them
RESULT = (
    "cross_validate cross_session (leave-one-out: each session held out in turn, seed 0): 80 "
    "epochs (left_hand/right_hand), 2 subject(s), 4 subject-session group(s); score ROC AUC "
    "(chance ~0.5)\npipeline | mean ± sd over subjects | permutation test | per subject 01 "
    "02\ncsp_lda | 0.757 ± 0.187 | chance 0.502, p=0.048 (20 perms) | 0.89 0.62"
)


def judged(name: str, answer: str, result: str = RESULT) -> list[str]:
    """The answer checks of a shipped scenario (less `grounded`, the run's own count) on a run
    whose cross_validate gave `result` and whose answer was `answer`."""
    from brainchat.evals.checks import RunRecord, check_answer
    from brainchat.events import RunFinished, ToolCallStarted, ToolFinished

    events = [
        ToolCallStarted(call_id="c1", name="cross_validate", args={}, source="local", round=1),
        ToolFinished(
            call_id="c1",
            name="cross_validate",
            status="success",
            duration=1.0,
            summary=result.splitlines()[0],
            content=result,
        ),  # fmt: skip
        RunFinished(reason="answered", answer=answer),
    ]
    checks = {k: v for k, v in shipped(name).checks["answer"].items() if k != "grounded"}
    return [f.message for f in check_answer(checks, RunRecord(events))]


def test_answers_stating_the_figures_in_their_own_words_pass() -> None:
    """The golden run of 27 Nov (Qwen2.5-Coder-1.5B; its answers' words): "The p-value for the
    CSP+LDA pipeline is 0.048, which is significant at the 0.05 level" failed on the p regex
    and on 0.05 as a figure no tool produced; "tested on subjects it has not seen" failed for
    want of the word 'held-out'. The checks judge the figures and the meaning stated."""
    said = (
        "The permutation chance level for the CSP+LDA pipeline is 0.502. The p-value for the "
        "CSP+LDA pipeline is 0.048, which is significant at the 0.05 level."
    )
    assert judged("eeg-crossval-across-sessions", said) == []
    assert judged("eeg-crossval-across-sessions", said.replace("0.048", "0.031")) == [
        "figures no tool produced: [0.031]"
    ]  # a p no tool gave still fails
    unseen = (
        "Tested on subjects it has not seen, its ROC AUC is 0.757 against a chance level of 0.502."
    )
    assert judged("eeg-crossval-new-subject", unseen) == []
    assert (
        judged("eeg-crossval-new-subject", "Its ROC AUC is 0.757 against a chance level of 0.502.")
        != []
    )


# the leave-one-subject-out result of the golden run of 28 Nov, its figures as the tool wrote them
SUBJECTS = (
    "cross_validate cross_subject (leave-one-out: each subject held out in turn, seed 0): 120 "
    "epochs (left_hand/right_hand), 3 subject(s), 3 subject-session group(s); score ROC AUC "
    "(chance ~0.5)\npipeline | mean ± sd over subjects | permutation test | per subject 01 "
    "02 03\ncsp_lda | 0.812 ± 0.101 | chance 0.500, p=0.048 (20 perms) | 0.95 0.72 0.77\n"
    "mdm | 0.791 ± 0.090 | chance 0.500, p=0.048 (20 perms) | 0.90 0.70 0.77\n"
    "Wilcoxon signed-rank csp_lda vs mdm over 3 subjects: W=0.0, p=0.250 (fewer than 6 subjects)"
)


def test_a_paired_test_stated_in_words_passes_and_a_made_up_w_fails() -> None:
    """The golden run of 28 Nov: "the Wilcoxon signed-rank test with a W of 0.0 and a p of
    0.250", the tool's own figures, failed on the regex W = n."""
    said = (
        "The chance levels are 0.50 for both CSP+LDA and Riemannian MDM. The test used was the "
        "Wilcoxon signed-rank test with a W of 0.0 and a p of 0.250."
    )
    assert judged("eeg-crossval-leave-one-subject-out", said, SUBJECTS) == []
    assert judged(
        "eeg-crossval-leave-one-subject-out", said.replace("W of 0.0", "W of 3.5"), SUBJECTS
    ) == ["figures no tool produced: [3.5]"]
    no_w = said.replace(" with a W of 0.0 and", ", with")
    assert any("W" in m for m in judged("eeg-crossval-leave-one-subject-out", no_w, SUBJECTS))
