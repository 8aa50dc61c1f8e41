"""Chat mode: one model streams an answer with the (trimmed) conversation as context."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

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
from brainchat.llm import (
    cut_at_limit,
    cut_notice_text,
    describe_error,
    make_chat_model,
    refuse_stream_usage,
    rejects_stream_options,
    stream_options_retry_text,
    stream_usage_refused,
)
from brainchat.prompts import load_prompt
from brainchat.repeats import RepeatGuard, Repetition, repeat_notice_text, without_repeats
from brainchat.settings import ModelSpec
from brainchat.usage import (
    UsageCallback,
    UsageLedger,
    count_message_tokens,
    count_tokens,
    reply_reserve,
)


def trim_history(
    system: SystemMessage, history: list[BaseMessage], question: HumanMessage, budget: int
) -> list[BaseMessage]:
    """Keep the system prompt, the question and as many recent turns as fit in `budget` tokens."""
    fixed = count_message_tokens([system, question])
    kept: list[BaseMessage] = []
    used = fixed
    for message in reversed(history):
        cost = count_message_tokens([message]) - 3
        if used + cost > budget:
            break
        kept.append(message)
        used += cost
    while kept and not isinstance(kept[-1], HumanMessage):
        kept.pop()  # never start the kept history with a dangling assistant reply
    return [system, *reversed(kept), question]


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
    messages = trim_history(system, history, HumanMessage(question), budget)
    model = make_chat_model(spec, "chat")
    parts: list[str] = []
    error: str | None = None
    refused: BaseException | None = None  # the HTTP 400 that may have been stream_options'
    retried_quietly = False
    cut = False
    repeated: Repetition | None = None
    for _attempt in range(3):
        cut, guard, repeated = False, RepeatGuard(), None
        try:
            usage = refused is None and not stream_usage_refused(spec)
            kwargs: dict[str, Any] = {} if usage else {"stream_usage": False}
            stream: Any = model.astream(messages, config={"callbacks": [callback]}, **kwargs)
            async with aclosing(stream):  # ended early: the HTTP stream closes now
                async for chunk in stream:
                    if isinstance(chunk.content, str):
                        parts.append(chunk.content)
                        if repeated := guard.feed(chunk.content):
                            break
                    cut = cut or cut_at_limit(chunk)
            if refused is not None:  # taken without stream_options: it was them
                refuse_stream_usage(spec)
                told, hint = stream_options_retry_text(spec, refused)
                emit(Notice(kind="info", message=told, hint=hint))
            break
        except Exception as exc:  # noqa: BLE001 - every model failure becomes a message
            if not parts and refused is None and rejects_stream_options(exc, spec):
                refused = exc  # HTTP 400: once more without stream_options, marked if taken
                continue
            if not retried_quietly and not parts and _retryable_midstream(exc):
                retried_quietly = True  # the stream broke before any text: one quiet retry
                continue
            error = describe_error(exc, spec, midstream=bool(parts))
            break
    answer = "".join(parts)
    if repeated is not None:
        answer = without_repeats(answer, repeated)
        told, hint = repeat_notice_text(spec.name, repeated)
        emit(Notice(kind="info", message=told, hint=hint))
    elif cut and not error:
        told, hint = cut_notice_text(spec, spec.name)
        emit(Notice(kind="info", message=told, hint=hint))
    # Chat has no tools and no sources: a citation marker there cites nothing (#23)
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


def _retryable_midstream(exc: BaseException) -> bool:
    import httpx
    import openai

    if isinstance(exc, openai.APIStatusError):
        return False  # the SDK already retried 429/5xx with backoff
    return isinstance(exc, httpx.HTTPError | openai.APIError | ValueError)


def record_turn(history: list[BaseMessage], question: str, answer: str) -> None:
    """Append a finished turn to the conversation (only answered turns become context)."""
    history.append(HumanMessage(question))
    history.append(AIMessage(answer))
