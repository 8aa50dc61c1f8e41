"""`brainchat eval`: the harness scores scripted runs right, for every kind of check and as a CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from brainchat.evals.harness import run_suite, summarize
from brainchat.evals.pairs import SCRIPTED, ModelPair, resolve_pairs
from brainchat.evals.report import markdown, summary_dict, table
from brainchat.evals.scenario import ScenarioError, load_suite, parse_scenario
from brainchat.settings import ConfigError, Settings

from support import SEARCH_RESULTS, spec

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "brainchat"
PAIR = ModelPair(SCRIPTED)


def tc(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"type": "tool_calls", "calls": [{"name": n, "args": a} for n, a in calls]}


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def scenario(name: str, fc: list[Any], answer: str, checks: dict[str, Any], **setup: Any) -> Any:
    data = {
        "name": name,
        "question": f"question of {name}",
        "setup": {"search_fixture": SEARCH_RESULTS, **setup},
        "script": {"function_call": fc, "answer": [text(answer)]},
        "checks": checks,
    }
    return parse_scenario(data, Path(f"/virtual/{name}.json"))


SEARCH = [tc(("web_search", {"query": "EEGNet"}))]
# Each kind of check once passing, once failing: the same run shape, a check it meets or misses.
CASES = [
    ("tools-pass", SEARCH, "ok [1]", {"tools": {"called": [{"name": "web_search", "args": {"query": {"contains": "eeg"}}}]}}, None),
    ("tools-fail-arg", SEARCH, "ok [1]", {"tools": {"called": [{"name": "web_search", "args": {"query": "CSP"}}]}}, "tools"),
    ("tools-fail-forbidden", SEARCH, "ok [1]", {"tools": {"not_called": ["web_search"]}}, "tools"),
    ("order-pass", [tc(("get_study_state", {})), tc(("list_data_files", {})), text("done")], "ok", {"tools": {"order": ["get_study_state", "list_data_files"]}}, None),
    ("order-fail", [tc(("get_study_state", {})), tc(("list_data_files", {})), text("done")], "ok", {"tools": {"order": ["list_data_files", "get_study_state"]}}, "order"),
    ("study-pass", [text("nothing to do")], "ok", {"study": {"stage": "empty", "recordings": 0}}, None),
    ("study-fail", [text("nothing to do")], "ok", {"study": {"stage": "loaded"}}, "study"),
    ("answer-pass", SEARCH, "EEGNet uses depthwise convolutions [1].", {"answer": {"contains": ["depthwise"], "regex": ["EEG\\w+"]}}, None),
    ("answer-fail", SEARCH, "EEGNet is a network [1].", {"answer": {"contains": ["depthwise"]}}, "answer"),
    ("answer-fail-regex", SEARCH, "no numbers here [1]", {"answer": {"regex": ["\\d+ Hz"]}}, "answer"),
    ("cites-pass", SEARCH, "EEGNet is compact [2].", {"answer": {"cites_source": True}}, None),
    ("cites-fail-fabricated", SEARCH, "EEGNet is compact [9].", {"answer": {"cites_source": True}}, "citations"),
    ("cites-fail-none", SEARCH, "EEGNet is compact.", {"answer": {"cites_source": True}}, "citations"),
    ("limits-pass", SEARCH, "ok [1]", {"limits": {"max_iterations": 1, "stop_reason": "answered", "max_rounds": 1}}, None),
    ("limits-fail-iterations", [tc(("get_study_state", {})), tc(("web_search", {"query": "x"})), text("done")], "ok", {"limits": {"max_iterations": 1}}, "limits"),
    ("limits-fail-stop", SEARCH, "ok [1]", {"limits": {"stop_reason": "iteration_limit"}}, "limits"),
    ("limits-fail-cost", SEARCH, "ok [1]", {"limits": {"max_tokens": 5}}, "limits"),
]  # fmt: skip


async def test_every_kind_of_check_passes_and_fails_with_the_right_score(scripted_server) -> None:
    scenarios = [scenario(name, fc, ans, checks) for name, fc, ans, checks, _ in CASES]
    results = await run_suite(scenarios, [PAIR], concurrency=4, server=scripted_server)
    by_name = {r.scenario: r for r in results}
    for name, _, _, _, kind in CASES:
        r = by_name[name]
        assert r.passed == (kind is None), (name, r.failures)
        if kind is not None:
            assert {f["check"] for f in r.failures} == {kind}, (name, r.failures)
    [summary] = summarize(results)
    passing = sum(kind is None for *_, kind in CASES)
    assert summary.passed == passing and summary.scenarios == len(CASES)
    assert summary.pass_rate == round(passing / len(CASES), 4)
    assert summary.failures_by_check == {
        "tools": 2, "order": 1, "study": 1, "answer": 2, "citations": 2, "limits": 3,
    }  # fmt: skip
    assert summary_dict([summary])["pass_rate"] == summary.pass_rate
    fabricated = by_name["cites-fail-fabricated"].failures[0]["message"]
    assert "[9]" in fabricated and "no search returned" in fabricated


async def test_tool_call_validity_counts_schema_invalid_calls(scripted_server) -> None:
    fc = [
        {"type": "tool_calls", "calls": [{"name": "web_search", "args": '{"query": "CSP'}]},
        tc(("no_such_tool", {})),
        tc(("web_search", {"query": 42})),  # wrong type: the schema wants a string
        tc(("web_search", {"query": "CSP"})),
    ]
    s = scenario("validity", fc, "CSP [3]", {"tools": {"called": ["web_search"]}})
    [result] = await run_suite([s], [PAIR], server=scripted_server)
    assert result.metrics["tool_calls"] == 4
    assert result.metrics["valid_calls"] == 1
    assert summarize([result])[0].validity == 0.25


async def test_concurrency_limit_holds(scripted_server) -> None:
    slow = [{"type": "text", "content": "no tools", "ttft": 0.3}]
    scenarios = [scenario(f"c{i}", slow, "ok", {"study": {"stage": "empty"}}) for i in range(5)]
    results = await run_suite(scenarios, [PAIR], concurrency=2, server=scripted_server)
    assert all(r.passed for r in results)
    spans = [(r.started_at, r.finished_at or r.started_at) for r in scripted_server.requests]
    assert len(spans) == 10, [r.metrics for r in results]  # one decide, one answer per scenario
    most = max(sum(a <= t < b for a, b in spans) for t, _ in spans)
    assert most <= 2


def own_answer(name: str, stop_reason: str) -> dict[str, Any]:
    return {"answer": {"contains": [f"<{name}>"]}, "limits": {"stop_reason": stop_reason}}


def test_concurrent_runs_on_later_event_loops_each_make_every_request() -> None:
    """Many concurrent runs, each with its own answer, in one event loop after another against
    the same model URL (what a port reused by a later test's server is). Each run makes its decide
    and its answer request and gets its own answer. A later loop once picked up a pooled connection
    of a closed one and the run failed before its request was sent ("Event loop is closed"): a
    full suite saw 8 requests where 10 were due."""
    import asyncio

    from brainchat.testing.scripted_server import ScriptedServer

    port = 0
    for loop_no in range(3):
        with ScriptedServer(port) as server:
            port = server.port  # the next loop's server listens on the same URL
            names = [f"loop{loop_no}-run{i}" for i in range(12)]
            scenarios = [
                scenario(n, [text("no tools")], f"<{n}>", own_answer(n, "answered")) for n in names
            ]
            results = asyncio.run(run_suite(scenarios, [PAIR], concurrency=6, server=server))
            for r in results:
                assert r.passed, (loop_no, r.scenario, r.failures, r.metrics)
            for n in names:
                served = [(q.model, q.outcome) for q in server.requests_for(f"{n}/function_call")]
                served += [(q.model, q.outcome) for q in server.requests_for(f"{n}/answer")]
                assert served == [(f"{n}/function_call", "ok"), (f"{n}/answer", "ok")], served
            assert len(server.requests) == 2 * len(names)
            assert server.remaining() == 0


async def test_a_real_pair_ignores_the_script_and_is_scored(scripted_server) -> None:
    """A pair given by spec (here the scripted server posing as a real model) runs unscripted."""
    scripted_server.set_default("plain", text("Theta is 4-8 Hz."))
    pair = ModelPair("plain", spec(scripted_server, "plain"), None)
    s = scenario(
        "real",
        SEARCH,
        "never used",
        {"answer": {"contains": ["4-8 Hz"]}, "tools": {"not_called": ["web_search"]}},
    )
    [result] = await run_suite([s], [pair], server=scripted_server)
    assert result.passed, result.failures
    assert {r.model for r in scripted_server.requests} == {"plain"}
    assert result.to_dict()["models"] == {"function_call": "plain", "answer": "plain"}


def test_pairs_resolve_names_specs_and_combinations(scripted_server) -> None:
    fc, ans = spec(scripted_server, "fc-model"), spec(scripted_server, "ans-model")
    settings = Settings(function_call_model=fc, answer_model=ans)
    assert resolve_pairs(None, settings, {})[0].name == "fc-model+ans-model"
    assert resolve_pairs(None, Settings(), {})[0].scripted
    [a, b, c] = resolve_pairs(["scripted", "fc-model", "fc-model+ans-model"], settings, {})
    assert a.scripted and b.describe() == {"function_call": "fc-model", "answer": "fc-model"}
    assert c.describe() == {"function_call": "fc-model", "answer": "ans-model"}
    raw = json.dumps({"provider": "openai-compatible", "model": "x", "base_url": "http://h/v1"})
    assert resolve_pairs([raw], settings, {})[0].describe()["answer"] == "x"
    with pytest.raises(ConfigError, match="fc-model, ans-model|ans-model, fc-model"):
        resolve_pairs(["gpt-9"], settings, {})


def test_bad_scenarios_are_named_with_the_field(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="'question'"):
        parse_scenario({"checks": {"answer": {}}}, tmp_path / "a.json")
    with pytest.raises(ScenarioError, match=r"unknown checks field\(s\) \['answr'\]"):
        parse_scenario({"question": "q", "checks": {"answr": {}}}, tmp_path / "b.json")
    with pytest.raises(ScenarioError, match="script.function_call: reply type 'txt'"):
        parse_scenario(
            {
                "question": "q",
                "checks": {"answer": {}},
                "script": {"function_call": [{"type": "txt"}]},
            },
            tmp_path / "c.json",
        )
    (tmp_path / "d.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ScenarioError, match="d.json: not valid JSON"):
        load_suite(tmp_path)


def test_shipped_suite_covers_every_area() -> None:
    scenarios = load_suite(ROOT / "evals" / "scripted")
    assert len(scenarios) >= 20
    tags = {t for s in scenarios for t in s.tags}
    assert {"web_search", "eeg", "mcp", "destructive", "limits", "recovery", "plan"} <= tags


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_"))}  # fmt: skip
    return subprocess.run(
        [str(BIN), "eval", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow  # the CLI in a process of its own
def test_cli_runs_the_scripted_suite_as_json_lines() -> None:
    """What CI runs: the whole shipped suite against the scripted pair, every scenario passing."""
    out = run_cli(
        ["--suite", "scripted", "--models", "scripted", "--json", "--concurrency", "3"], ROOT
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    *runs, summary = lines
    assert len(runs) >= 20
    for run in runs:
        assert {"scenario", "models", "passed", "failures"} <= set(run)
        assert run["passed"] is True and run["failures"] == []
        assert run["unverified"] == 0, run  # the answer check flags no correct answer
    assert summary["type"] == "summary" and summary["pass_rate"] == 1.0
    assert "25/25" in out.stderr or f"{len(runs)}/{len(runs)}" in out.stderr  # the progress bar


def test_cli_table_and_reports(tmp_path: Path) -> None:
    suite = tmp_path / "mini"
    suite.mkdir()
    for name, answer in (("good", "EEGNet [1]"), ("bad", "nothing cited")):
        data = {
            "question": "What is EEGNet?",
            "setup": {"search_fixture": SEARCH_RESULTS},
            "script": {"function_call": SEARCH, "answer": [text(answer)]},
            "checks": {"answer": {"cites_source": True}},
        }
        (suite / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    out = run_cli(["--suite", str(suite), "--models", "scripted", "--report-dir", "rep"], tmp_path)
    assert out.returncode == 1, out.stderr  # a scenario failed
    assert "pass rate" in out.stdout and "50%" in out.stdout and "citations 1" in out.stdout
    report = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "| scripted | 50% |" in report and "**bad**" in report
    data = json.loads((tmp_path / "rep" / "results.json").read_text(encoding="utf-8"))
    assert data["summary"]["pass_rate"] == 0.5 and len(data["results"]) == 2
    # each run's trace says what it did, to read a failure by (a real model's run is not
    # repeatable): the calls in order with their round, status and result, and the answer
    bad = next(r for r in data["results"] if r["scenario"] == "bad")
    (call,) = bad["trace"]["calls"]
    assert call["name"] == "web_search" and call["status"] == "success" and call["round"] == 1
    assert "EEGNet" in call["result"] and len(call["result"]) <= 300
    assert bad["trace"]["answer"] == "nothing cited" and bad["trace"]["error"] is None


def test_cli_bad_options_name_what_is_wrong(tmp_path: Path) -> None:
    out = run_cli(["--suite", "nope", "--evals-dir", str(ROOT / "evals")], tmp_path)
    assert (
        out.returncode == 2 and "suite 'nope' not found" in out.stderr and "scripted" in out.stderr
    )
    out = run_cli(
        ["--suite", "scripted", "--evals-dir", str(ROOT / "evals"), "--models", "gpt-9"], tmp_path
    )
    assert out.returncode == 2 and "--models: 'gpt-9' is not valid" in out.stderr


def test_markdown_and_table_render_without_results() -> None:
    assert "None." in markdown("s", [], [])
    assert table([]).startswith("pair")


def plan_tc(*steps: tuple[str, str]) -> dict[str, Any]:
    return tc(("submit_plan", {"steps": [{"title": t, "tool": n} for t, n in steps]}))


LOAD = tc(("load_data", {"files": ["demo/sub-01_ses-01_task-mi_eeg.edf"]}))
TRAIN = tc(("train_model", {"model": "eegnet", "epochs": 2}))  # no epochs: it fails
PLAN_RUN = [plan_tc(("Load sub-01", "load_data"), ("Train EEGNet", "train_model")), LOAD, TRAIN]
HONEST = "sub-01 is loaded; training EEGNet failed because there are no epochs."
CLAIMS = "I loaded sub-01 and trained EEGNet to 80% accuracy."  # claims the failed step
PLAN_OK = {"made": True, "tools": ["load_data", "train_model"], "verified": 1, "failed": 1,
           "replans": 0, "claims": 0}  # fmt: skip
PLAN_CASES = [
    ("plan-pass", HONEST, PLAN_OK, None),
    ("plan-fail-claims", CLAIMS, PLAN_OK, "claims = 1, expected 0"),
    ("plan-fail-verified", HONEST, {**PLAN_OK, "verified": {"gte": 2}}, "verified = 1"),
    ("plan-fail-not-made", HONEST, {"made": False}, "a plan was made"),
    ("plan-fail-tools", HONEST, {"tools": ["train_model", "load_data"]}, "planned tools"),
    ("plan-fail-replans", HONEST, {"replans": 1}, "replans = 0, expected 1"),
]


async def test_plan_checks_pass_and_fail_with_the_right_score(scripted_server) -> None:
    """Plan mode's check: a made plan, its tools in order, verified/failed steps, replans, and an
    answer that claims a step the run did not verify (a scripted answer model that tries)."""
    limits = {"plan_mode": "always", "max_replans": 0}
    scenarios = [
        scenario(name, PLAN_RUN, answer, {"plan": checks}, demo_data=True, limits=limits)
        for name, answer, checks, _ in PLAN_CASES
    ]
    results = await run_suite(scenarios, [PAIR], concurrency=3, server=scripted_server)
    by_name = {r.scenario: r for r in results}
    for name, _, _, message in PLAN_CASES:
        r = by_name[name]
        assert r.passed == (message is None), (name, r.failures)
        if message is not None:
            [failure] = r.failures
            assert failure["check"] == "plan" and message in failure["message"], (name, failure)
    [summary] = summarize(results)
    assert summary.passed == 1 and summary.failures_by_check == {"plan": 5}


def test_a_trace_keeps_the_answer_models_words_and_what_the_check_flagged(tmp_path: Path) -> None:
    """Golden runs of 25 Nov: an answer replaced by brainchat's facts, or marked, kept no trace
    of what the answer model had written, so the failure could not be read afterwards."""
    suite = tmp_path / "mini"
    suite.mkdir()
    data = {
        "question": "What is EEGNet?",
        "setup": {"search_fixture": SEARCH_RESULTS},
        "script": {"function_call": SEARCH, "answer": [text("EEGNet reaches 0.987 accuracy [1].")]},
        "checks": {"answer": {"cites_source": True}},
    }
    (suite / "made_up.json").write_text(json.dumps(data), encoding="utf-8")
    out = run_cli(["--suite", str(suite), "--models", "scripted", "--json"], tmp_path)
    (run, _summary) = [json.loads(line) for line in out.stdout.splitlines()]
    trace = run["trace"]
    assert trace["streamed"] == "EEGNet reaches 0.987 accuracy [1]."  # the model's own words
    (flag,) = trace["flags"]
    assert flag["kind"] == "figure" and "0.987" in flag["sentence"]
    assert trace["answer"] != trace["streamed"] and "0.987" in trace["answer"]  # marked in place
    assert run["unverified"] == 1
