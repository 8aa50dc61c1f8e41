"""The checks of a scenario, applied to what one run really did (its events and the study)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from brainchat.events import Event

CITE = re.compile(r"\[(\d{1,3})\]")
RAN = ("success", "cached")
# a data file's name as an answer or a tool result writes it (demo/sub-01_ses-01_task-mi_eeg.edf)
FILE = re.compile(r"[\w.-]+\.(?:edf|bdf|gdf|fif|vhdr|set|cnt)\b", re.IGNORECASE)
DECIMAL = re.compile(r"(?<![\w.])(\d+\.\d+|\d+(?:\.\d+)?\s*%)")  # what an answer states
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s*%)?")  # what a tool produced (250 Hz too)


@dataclass
class RunRecord:
    """What a run left behind: its events, the study's final state, the tools' schemas."""

    events: list[Event]
    stage: str = "empty"
    steps: list[dict[str, Any]] = field(default_factory=list)  # op + params, in order
    recordings: int = 0
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool -> JSON schema
    error: str | None = None  # the harness could not run the scenario

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def calls(self) -> list[dict[str, Any]]:
        """Each requested tool call with the status it finished with."""
        done = {e.call_id: e for e in self.of("tool_finished")}
        return [
            {
                "name": e.name,
                "args": e.args,
                "status": done[e.call_id].status if e.call_id in done else "unfinished",
                "result": _result_text(done.get(e.call_id)),
            }
            for e in self.of("tool_call_started")
        ]

    def results(self) -> str:
        """Every finished tool's result text, as the run's tools produced it."""
        return "\n".join(_result_text(e) for e in self.of("tool_finished"))

    def answer(self) -> str:
        done = self.of("run_finished")
        return done[-1].answer if done else ""

    def stop_reason(self) -> str:
        done = self.of("run_finished")
        return done[-1].reason if done else "none"


def _result_text(event: Any) -> str:
    if event is None:
        return ""
    return "\n".join(x for x in (event.summary, event.content, event.error or "") if x)


@dataclass(frozen=True)
class Failure:
    check: str  # tools | order | study | answer | citations | limits | plan
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "message": self.message}


def holds(predicate: Any, value: Any) -> bool:
    """A predicate over a value: a literal (equal) or an object of operators, all of which hold."""
    if not isinstance(predicate, dict):
        return bool(value == predicate)
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    tests = {
        "equals": lambda p: value == p,
        "contains": lambda p: str(p).lower() in text.lower(),
        "regex": lambda p: re.search(str(p), text) is not None,
        "in": lambda p: value in p,
        "gte": lambda p: isinstance(value, int | float) and value >= p,
        "lte": lambda p: isinstance(value, int | float) and value <= p,
        "exists": lambda p: (value is not None) == bool(p),
    }
    unknown = set(predicate) - set(tests)
    if unknown:
        raise ValueError(
            f"unknown predicate operator(s) {sorted(unknown)}; allowed: {sorted(tests)}"
        )
    return all(tests[op](p) for op, p in predicate.items())


def matches(spec: dict[str, Any], call: dict[str, Any], statuses: tuple[str, ...]) -> bool:
    """A call matches a spec: its name, every argument predicate, and an allowed status."""
    if call["name"] != spec["name"]:
        return False
    wanted = spec.get("status", statuses)
    if call["status"] not in ([wanted] if isinstance(wanted, str) else wanted):
        return False
    if "result" in spec and not holds(spec["result"], call.get("result", "")):
        return False  # what the tool returned: the outcome, whatever arguments got it there
    args = call["args"] or {}
    return all(holds(p, args.get(k)) for k, p in (spec.get("args") or {}).items())


def _spec(item: Any) -> dict[str, Any]:
    return {"name": item} if isinstance(item, str) else dict(item)


def check_tools(checks: dict[str, Any], run: RunRecord) -> list[Failure]:
    calls = run.calls()
    out = []
    for item in checks.get("called", []):
        spec = _spec(item)
        if not any(matches(spec, c, RAN) for c in calls):
            seen = [
                f"{c['name']}({json.dumps(c['args'], default=str)[:80]}) {c['status']}"
                for c in calls
            ]
            out.append(
                Failure("tools", f"expected a call {json.dumps(spec)}; calls: {seen or 'none'}")
            )
    any_status = ("success", "cached", "error", "refused", "skipped", "unfinished")
    for item in checks.get("not_called", []):
        spec = _spec(item)
        bad = [c for c in calls if matches(spec, c, any_status)]
        if bad:
            out.append(
                Failure("tools", f"{spec['name']} must not be called; it was ({bad[0]['status']})")
            )
    order = checks.get("order", [])
    if order:
        done = [c["name"] for c in calls if c["status"] in RAN]
        it = iter(done)
        if not all(name in it for name in order):
            out.append(
                Failure("order", f"expected successful calls in the order {order}; got {done}")
            )
    if "max_calls" in checks and len(calls) > checks["max_calls"]:
        out.append(Failure("tools", f"{len(calls)} tool calls, more than {checks['max_calls']}"))
    if checks.get("clean"):
        out += _clean(run, calls)
    return out


REWRITTEN = "arguments were fixed before it ran"  # agent/repair.py's notice


def _clean(run: RunRecord, calls: list[dict[str, Any]]) -> list[Failure]:
    """Every call ran as the model sent it: none refused, skipped, failed or sent back, and no
    argument changed by brainchat (a strong model's sound calls are never second-guessed)."""
    out = [
        Failure(
            "tools",
            f"{c['name']}({json.dumps(c['args'], default=str)[:80]}) {c['status']}: {c['result'][:200]}",
        )  # fmt: skip
        for c in calls
        if c["status"] not in RAN
    ]
    fixed = [n.message for n in run.of("notice") if REWRITTEN in n.message]
    out += [Failure("tools", f"brainchat changed a call: {m[:200]}") for m in fixed]
    return out


def check_study(checks: dict[str, Any], run: RunRecord) -> list[Failure]:
    out = []
    if "stage" in checks and run.stage != checks["stage"]:
        out.append(Failure("study", f"study stage is {run.stage!r}, expected {checks['stage']!r}"))
    if "recordings" in checks and not holds(checks["recordings"], run.recordings):
        out.append(
            Failure(
                "study", f"{run.recordings} recording(s) loaded, expected {checks['recordings']}"
            )
        )
    steps = iter(run.steps)
    for want in checks.get("steps", []):
        want = _spec(want) if not isinstance(want, dict) else want
        op = want.get("op", want.get("name"))
        if not any(
            s["op"] == op
            and all(holds(p, s["params"].get(k)) for k, p in want.get("params", {}).items())
            for s in steps
        ):
            have = [f"{s['op']}{s['params']}" for s in run.steps]
            out.append(
                Failure(
                    "study",
                    f"the study's steps lack {json.dumps(want)} (in order); steps: {have or 'none'}",
                )
            )
            break
    return out


def check_answer(checks: dict[str, Any], run: RunRecord) -> list[Failure]:
    answer = run.answer()
    low = answer.lower()
    out = [
        Failure("answer", f"the answer does not contain {s!r}")
        for s in checks.get("contains", [])
        if s.lower() not in low
    ]
    out += [
        Failure("answer", f"the answer contains {s!r}, which it must not")
        for s in checks.get("not_contains", [])
        if s.lower() in low
    ]
    out += [
        Failure("answer", f"the answer does not match /{r}/")
        for r in checks.get("regex", [])
        if re.search(r, answer, re.IGNORECASE | re.MULTILINE) is None
    ]
    if checks.get("cites_source"):
        out += _citations(run, answer)
    if checks.get("lists_files"):
        out += _listed_files(run, answer)
    if checks.get("figures_from_tools"):
        out += _tool_figures(run, answer)
    if checks.get("grounded"):
        out += _grounded(run)
    if checks.get("flagged"):
        out += _flagged(run, str(checks["flagged"]))
    return out


def _flagged(run: RunRecord, claim: str) -> list[Failure]:
    """The answer check flagged the given (planted) claim: a flagged sentence is part of it."""
    flags = [f for e in run.of("answer_checked") for f in e.flags]
    if any(f["sentence"].strip() and f["sentence"].strip() in claim for f in flags):
        return []
    said = [f["sentence"][:60] for f in flags]
    return [Failure("answer", f"the false claim {claim!r} was not flagged (flagged: {said})")]


def _listed_files(run: RunRecord, answer: str) -> list[Failure]:
    """The answer names a file a tool listed (by name or stem), and no file no tool showed."""
    shown = {m.rsplit("/", 1)[-1] for m in FILE.findall(run.results())}
    if not shown:
        return [Failure("answer", "no tool result listed a data file")]
    named = {m.rsplit("/", 1)[-1] for m in FILE.findall(answer)}
    invented = sorted(named - shown)
    if invented:
        return [Failure("answer", f"the answer names files no tool listed: {invented[:3]}")]
    stems = {name.rsplit(".", 1)[0] for name in shown}
    if not any(stem in answer for stem in stems):
        return [Failure("answer", f"the answer names none of the listed files ({len(shown)})")]
    return []


def _figure(text: str) -> float:
    value = float(text.rstrip("% \t"))
    return round(value / 100 if text.endswith("%") else value, 3)


# a conventional significance threshold is no figure a tool must produce: "significant at the
# 0.05 level", "p < 0.05"
THRESHOLD = re.compile(
    r"(?:\bp\s*[<>≤]\s*|\balpha\s*=?\s*|α\s*=?\s*|\bat the\s+)0?\.(?:05|01|001)\b", re.I
)


def _tool_figures(run: RunRecord, answer: str) -> list[Failure]:
    """The answer states figures (decimals, percentages) and each is one a tool produced."""
    stated = {_figure(m) for m in DECIMAL.findall(THRESHOLD.sub("", answer))}
    if not stated:
        return [Failure("answer", "the answer states no figure")]
    produced = {_figure(m) for m in NUMBER.findall(run.results())}
    produced |= {round(v * 100, 3) for v in produced} | {round(v / 100, 3) for v in produced}
    missing = sorted(stated - produced)
    if missing:
        return [Failure("answer", f"figures no tool produced: {missing[:5]}")]
    return []


def _grounded(run: RunRecord) -> list[Failure]:
    """The answer check (the ledger) flagged no statement of the answer."""
    stats = run.of("stats")
    flagged = stats[-1].unverified if stats else 0
    if flagged:
        return [Failure("answer", f"{flagged} statement(s) of the answer the run cannot show")]
    return []


def _citations(run: RunRecord, answer: str) -> list[Failure]:
    """At least one [n], and every [n] names a source the run's searches really returned."""
    real = {int(s["n"]) for e in run.of("citations") for s in e.sources}
    cited = {int(n) for n in CITE.findall(answer)}
    if not cited:
        return [Failure("citations", "the answer cites no source ([n])")]
    fake = sorted(cited - real)
    if fake:
        return [
            Failure(
                "citations",
                f"the answer cites {fake}, which no search returned (real: {sorted(real)})",
            )
        ]
    return []


def check_limits(checks: dict[str, Any], run: RunRecord, metrics: dict[str, Any]) -> list[Failure]:
    out = []
    bounds = {
        "max_iterations": ("iterations", "function-call model calls"),
        "max_rounds": ("rounds", "tool rounds"),
        "max_seconds": ("total_seconds", "seconds"),
        "max_tokens": ("tokens", "tokens"),
        "max_cost": ("cost", "USD"),
    }
    for key, (metric, unit) in bounds.items():
        value = metrics.get(metric)
        if key in checks and value is not None and value > checks[key]:
            out.append(Failure("limits", f"{value} {unit}, more than the limit {checks[key]}"))
    if "stop_reason" in checks and not holds(checks["stop_reason"], run.stop_reason()):
        out.append(
            Failure(
                "limits",
                f"the run stopped with {run.stop_reason()!r}, expected {checks['stop_reason']}",
            )
        )
    return out


def _plan_facts(run: RunRecord) -> dict[str, Any]:
    """The run's plan as checks see it: made or not, planned tools, final step statuses."""
    created = run.of("plan_created")
    final: dict[int, str] = {}
    for e in run.of("plan_step_updated"):
        final[e.step_id] = e.status
    return {
        "made": bool(created),
        "tools": [st.get("tool") for st in created[0].steps] if created else [],
        "verified": sum(s == "done" for s in final.values()),
        "failed": sum(s == "failed" for s in final.values()),
        "replans": len(run.of("replanned")),
        "claims": sum(n.kind == "unverified_claim" for n in run.of("notice")),
    }


def check_plan(checks: dict[str, Any], run: RunRecord) -> list[Failure]:
    """Plan mode: whether a plan was made, its tools in order, verified/failed steps, replans,
    and answers that claimed a step the run did not verify."""
    if not checks:
        return []
    facts = _plan_facts(run)
    out = []
    if "made" in checks and facts["made"] != bool(checks["made"]):
        out.append(Failure("plan", f"a plan was {'' if facts['made'] else 'not '}made"))
    it = iter(facts["tools"])
    if "tools" in checks and not all(t in it for t in checks["tools"]):
        out.append(
            Failure("plan", f"planned tools {facts['tools']}, expected in order {checks['tools']}")
        )
    for key in ("verified", "failed", "replans", "claims"):
        if key in checks and not holds(checks[key], facts[key]):
            out.append(Failure("plan", f"{key} = {facts[key]}, expected {checks[key]}"))
    return out


def evaluate(checks: dict[str, Any], run: RunRecord, metrics: dict[str, Any]) -> list[Failure]:
    """Every failure of a scenario's checks on one run (empty: it passed)."""
    if run.error:
        return [Failure("harness", run.error)]
    out = check_tools(checks.get("tools", {}), run)
    out += check_study(checks.get("study", {}), run)
    out += check_answer(checks.get("answer", {}), run)
    out += check_limits(checks.get("limits", {}), run, metrics)
    out += check_plan(checks.get("plan", {}), run)
    return out
