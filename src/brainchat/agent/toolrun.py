"""Running one round of tool calls: validation, confirmation, timeouts, parallelism, the ledger."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from pydantic import ValidationError

from brainchat.agent.approval import Ask, Confirm, ask_for, request
from brainchat.agent.repair import repair_note, repaired, validation_text
from brainchat.agent.state import LedgerEntry, RunContext, Seen, call_signature
from brainchat.agent.textcalls import unknown_tool
from brainchat.agent.toolnotes import finished_event, for_model, reuse_note, suggestion
from brainchat.agent.toolnotes import over_cap as cap_note
from brainchat.agent.verdicts import Decision, Refuse, Suggest
from brainchat.events import ToolCallStarted, emit, set_tool_call
from brainchat.tools.errors import fix_of
from brainchat.tools.registry import flags_of

ANONE = ": it asks the user first, and this run has no one to ask"  # headless refusal
Facts = Callable[[], dict[str, Any]]  # the study's stage, steps and models (session/study_slot)
Gate = Callable[[dict[str, Any]], Decision]  # the guards' word on a call before it runs


class ToolRunner:
    """Executes tool calls for the act node; no exception ever leaves `run_round`."""

    def __init__(
        self,
        tools: list[BaseTool],
        default_timeout: float,
        confirm: Confirm | None,
        confirm_timeout: float,
        max_calls: int = 8,
    ) -> None:
        self.tools = {t.name: t for t in tools}
        self.default_timeout = default_timeout
        self.confirm = confirm
        self.confirm_timeout = confirm_timeout
        self.max_calls = max_calls

    async def run_round(
        self,
        ctx: RunContext,
        calls: list[dict[str, Any]],
        round_: int,
        last: list[LedgerEntry] | None = None,
        facts: Facts | None = None,
        gate: Gate | None = None,
    ) -> tuple[list[ToolMessage], list[LedgerEntry], bool]:
        """Run a model response's calls (`last`: the round before; `facts`: the study's, to tell
        whether it is the same as when a call last ran; `gate`: the guards' word on each call
        before it runs); returns tool messages (in order), entries, and whether all were
        repeats."""
        calls = [repaired(c, self.tools.get(c["name"])) for c in calls]
        entries = [
            ctx.ledger.open(
                c.get("id") or f"call_{round_}_{i}", c["name"], c.get("args") or {}, round_
            )
            for i, c in enumerate(calls)
        ]
        for entry, call in zip(entries, calls, strict=True):
            if call.get("invalid"):
                entry.error, entry.invalid = call["invalid"], True
                entry.fix = call.get("fix")
        cap = self.max_calls
        refused = {e.call_id for e in entries[cap:]}  # a reply of 200 calls runs the first `cap`
        again = self._same_batch(last or [], entries)
        runs = [
            self._run_one(
                ctx, e, facts, gate, over_cap=e.call_id in refused, again=again.get(e.call_id)
            )
            for e in entries
        ]
        if all(self._read_only(e.name) for e in entries) and len(runs) > 1:
            await asyncio.gather(*runs)
        else:
            for run in runs:
                await run
        messages = [
            ToolMessage(
                content=_renamed(c) + repair_note(c) + for_model(e, self.tools),
                tool_call_id=e.call_id,
                name=e.name,
                status="success" if e.status == "success" else "error",
            )
            for e, c in zip(entries, calls, strict=True)
        ]
        looped = bool(entries) and all(e.reused is not None for e in entries)
        return messages, entries, looped

    def _read_only(self, name: str) -> bool:
        tool = self.tools.get(name)
        return tool is not None and flags_of(tool).read_only

    def _same_batch(self, last: list[LedgerEntry], entries: list[LedgerEntry]) -> dict[str, Seen]:
        """The last round's batch sent again, call for call, with a state-changing call in it: its
        outcomes, by this round's call id. Each call of [load, band-pass] resets what was seen,
        so call by call nothing repeats, yet running the batch again band-passes twice."""

        def sig(batch: list[LedgerEntry]) -> list[str]:
            return [call_signature(e.name, e.args) for e in batch]

        same = len(entries) > 1 and sig(entries) == sig(last)
        if not same or all(self._read_only(e.name) for e in entries):
            return {}
        return {
            e.call_id: replace(before.reused or _outcome(before), batch=True)
            for e, before in zip(entries, last, strict=True)
        }

    async def _run_one(
        self,
        ctx: RunContext,
        entry: LedgerEntry,
        facts: Facts | None,
        gate: Gate | None,
        *,
        over_cap: bool,
        again: Seen | None = None,
    ) -> None:
        tool = self.tools.get(entry.name)
        source = flags_of(tool).source if tool else "unknown"
        emit(
            ToolCallStarted(
                call_id=entry.call_id,
                name=entry.name,
                args=entry.args,
                source=source,
                round=entry.round,
            )
        )
        started = time.perf_counter()
        token = set_tool_call(entry.call_id, entry.name)
        try:
            if over_cap:
                entry.finish("refused", error=cap_note(entry.name, self.max_calls))
            else:
                # Checked here, not before the round: an earlier call of this round may have
                # changed state, and then a repeat is no longer a loop.
                key = _key(entry)
                seen = ctx.seen.get(key)
                if seen is not None and seen.mark is not None and seen.mark != _mark(facts):
                    seen = None  # the study changed since (a replay, another tab): run it
                await self._execute(ctx, entry, tool, again or seen, key, facts, gate)
        except asyncio.CancelledError:
            entry.finish("cancelled", error="the run was cancelled")
            raise
        finally:
            duration = time.perf_counter() - started
            ctx.tool_seconds += duration
            if entry.status != "cancelled":
                emit(finished_event(entry, duration))
            from brainchat.events import _tool_call

            _tool_call.reset(token)

    async def _execute(
        self,
        ctx: RunContext,
        entry: LedgerEntry,
        tool: BaseTool | None,
        repeat: Seen | None,
        key: str,
        facts: Facts | None = None,
        gate: Gate | None = None,
    ) -> None:
        if repeat is not None:  # checked first: the same broken call twice is a loop too
            entry.reused = repeat
            entry.finish("skipped", result=repeat.text, error=reuse_note(repeat))
            return
        if entry.error is not None or tool is None:
            unknown = f"unknown tool {unknown_tool(entry.name, self.tools)}"
            entry.finish("error", error=entry.error or unknown)
            ctx.remember(entry, read_only=True, key=key)
            return
        decision = gate({"name": entry.name, "args": entry.args}) if gate is not None else None
        if isinstance(decision, Refuse):
            entry.finish("refused", error=decision.why)
            ctx.remember(entry, read_only=True, key=key)  # asked again: a repeat, then a loop
            return
        if isinstance(decision, Suggest):
            # not remembered: the same call sent again is the model's decision, and runs
            entry.finish("refused", error=suggestion(entry.name, decision))
            return
        flags = flags_of(tool)
        ask = ask_for(tool)
        if ask is not None and not await self._confirmed(ctx, entry, ask):
            # a headless run (`brainchat ask`) asks no one, and says so: "the user did not
            # approve" would read as the user's own refusal
            nobody = "" if ctx.confirm or self.confirm else ANONE
            entry.declined = True
            entry.finish(
                "refused",
                error=f"the user did not approve running {entry.name}{nobody}; continue without it",
            )
            ctx.remember(entry, read_only=True, key=key)  # the same call is not asked again
            return
        before = None if flags.read_only else _mark(facts)
        await self._invoke(ctx, entry, tool)
        after = _mark(facts)
        # A local step that failed with the study's facts unchanged changed nothing (the study
        # commits a step only when it succeeds): what was seen before it still holds, so
        # band-pass, a failing epoch_data, band-pass again is a repeat, not a second filter.
        kept = entry.status != "success" and flags.source == "local" and before == after
        ctx.remember(entry, flags.read_only or (kept and before is not None), mark=after)

    async def _invoke(self, ctx: RunContext, entry: LedgerEntry, tool: BaseTool) -> None:
        flags = flags_of(tool)
        timeout = flags.timeout or self.default_timeout
        if not flags.long_running:
            # Long-running tools (training, ICA) are bounded by their own timeout and the stop
            # button, not cut by the run's deadline: a half-trained model is worth nothing.
            timeout = min(timeout, max(ctx.remaining(), 0.5))
        try:
            message = await asyncio.wait_for(
                tool.ainvoke(
                    {
                        "name": entry.name,
                        "args": entry.args,
                        "id": entry.call_id,
                        "type": "tool_call",
                    }
                ),
                timeout,
            )
        except TimeoutError:
            entry.finish(
                "error", error=f"{entry.name} did not finish within {timeout:.0f} s and was stopped"
            )
            return
        except ValidationError as exc:
            entry.fix = fix_of(exc)  # a check that names the corrected call carries it
            entry.finish(
                "error", error=f"invalid arguments for {entry.name}: {validation_text(exc)}"
            )
            return
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the run was stopped
            # A library's own cancel scope leaked out of the tool (anyio/MCP do this): that is
            # the tool failing, not the user pressing stop.
            entry.finish("error", error=f"{entry.name} was cancelled from inside the tool")
            return
        except Exception as exc:  # noqa: BLE001 - a tool failure is a message, not a crash
            entry.fix = fix_of(exc)  # a ToolError's fix, as data
            entry.finish("error", error=_error_text(entry.name, exc))
            return
        _absorb(ctx, entry, message)

    async def _confirmed(self, ctx: RunContext, entry: LedgerEntry, ask: Ask) -> bool:
        confirm = ctx.confirm or self.confirm
        if confirm is None:
            return False  # headless runs refuse tools that ask unless a confirm hook allows them
        try:
            answer = request(confirm, entry.name, entry.args, ask)
            return await asyncio.wait_for(answer, self.confirm_timeout) != "reject"
        except TimeoutError:
            return False


def _absorb(ctx: RunContext, entry: LedgerEntry, message: Any) -> None:
    """Take a tool's ToolMessage (content + optional artifact) into the ledger."""
    content = message.content if hasattr(message, "content") else message
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    artifact = getattr(message, "artifact", None)
    if isinstance(artifact, dict):
        if artifact.get("sources"):
            entry.sources = ctx.ledger.number_sources(list(artifact["sources"]))
            text = _numbered_text(entry.sources)
        entry.cache_hit = bool(artifact.get("cache_hit"))
        entry.structured = artifact.get("structured")
    elif artifact is not None:
        entry.structured = artifact
    entry.finish("success", result=text)


def _numbered_text(sources: list[dict[str, Any]]) -> str:
    return "\n".join(f"[{s['n']}] {s['title']}\n{s['url']}\n{s['snippet']}" for s in sources)


def _renamed(call: dict[str, Any]) -> str:
    """What the model reads when its short tool name was run as the one tool it stands for."""
    if not call.get("renamed"):
        return ""
    return (
        f"(there is no tool {call['renamed']!r}: this ran {call['name']}; call it by that name)\n"
    )


def _outcome(entry: LedgerEntry) -> Seen:
    text = entry.result if entry.status == "success" else entry.error or entry.status
    return Seen(entry.status, text, entry.round, fix=entry.fix)


def _mark(facts: Facts | None) -> str | None:
    """The study's facts as one comparable text (None: no study, or its facts unreadable)."""
    if facts is None:
        return None
    try:
        return json.dumps(facts(), sort_keys=True, default=str)
    except Exception:  # noqa: BLE001 - facts are a check, never fatal
        return None


def _key(entry: LedgerEntry) -> str:
    """A call's identity for loops; a call the reply broke (its error set before it runs) is
    told apart by what was wrong with it."""
    invalid = {"(invalid)": entry.error} if entry.status == "pending" and entry.error else {}
    return call_signature(entry.name, {**entry.args, **invalid})


def _error_text(name: str, exc: BaseException) -> str:
    from langchain_core.tools import ToolException

    if isinstance(exc, ToolException):
        return str(exc)
    return f"{name} failed: {type(exc).__name__}: {exc}"
