"""One function-call request, made the way the model's server can take it.

Streamed unless the spec says `"stream_tool_calls": false`. A streamed reply that ends with
nothing usable (an empty stream, or one that broke off) is asked again once without streaming;
a server that answers HTTP 400 to `stream_options` is asked again once without it, and usage is
then not asked of that model for the rest of the process. Each retry says so in a notice. A model
that sends nothing within its spec's timeout raises `ModelTimeout`, never a `TimeoutError`, so
the run's own time limit is not blamed for it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage

from brainchat.events import Notice, emit
from brainchat.llm import (
    is_model_timeout,
    never_connected,
    refuse_stream_usage,
    rejects_stream_options,
    stream_options_retry_text,
    stream_usage_refused,
    where,
)
from brainchat.settings import ModelSpec


class ModelTimeout(Exception):
    """The model itself timed out (chunk gap, read timeout); `error` is the original exception."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def stream_options_notice(spec: ModelSpec | None, exc: BaseException, name: str) -> Notice:
    message, hint = stream_options_retry_text(spec, exc, name)
    return Notice(kind="info", message=message, hint=hint)


def usage_kwargs(spec: ModelSpec | None) -> dict[str, Any]:
    """Per-call kwargs: no `stream_options` for a model whose server refused them."""
    return {"stream_usage": False} if spec is not None and stream_usage_refused(spec) else {}


async def ask(
    llm: Any, messages: list[BaseMessage], callbacks: list[Any], spec: ModelSpec | None, name: str
) -> BaseMessage:
    """The function-call model's reply to `messages` (see the module docstring)."""
    streamed = spec is None or spec.stream_tool_calls
    tried_options = retried_plain = False
    while True:
        try:
            if not streamed:
                return await llm.ainvoke(messages, config={"callbacks": callbacks}, stream=False)  # type: ignore[no-any-return]
            reply = await _stream(llm, messages, callbacks, usage_kwargs(spec))
            if not _usable(reply) and not retried_plain:
                retried_plain, streamed = True, False
                emit(_plain_notice(spec, name, "the stream ended with no reply in it"))
                continue
            return reply
        except TimeoutError as exc:
            raise ModelTimeout(exc) from exc
        except Exception as exc:
            if is_model_timeout(exc):
                raise ModelTimeout(exc) from exc
            if streamed and not tried_options and rejects_stream_options(exc, spec):
                tried_options = True
                if spec is not None:
                    refuse_stream_usage(spec)
                    emit(stream_options_notice(spec, exc, name))
                    continue
            if streamed and not retried_plain and _broken_stream(exc):
                retried_plain, streamed = True, False
                emit(_plain_notice(spec, name, f"the stream broke off ({type(exc).__name__})"))
                continue
            raise


async def _stream(
    llm: Any, messages: list[BaseMessage], callbacks: list[Any], kwargs: dict[str, Any]
) -> AIMessageChunk:
    reply: AIMessageChunk | None = None
    async for chunk in llm.astream(messages, config={"callbacks": callbacks}, **kwargs):
        reply = chunk if reply is None else reply + chunk
    return reply if reply is not None else AIMessageChunk(content="")


def _usable(reply: AIMessageChunk) -> bool:
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    reasoning = reply.additional_kwargs.get("reasoning_content")
    return bool(text.strip() or reply.tool_call_chunks or reply.tool_calls or reasoning)


def _broken_stream(exc: BaseException) -> bool:
    """A stream that failed after connecting, not with an HTTP error status."""
    import openai

    return not isinstance(exc, openai.APIStatusError) and not never_connected(exc)


def _plain_notice(spec: ModelSpec | None, name: str, why: str) -> Notice:
    return Notice(
        kind="info",
        message=f"The streamed reply of {where(spec, name)} ended with nothing usable ({why}); "
        "it was asked again without streaming.",
        hint='If this server cannot stream tool calls, set "stream_tool_calls": false in its spec.',
    )
