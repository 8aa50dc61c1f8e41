"""bench/real_model.py's options and table, against the scripted server standing in for the model
(the bench itself, against a real model, is not part of CI: see bench/README.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from brainchat.testing.scripted_server import ScriptedServer

BENCH = Path(__file__).resolve().parents[1] / "bench" / "real_model.py"


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("real_model_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_model_bench"] = module
    spec.loader.exec_module(module)
    return module


def respond(rec: Any) -> dict[str, Any]:
    """A model in prompt mode: a JSON call to list the files, then an answer naming them."""
    seen = json.dumps(rec.messages)
    if "sub-01_ses-01_task-mi_eeg.edf" in seen:
        return {
            "type": "text",
            "content": "The EEG files are sub-01_ses-01_task-mi_eeg.edf and "
            "sub-01_ses-02_task-mi_eeg.edf (and two of sub-02).",
        }
    return {"type": "text", "content": '{"name": "list_data_files", "arguments": {}}'}


def test_options_and_defaults() -> None:
    bench = load_bench()
    opts = bench.parse_args([])
    assert opts.runs == 3 and opts.modes == ["native", "prompt", "auto"]
    assert opts.tasks == ["files", "web", "pipeline"] and not opts.skip_golden
    opts = bench.parse_args(["--base-url", "http://h:1/v1", "--tasks", "--modes", "prompt"])
    assert opts.tasks == [] and opts.modes == ["prompt"] and opts.base_url == "http://h:1/v1"
    assert opts.model_timeout == 240.0  # a busy CPU server reads a long prompt for minutes
    fc = json.loads(bench.model_env(opts, "http://h:1/v1", "prompt")["AGENT_FUNCTION_CALL_MODEL"])
    assert fc["timeout"] == 240.0 and fc["tool_calling"] == "prompt"
    with pytest.raises(SystemExit):
        bench.parse_args(["--runs", "0"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--modes", "telepathy"])
    with pytest.raises(SystemExit):  # past the settings' 300 s every run would exit at once
        bench.parse_args(["--time-limit", "420"])


def test_table_counts_passes_and_median_wall_time() -> None:
    bench = load_bench()
    runs = [
        bench.Outcome("files", "prompt", 1, True, 10.0),
        bench.Outcome("files", "prompt", 2, False, 30.0, why="names no file"),
        bench.Outcome("files", "prompt", 3, True, 20.0),
    ]
    out = bench.table(runs, ["files", "pipeline"], ["prompt", "native"])
    assert '"Which EEG files are there?"' in out.splitlines()[0]
    assert "| prompt | 2/3, 20 s | - |" in out and "| native | - | - |" in out


def test_a_run_against_the_scripted_server_is_judged_and_tabled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bench = load_bench()
    with ScriptedServer(responder=respond) as server:
        argv = ["--base-url", server.base_url, "--model", "stand-in", "--runs", "1"]
        argv += ["--tasks", "files", "--modes", "prompt", "--skip-golden"]
        keep = ["--keep", str(tmp_path / "events")]
        assert bench.main([*argv, "--out", str(tmp_path / "runs.jsonl"), *keep]) == 0
    out = capsys.readouterr().out
    assert "| prompt | 1/1, " in out, out
    assert "answers with unverified claims: 0 of 1" in out
    [run] = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert run["passed"] and run["calls"] == ["list_data_files:success"], run
    kept = [json.loads(x) for x in (tmp_path / "events" / "files-prompt-1.jsonl").open()]
    assert {"tool_finished", "run_finished"} <= {e["type"] for e in kept}  # replayable runs


def test_the_golden_runs_are_kept_with_their_traces(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--keep keeps the golden runs too: a real model's run is not repeatable, and a failure is
    read from its trace (the calls, the study, the answer)."""
    bench = load_bench()
    with ScriptedServer(responder=respond) as server:
        argv = ["--base-url", server.base_url, "--model", "stand-in", "--modes", "prompt"]
        argv += ["--tasks", "--golden", "eeg-list-files", "--keep", str(tmp_path / "k")]
        bench.main(argv)
    assert "golden subset, prompt mode: " in capsys.readouterr().out
    lines = (tmp_path / "k" / "eval-scripted" / "results.jsonl").read_text().splitlines()
    (run,) = [json.loads(x) for x in lines if '"scenario"' in x]
    assert run["scenario"] == "eeg-list-files"
    calls = run["trace"]["calls"]
    assert calls and calls[0]["name"] == "list_data_files" and calls[0]["status"] == "success"
    assert "sub-01_ses-01_task-mi_eeg.edf" in run["trace"]["answer"]


def test_free_cores_counts_a_core_kept_busy_now() -> None:
    """The llama-server thread count is the cores idle now: a core another process keeps busy
    through the sample is counted as taken (the load average, read right after a test suite,
    still counted cores that were idle again)."""
    import subprocess

    bench = load_bench()
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        busy = bench._busy_cores(1.0)
    finally:
        spin.kill()
        spin.wait()
    assert busy is not None and busy >= 0.7  # the spinning process's core, at least
    assert 1 <= bench.free_cores(0.2) <= (os.cpu_count() or 1)
