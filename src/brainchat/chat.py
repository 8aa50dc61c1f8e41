"""Chat mode: one model streams an answer with the (trimmed) conversation as context."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from brainchat.events import (
    Event,
    Notice,
    RunFinished,
    RunStarted,
    Stats,
    emit,
    stream_events,
)
from brainchat.grounding import NoTools, ground
from brainchat.llm import cut_notice_text, describe_error, make_chat_model
from brainchat.modelclient import ModelClient, Streamed
from brainchat.prompts import load_prompt
from brainchat.settings import ModelSpec
from brainchat.usage import (
    UsageCallback,
    UsageLedger,
    count_message_tokens,
    count_tokens,
    fit_history,
    reply_reserve,
)


def stream_chat(
    spec: ModelSpec,
    history: list[BaseMessage],
    question: str,
    callback: UsageCallback | None = None,
) -> AsyncIterator[Event]:
    """Yield the events of one chat turn. The caller owns `history` and appends on success.

    Pass `callback` (a UsageCallback) to read the usage so far while the turn runs (stop button).
    """
    callback = callback or UsageCallback(UsageLedger({"chat": spec}))

    async def work() -> None:
        await _chat_turn(spec, history, question, callback)

    return stream_events(work)


async def _chat_turn(
    spec: ModelSpec, history: list[BaseMessage], question: str, callback: UsageCallback
) -> None:
    started = time.perf_counter()
    emit(RunStarted(mode="chat", question=question, models={"chat": spec.name}))
    system = SystemMessage(load_prompt("chat", spec.prompt_variant))
    # No floor: input + the reply's max_tokens must stay within the window. Settings keep
    # max_tokens at most half the window; a spec built otherwise refuses rather than overflows.
    budget = spec.context_window - reply_reserve(spec)
    ledger = callback.ledger
    if count_message_tokens([system, HumanMessage(question)]) > budget:
        # The question's own size, and the room the prompt and the reply leave it
        room = max(budget - count_message_tokens([system]) - 3, 0)
        too_long = (
            f"Your message is about {count_tokens(question):,} tokens; {spec.name} has room for "
            f"about {room:,} (context window {spec.context_window:,} tokens, less the "
            f"instructions and {reply_reserve(spec):,} kept for the answer)."
        )
        emit(Notice(kind="error", message=too_long, hint="Shorten it, attach it as a file in "
                    "Agent mode, or pick a model with a larger context window."))  # fmt: skip
        emit(Stats(rows=ledger.stats(), total_seconds=0.0, ttft=None, total_cost=None))
        emit(RunFinished(reason="error", answer="", error=too_long))
        return
    question_message = HumanMessage(question)
    fixed = count_message_tokens([system, question_message])
    messages = [system, *fit_history(history, fixed, budget), question_message]
    client = ModelClient(make_chat_model(spec, "chat"), spec, spec.name)
    out, error = Streamed(), None
    try:
        await client.text(messages, [callback], out, quiet_retry=True)
    except Exception as exc:  # noqa: BLE001 - every model failure becomes a message
        error = describe_error(exc, spec, midstream=bool(out.parts))
    answer = out.text
    if out.repeated is None and out.cut and not error:
        told, hint = cut_notice_text(spec, spec.name)
        emit(Notice(kind="info", message=told, hint=hint))
    # Chat has no tools and no sources: a citation marker there cites nothing
    answer, unverified = ground(answer, NoTools(), [], [], figures=False, claims=False)
    if error:
        emit(
            Notice(
                kind="error",
                message=error,
                hint="Your conversation is kept; send the message again.",
            )
        )
    ttft = ledger.rows["chat"].ttft if "chat" in ledger.rows else None
    emit(
        Stats(
            rows=ledger.stats(),
            total_seconds=round(time.perf_counter() - started, 4),
            ttft=ttft,
            total_cost=ledger.total_cost(),
            unverified=unverified,
        )
    )
    emit(RunFinished(reason="error" if error else "answered", answer=answer, error=error))


def record_turn(history: list[BaseMessage], question: str, answer: str) -> None:
    """Append a finished turn to the conversation (only answered turns become context)."""
    history.append(HumanMessage(question))
    history.append(AIMessage(answer))
