"""Run a suite against model pairs, concurrently up to a limit, and score every run."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from brainchat.evals.checks import RunRecord, evaluate
from brainchat.evals.pairs import ModelPair
from brainchat.evals.scenario import Scenario

BAD_CALL = ("invalid arguments for", "unknown tool", "the arguments were not valid JSON")


@dataclass
class Result:
    """One scenario run against one pair, scored."""

    scenario: str
    pair: ModelPair
    passed: bool
    failures: list[dict[str, str]]
    metrics: dict[str, Any]
    # what the run did, for reading a failure: each call (name, args, round, status, result
    # excerpt), the study's stage and steps, and the answer (a real model's run is not repeatable)
    trace: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "scenario",
            "scenario": self.scenario,
            "models": self.pair.describe(),
            "pair": self.pair.name,
            "passed": self.passed,
            "failures": self.failures,
            **self.metrics,
            "trace": self.trace,
        }


@dataclass
class PairSummary:
    """Aggregates of one pair over the suite (the table's row)."""

    pair: str
    scenarios: int = 0
    passed: int = 0
    failures_by_check: dict[str, int] = field(default_factory=dict)
    valid_calls: int = 0
    tool_calls: int = 0
    rounds: int = 0
    tokens: int = 0
    cost: float | None = None
    ttft: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def pass_rate(self) -> float:
        return round(self.passed / self.scenarios, 4) if self.scenarios else 0.0

    @property
    def validity(self) -> float | None:
        return round(self.valid_calls / self.tool_calls, 4) if self.tool_calls else None

    def to_dict(self) -> dict[str, Any]:
        ttft = round(sum(self.ttft) / len(self.ttft), 4) if self.ttft else None
        return {
            "pair": self.pair,
            "scenarios": self.scenarios,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "failures_by_check": dict(sorted(self.failures_by_check.items())),
            "tool_call_validity": self.validity,
            "valid_calls": self.valid_calls,
            "tool_calls": self.tool_calls,
            "rounds": self.rounds,
            "tokens": self.tokens,
            "cost": None if self.cost is None else round(self.cost, 6),
            "mean_ttft": ttft,
            "total_seconds": round(self.seconds, 3),
        }


def metrics_of(run: RunRecord) -> dict[str, Any]:
    """Rounds, iterations, tokens, cost, timings and tool-call validity of one run."""
    stats = run.of("stats")
    last = stats[-1] if stats else None
    rows = last.rows if last else []
    calls = run.calls()
    errors = {e.call_id: e.error or "" for e in run.of("tool_finished")}
    starts = run.of("tool_call_started")
    valid = sum(1 for e in starts if _valid(e, errors.get(e.call_id, ""), run.schemas))
    return {
        "stop_reason": run.stop_reason(),
        "iterations": sum(r.calls for r in rows if r.role == "function_call"),
        "rounds": len({e.round for e in starts}),
        "tool_calls": len(calls),
        "valid_calls": valid,
        "tokens": sum(r.input_tokens + r.output_tokens for r in rows),
        "cost": last.total_cost if last else None,
        "ttft": last.ttft if last else None,
        "total_seconds": last.total_seconds if last else None,
        "unverified": last.unverified if last else 0,  # answer statements the run cannot show
    }


def _valid(call: Any, error: str, schemas: dict[str, dict[str, Any]]) -> bool:
    """Schema-valid: a known tool, arguments that validate against its JSON schema."""
    if error.startswith(BAD_CALL) or call.name not in schemas:
        return False
    import jsonschema

    try:
        jsonschema.validate(call.args or {}, schemas[call.name] or {"type": "object"})
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        return True  # an odd schema from an MCP server is not the model's fault
    return True


def score(scenario: Scenario, pair: ModelPair, run: RunRecord) -> Result:
    metrics = metrics_of(run)
    failures = evaluate(scenario.checks, run, metrics)
    passed, found = not failures, [f.to_dict() for f in failures]
    return Result(scenario.name, pair, passed, found, metrics, trace_of(run))


RESULT_EXCERPT = 300  # characters of each tool result kept in the trace


def trace_of(run: RunRecord) -> dict[str, Any]:
    """The run's record of the request (a guided model's), its calls in order, the study it
    left, its answer, and what the answer check flagged (results.json, --json)."""
    starts = run.of("tool_call_started")  # run.calls() is made from them, in the same order
    calls = [
        {**c, "round": e.round, "result": c["result"][:RESULT_EXCERPT]}
        for c, e in zip(run.calls(), starts, strict=True)
    ]
    answer = run.answer()
    streamed = "".join(e.text for e in run.of("answer_token"))
    records = run.of("request_understood")
    return {
        "record": records[0].record if records else None,
        "calls": calls,
        "stage": run.stage,
        "steps": run.steps,
        "answer": answer,
        # what the answer check found, and the answer model's own words when the check changed
        # them (an answer replaced by brainchat's facts would keep no trace of what was echoed)
        "flags": [f for e in run.of("answer_checked") for f in e.flags],
        "streamed": streamed if streamed.strip() != answer.strip() else None,
        "error": run.error,
    }


def summarize(results: list[Result]) -> list[PairSummary]:
    """One summary per pair, in the order the pairs first appear."""
    out: dict[str, PairSummary] = {}
    for r in results:
        s = out.setdefault(r.pair.name, PairSummary(r.pair.name))
        m = r.metrics
        s.scenarios += 1
        s.passed += r.passed
        counts = Counter(f["check"] for f in r.failures)
        for check, n in counts.items():
            s.failures_by_check[check] = s.failures_by_check.get(check, 0) + n
        s.tool_calls += m["tool_calls"]
        s.valid_calls += m["valid_calls"]
        s.rounds += m["rounds"]
        s.tokens += m["tokens"]
        if m["cost"] is not None:
            s.cost = (s.cost or 0.0) + m["cost"]
        if m["ttft"] is not None:
            s.ttft.append(m["ttft"])
        s.seconds += m["total_seconds"] or 0.0
    return list(out.values())


async def run_suite(
    scenarios: list[Scenario],
    pairs: list[ModelPair],
    *,
    concurrency: int = 4,
    on_result: Callable[[Result], None] | None = None,
    server: Any = None,
    time_limit: float | None = None,
) -> list[Result]:
    """Every scenario against every pair, at most `concurrency` at once; results in suite order.

    The scripted pair runs on `server`, or on a scripted server started (and stopped) here.
    `time_limit`: each run's own limit in seconds (None: the app's default).
    """
    from brainchat.evals.runner import run_scenario

    gate = asyncio.Semaphore(max(1, concurrency))
    own = server is None and any(p.scripted for p in pairs)
    if own:
        server = _scripted_server()

    async def one(scenario: Scenario, pair: ModelPair) -> Result:
        async with gate:
            run = await run_scenario(scenario, pair, server, time_limit)
        result = score(scenario, pair, run)
        if on_result is not None:
            on_result(result)
        return result

    try:
        jobs = [one(s, p) for p in pairs for s in scenarios]
        return list(await asyncio.gather(*jobs))
    finally:
        if own:
            server.stop()


def _scripted_server() -> Any:
    from brainchat.testing.scripted_server import ScriptedServer

    server = ScriptedServer()
    server.start()
    return server
