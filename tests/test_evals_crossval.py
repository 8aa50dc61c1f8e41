"""The cross-validation golden scenarios (#24) judge outcomes: a model that picks a protocol the
user's words rule out has it replaced by the one they name (and still fails on an answer without
the statistics asked for), and one whose answer states statistics no tool produced fails,
whatever it called (the scripted server poses as a real model; the scenario's script is unused)."""

from __future__ import annotations

from typing import Any

import pytest

from brainchat.evals.harness import run_suite
from brainchat.evals.pairs import ModelPair
from test_evals_real import shipped

from support import spec


def posing(server: Any, name: str, args: dict[str, Any], answer: str) -> ModelPair:
    """A pair named `name` that calls cross_validate with `args` once, then answers `answer`."""
    call = {"type": "tool_calls", "calls": [{"name": "cross_validate", "args": args}]}
    server.queue(f"{name}-fc", call)
    server.set_default(f"{name}-fc", {"type": "text", "content": "Done."})
    server.queue(f"{name}-answer", {"type": "text", "content": answer})
    return ModelPair(name, spec(server, f"{name}-fc"), spec(server, f"{name}-answer"))


@pytest.mark.slow  # two scenario runs, each cross-validating real recordings
async def test_across_sessions_fails_a_k_fold_and_an_invented_p_value(scripted_server) -> None:
    scenario = shipped("eeg-crossval-across-sessions")
    kfold = posing(
        scripted_server,
        "kfold",
        {"protocol": "within_session", "pipelines": ["csp_lda"], "folds": 2, "permutations": 0},
        "Within each session CSP+LDA scored well.",
    )
    invented = posing(
        scripted_server,
        "invented",
        {"protocol": "cross_session", "pipelines": ["csp_lda"], "permutations": 4},
        "Across sessions CSP+LDA is above its permutation chance level of 0.531, p = 0.042.",
    )
    results = await run_suite([scenario], [kfold, invented], server=scripted_server)
    got = {r.pair.name: r for r in results}
    # "across sessions": brainchat ran cross_session, not the k-fold the model sent (#23 golden,
    # 27 Nov); the answer still fails, with neither chance level nor p-value
    checks = {f["check"] for f in got["kfold"].failures}
    assert "tools" not in checks and "answer" in checks, got["kfold"].failures
    (ran,) = got["kfold"].trace["calls"]
    assert ran["args"]["protocol"] == "cross_session" and ran["status"] == "success"
    failures = got["invented"].failures
    assert {f["check"] for f in failures} == {"answer"}, failures
    assert any("0.042" in f["message"] for f in failures)  # the p-value no tool produced
