"""Plans for multi-step requests: made by the function-call model, validated, verified by facts.

A step is verified only by what happened: the tool ledger (a call of the step's tool succeeded)
and, for EEG steps, the study (its stage and recorded operations match the call's arguments).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from brainchat.agent.state import LedgerEntry
from brainchat.events import PlanStatus
from brainchat.prompts import load_prompt

MAX_STEPS = 12
Facts = Callable[[], dict[str, Any]]  # {"stage": str, "steps": [{"op", "params"}], "models": [..]}

PLAN_TOOL = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Submit the plan of the request's steps.",
        "parameters": {
            "type": "object",
            "properties": {
                "needs_plan": {"type": "boolean"},
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"title": {"type": "string"}, "tool": {"type": "string"}},
                        "required": ["title"],
                    },
                },
            },
            "required": ["steps"],
        },
    },
}


class StepSpec(BaseModel):
    title: str = Field(min_length=1, max_length=200)
    tool: str | None = None


class PlanSpec(BaseModel):
    needs_plan: bool = True
    steps: list[StepSpec] = Field(default_factory=list, max_length=MAX_STEPS)


@dataclass
class PlanStep:
    id: int
    title: str
    tool: str | None = None
    status: PlanStatus = "ready"
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "tool": self.tool, "status": self.status}


@dataclass
class Plan:
    steps: list[PlanStep]
    replans: int = 0
    failed_reason: str = ""
    history: list[str] = field(default_factory=list)  # why each replan happened
    replaced: set[int] = field(default_factory=set)  # failed steps a replan took over

    def current(self) -> PlanStep | None:
        return next((s for s in self.steps if s.status in ("ready", "running")), None)

    def done(self) -> bool:
        """Every step verified, except failed ones whose work the replanned steps took over."""
        return all(s.status == "done" or s.id in self.replaced for s in self.steps)


def parse_plan(reply: Any, tools: set[str]) -> tuple[PlanSpec | None, str]:
    """The plan in a model reply (a submit_plan call or JSON text), validated; else why not."""
    raw: Any = None
    for call in getattr(reply, "tool_calls", None) or []:
        if call.get("name") == "submit_plan":
            raw = call.get("args")
    if raw is None:
        text = reply.content if isinstance(reply.content, str) else ""
        match = re.search(r"\{.*\}", text, re.DOTALL)
        if not match:
            return None, "the model did not call submit_plan"
        try:
            raw = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None, "the plan was not valid JSON"
    try:
        spec = PlanSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        return None, f"the plan is invalid ({'.'.join(map(str, first['loc']))}: {first['msg']})"
    unknown = sorted({s.tool for s in spec.steps if s.tool and s.tool not in tools})
    if unknown:
        return None, f"the plan names tools that do not exist: {', '.join(unknown)}"
    if spec.needs_plan and not spec.steps:
        return None, "the plan has no steps"
    return spec, ""


def planner_messages(
    question: str, tools: dict[str, str], study: str, mode: str, done: str = ""
) -> list[Any]:
    """The planner's request; `done` (for a replan) says what was done and what failed."""
    rule = (
        "Always plan, even a single step."
        if mode == "always"
        else "Set needs_plan to false (and no steps) when the request needs fewer than "
        "2 dependent tool steps; the agent then works without a plan."
    )
    listing = "\n".join(f"- {name}: {desc[:160]}" for name, desc in sorted(tools.items()))
    system = load_prompt("planner")
    for key, value in (("{tools}", listing), ("{study}", study), ("{mode_rule}", rule)):
        system = system.replace(key, value)
    user = f"Request: {question}"
    if done:
        user += (
            f"\n\n{done}\n\nWrite only the remaining steps (from the failed one on), a "
            "different way if the failure says the old way cannot work."
        )
    return [SystemMessage(system), HumanMessage(user)]


StudyCheck = Callable[[str, dict[str, Any], dict[str, Any]], bool | None]  # (tool, args, facts)


def verify(
    step: PlanStep,
    entries: list[LedgerEntry],
    facts: Facts | None,
    shows: StudyCheck = lambda tool, args, facts: None,
) -> tuple[str, str, LedgerEntry | None]:
    """("done" | "failed" | "pending", evidence, the call that did it) after a tool round.
    `shows(tool, args, facts)`: whether the study shows the call's effect (None: it cannot
    tell; the domain's check, brainchat.domain.Domain.shows)."""
    mine = [e for e in entries if step.tool is None or e.name == step.tool]
    if not mine:
        return "pending", "not attempted yet", None
    ok = [e for e in mine if e.status == "success"]
    if not ok:
        last = mine[-1]
        return "failed", f"{last.name} {last.status}: {last.error or 'no result'}", None
    entry = ok[-1]
    if facts is None:
        return "done", f"verified: {entry.name} succeeded (tool ledger)", entry
    try:
        state = facts()
    except Exception as exc:  # noqa: BLE001 - a broken summary is an unverified step, not a crash
        return "failed", f"the study could not be read to verify {entry.name}: {exc}", None
    shown = shows(entry.name, entry.args, state)
    if shown is None:
        return "done", f"verified: {entry.name} succeeded (tool ledger)", entry
    if shown:
        stage = state.get("stage")
        return "done", f"verified: {entry.name} succeeded and the study shows it ({stage})", entry
    ops = [s.get("op") for s in state.get("steps") or []]
    why = f"{entry.name} reported success but the study does not show it (stage {state.get('stage')}, steps {ops})"
    return "failed", why, None


def answer_section(plan: Plan) -> str:
    """The plan as the answer model sees it: only steps marked VERIFIED may be claimed."""
    marks = {"done": "VERIFIED", "failed": "FAILED", "running": "NOT DONE", "ready": "NOT DONE"}
    lines = ["Plan (each step checked against the tool ledger and the study):"]
    for s in plan.steps:
        lines.append(
            f"{s.id}. {s.title} — {marks[s.status]}" + (f" ({s.detail})" if s.detail else "")
        )
    if plan.replans:
        lines.append(f"The plan was revised {plan.replans} time(s): {'; '.join(plan.history)}")
    lines.append(
        "Claim only VERIFIED steps as done. Say plainly which steps FAILED (and why) or were "
        "NOT DONE; never describe their results."
    )
    return "\n".join(lines)


NEGATION = re.compile(
    r"\b(not|no|never|failed|fail|fails|unable|cannot|could ?n[o']t|did ?n[o']t|was ?n[o']t|"
    r"remain|remains|pending|skipped|refused|error|instead|unverified)\b|n't\b",
    re.IGNORECASE,
)


def _keywords(step: PlanStep) -> list[str]:
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9+]{3,}", step.title)]
    return [w[:-1] if w.endswith("e") else w for w in words]  # "compare" matches "compared"


def unverified_claims(answer: str, plan: Plan) -> list[tuple[PlanStep, str]]:
    """Sentences that present a step that was not verified as done (no negation near it)."""
    out: list[tuple[PlanStep, str]] = []
    sentences = [s.strip() for s in re.split(r"(?<=[.!?\n])\s+", answer) if s.strip()]
    for step in plan.steps:
        if step.status == "done":
            continue
        words = _keywords(step)
        tool = (step.tool or "").lower()
        for sentence in sentences:
            low = sentence.lower()
            hits = sum(w in low for w in words)
            named = bool(tool) and (tool in low or tool.replace("_", " ") in low)
            if (named or (words and hits >= max(1, (len(words) + 1) // 2))) and not NEGATION.search(
                sentence
            ):
                out.append((step, sentence))
                break
    return out
