"""`brainchat eval` judges a real model fairly (#23): its time limit comes from the settings or
`--scenario-timeout`, and the shipped checks judge outcomes (files listed, the study's state,
figures a tool produced, an answer the ledger backs) rather than the scripted arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from brainchat.evals.harness import run_suite
from brainchat.evals.pairs import ModelPair
from brainchat.evals.scenario import load_suite, parse_scenario

from support import spec

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "brainchat"
FILES = "sub-01_ses-01_task-mi_eeg.edf and sub-01_ses-02_task-mi_eeg.edf"


def shipped(name: str) -> Any:
    [found] = [s for s in load_suite(ROOT / "evals" / "scripted") if s.name == name]
    return found


def real_pair(server: Any, fc: list[dict[str, Any]], answer: str) -> ModelPair:
    """The scripted server posing as a real model: the scenario's own script is not used."""
    server.queue("real-fc", *fc)
    server.set_default("real-fc", {"type": "text", "content": "Done."})
    server.queue("real-answer", {"type": "text", "content": answer})
    return ModelPair("real", spec(server, "real-fc"), spec(server, "real-answer"))


def list_call(pattern: str) -> dict[str, Any]:
    call = {"name": "list_data_files", "args": {"pattern": pattern}}
    return {"type": "tool_calls", "calls": [call]}


async def test_list_files_is_judged_on_the_files_not_on_the_pattern(scripted_server) -> None:
    """The real model's call (pattern "*", from issue #23) listing the files passes; before, the
    "pattern contains edf" check failed it although the answer named the right files."""
    pair = real_pair(scripted_server, [list_call("*")], f"The EEG files are {FILES}.")
    [result] = await run_suite([shipped("eeg-list-files")], [pair], server=scripted_server)
    assert result.passed, result.failures


async def test_list_files_fails_an_answer_naming_a_file_no_tool_listed(scripted_server) -> None:
    invented = f"The EEG files are {FILES} and sub-03_ses-01_task-mi_eeg.edf."
    pair = real_pair(scripted_server, [list_call("*.edf")], invented)
    [result] = await run_suite([shipped("eeg-list-files")], [pair], server=scripted_server)
    assert not result.passed
    assert any("sub-03_ses-01_task-mi_eeg.edf" in f["message"] for f in result.failures)


async def test_list_files_fails_an_answer_that_lists_nothing(scripted_server) -> None:
    pair = real_pair(scripted_server, [list_call("*")], "There are some recordings.")
    [result] = await run_suite([shipped("eeg-list-files")], [pair], server=scripted_server)
    assert [f["check"] for f in result.failures] == ["answer"], result.failures


def scenario(name: str, fc: list[Any], answer: str, checks: dict[str, Any]) -> Any:
    data = {
        "name": name,
        "question": f"question of {name}",
        "setup": {"demo_data": {"subjects": 1, "sessions": 1, "trials": 20}},
        "script": {"function_call": fc, "answer": [{"type": "text", "content": answer}]},
        "checks": checks,
    }
    return parse_scenario(data, Path(f"/virtual/{name}.json"))


LOAD = [
    {
        "type": "tool_calls",
        "calls": [{"name": "load_data", "args": {"files": ["demo/sub-01_ses-01_task-mi_eeg.edf"]}}],
    },
    {"type": "text", "content": "Loaded."},
]


async def test_figures_and_grounding_checks(scripted_server) -> None:
    """A figure a tool produced passes; a figure no tool produced fails; a claimed step that
    never ran fails `grounded` (the answer check flagged it)."""
    from brainchat.evals.pairs import SCRIPTED

    cases = [
        ("fig-pass", "Loaded 1 recording sampled at 250.0 Hz.", {"figures_from_tools": True}, True),
        ("fig-fail", "Loaded; test accuracy 0.974.", {"figures_from_tools": True}, False),
        ("grounded-pass", "One recording is loaded.", {"grounded": True}, True),
        (
            "grounded-fail",
            "The recording is loaded. Training of CSP+LDA was performed.",
            {"grounded": True},
            False,
        ),
    ]
    scenarios = [scenario(n, LOAD, a, {"answer": c}) for n, a, c, _ in cases]
    results = await run_suite(scenarios, [ModelPair(SCRIPTED)], server=scripted_server)
    got = {r.scenario: r for r in results}
    for name, _, _, ok in cases:
        assert got[name].passed == ok, (name, got[name].failures, got[name].metrics)
    assert "0.974" in got["fig-fail"].failures[0]["message"]


def run_cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_"))}  # fmt: skip
    return subprocess.run(
        [str(BIN), "eval", *args],
        env={**base, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def slow_suite(tmp_path: Path, seconds: float) -> Path:
    """One scenario whose model takes `seconds` to reply; it passes only if the run times out."""
    suite = tmp_path / "slow"
    suite.mkdir()
    data = {
        "question": "Which EEG files are there?",
        "script": {"function_call": [{"type": "text", "content": "late", "ttft": seconds}]},
        "checks": {"limits": {"stop_reason": "timeout"}},
    }
    (suite / "slow.json").write_text(json.dumps(data), encoding="utf-8")
    return suite


def test_scenario_timeout_flag_sets_each_runs_time_limit(tmp_path: Path) -> None:
    suite = slow_suite(tmp_path, 6)
    args = ["--suite", str(suite), "--models", "scripted", "--json"]
    out = run_cli([*args, "--scenario-timeout", "2"], tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    [run, _summary] = [json.loads(line) for line in out.stdout.splitlines()]
    assert run["stop_reason"] == "timeout" and run["passed"], run
    bad = run_cli([*args, "--scenario-timeout", "0"], tmp_path)
    assert bad.returncode == 2 and "--scenario-timeout" in bad.stderr


def test_scenario_time_limit_comes_from_agent_max_execution_time(tmp_path: Path) -> None:
    """AGENT_MAX_EXECUTION_TIME=10 and a model that needs 12 s: the run stops at its limit (the
    fixed 120 s let it answer)."""
    suite = slow_suite(tmp_path, 12)
    out = run_cli(
        ["--suite", str(suite), "--models", "scripted", "--json"],
        tmp_path,
        AGENT_MAX_EXECUTION_TIME="10",
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    run = json.loads(out.stdout.splitlines()[0])
    assert run["stop_reason"] == "timeout", run
