"""What the model and the UI read of a finished call: its message, its notes, its event."""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from typing import Any

from brainchat.agent.policy import next_call
from brainchat.agent.state import LedgerEntry, Seen
from brainchat.agent.verdicts import Suggest
from brainchat.events import ToolFinished


def for_model(entry: LedgerEntry, tools: Collection[str] = ()) -> str:
    if entry.status == "success":
        return entry.result
    if entry.status == "skipped" and entry.reused is not None:
        if entry.reused.batch:
            return (
                f"You sent the same batch of calls as in round {entry.reused.round}; it already ran "
                f"and changes state, so running it again would apply it twice. {entry.name} gave:"
                f"\n{entry.result}\nDo not send this batch again; go on with the next step."
            )
        if entry.reused.changed:
            return (
                f"You already ran {entry.name} with these arguments in round "
                f"{entry.reused.round}; it changed the study, and the study is the same since "
                "(a failed call changes nothing), so running it again would apply it twice. It "
                f"was not run again. Its result was:\n{entry.result}\nDo not call it again; "
                "go on with the next step."
            )
        if entry.reused.status == "success":
            return (
                f"You already called {entry.name} with these arguments in round {entry.reused.round} "
                f"and nothing that changes state ran since. Its result was:\n{entry.result}\n"
                "Do not call it again; use this result or try different arguments."
            )
        if entry.reused.status == "refused":
            return (
                f"You already called {entry.name} with these arguments in round "
                f"{entry.reused.round} and it was refused: {entry.result}\nIt is not asked "
                "again; go on without it, or answer."
            )
        return (
            f"You already called {entry.name} with these arguments in round {entry.reused.round} "
            f"and it failed: {entry.result}\nNothing changed since, so it would fail again. "
            f"Next: {next_call(entry.name, entry.reused.fix, tools)}."  # a concrete call
        )
    return f"Error: {entry.error_text or entry.error}"  # whole: fit_run cuts it like a result


def reuse_note(seen: Seen) -> str:
    if seen.changed:
        return (
            f"not run again: it already ran in round {seen.round} and changed the study, which "
            "is the same since; running it again would apply it twice"
        )
    if seen.batch:
        return f"not run again: the same batch of calls ran in round {seen.round}; running it again would apply it twice"
    if seen.status == "success":
        return f"not run again: reused the result of the identical call in round {seen.round} (nothing that changes state ran since)"
    if seen.status == "refused":
        return f"not run again: the identical call was refused in round {seen.round} ({seen.text})"
    return (
        f"not run again: the identical call failed in round {seen.round} and nothing changed since"
    )


def suggestion(name: str, decision: Suggest) -> str:
    """A call sent back with suggested arguments: what conflicts, and the call suggested; the
    same call sent again unchanged runs as it is."""
    call = json.dumps({"name": name, "arguments": decision.args}, ensure_ascii=False, default=str)
    return (
        f"not run yet: {decision.why}. Suggested call: {call} (the same call sent again "
        "unchanged runs as it is)"
    )


def over_cap(name: str, cap: int) -> str:
    return (
        f"refused: the reply asked for more than {cap} tool calls and only the first {cap} ran; "
        f"call {name} in your next step if it is still needed"
    )


def finished_event(entry: LedgerEntry, duration: float) -> ToolFinished:
    status: Any = {"success": "success", "skipped": "skipped", "refused": "refused"}.get(
        entry.status, "error"
    )
    # Every result (web_search returns at most 10): the step's count and its list are one list.
    top = [{"title": s["title"], "url": s["url"], "snippet": s["snippet"]} for s in entry.sources]
    if top:
        summary = f"{len(top)} results" + (" (from cache)" if entry.cache_hit else "")
    elif entry.status == "success":
        first = entry.result.strip().splitlines()[0] if entry.result.strip() else "(empty result)"
        summary = first[:200]
    else:
        summary = entry.error or entry.status
    error = entry.error_text or entry.error
    return ToolFinished(
        call_id=entry.call_id,
        name=entry.name,
        status=status,
        duration=round(duration, 4),
        summary=summary,
        content=entry.result[:4000],
        error=error if status != "success" else None,
        cache_hit=entry.cache_hit,
        result_count=len(top) if top else None,
        top=top,
        structured=entry.structured,
        started_at=entry.started_at,
        finished_at=entry.finished_at or time.time(),
    )
