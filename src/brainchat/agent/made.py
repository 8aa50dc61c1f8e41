"""Rounds brainchat makes itself in a guarded run: reports it calls before the model's first
request or when the model stopped short of one the request asks for, and the one reminder of
asked steps that never ran. Each is a real round, shown and recorded like any other."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from brainchat.agent.context import AgentState, Deps
from brainchat.agent.guards import in_force
from brainchat.agent.state import RunContext
from brainchat.events import Evaluation, Notice, emit


def opening(state: AgentState, round_: int, calls: list[dict[str, Any]]) -> AgentState:
    """Calls brainchat makes itself before the model's first request (a guard's `opening`): a
    real round of the run, shown like any other, whose results the model then reads."""
    names = ", ".join(str(c["name"]) for c in calls)
    emit(
        Notice(
            kind="info",
            message=f"brainchat called {names} first, so the model works from what exists "
            "instead of guessing it.",
        )
    )
    ai = AIMessage(content="", tool_calls=[{**c, "type": "tool_call"} for c in calls])
    return {
        "round": round_,
        "messages": [*state["messages"], ai],
        "pending_calls": calls,
        "verdict_note": None,
    }


def closing(
    state: AgentState, round_: int, ai: AIMessage, calls: list[dict[str, Any]]
) -> AgentState:
    """Calls brainchat makes itself when the model stopped short of results the request asks
    for (a guard's `closing`): a real round, shown like any other, whose results the model then
    reads before it is asked whether it needs more."""
    names = ", ".join(str(c["name"]) for c in calls)
    emit(Notice(kind="info", message=f"brainchat called {names}: the request asks for its result and the model stopped without it."))  # fmt: skip
    made = AIMessage(content="", tool_calls=[{**c, "type": "tool_call"} for c in calls])
    return {
        "round": round_,
        "messages": [*state["messages"], ai, made],
        "pending_calls": calls,
        "verdict_note": None,
    }


def remind(
    d: Deps, run: RunContext, state: AgentState, round_: int, ai: AIMessage
) -> AgentState | None:
    """A guard's reminder when the model stopped calling tools early (once per run, with a
    model call to spare); the graph routes decide back to decide to read it."""
    if state.get("reminded") or round_ >= d.limits.max_iterations:
        return None
    note = in_force(d).stopped(d, run)
    if note is None:
        return None
    emit(Evaluation(verdict="continue", reason="asked steps never ran: the model is reminded once", round=round_))  # fmt: skip
    return {
        "round": round_,
        "messages": [*state["messages"], ai, HumanMessage(note)],
        "reminded": True,
        "verdict_note": None,  # the reminder is the newest word
    }
