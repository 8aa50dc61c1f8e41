"""One function-call request, made the way the model's server can take it.

Streamed unless the spec says `"stream_tool_calls": false`. A streamed reply that ends with
nothing usable (an empty stream, or one that broke off) is asked again once without streaming;
a server that answers HTTP 400 to a request with `stream_options` is asked again once without
them, and only when that retry is taken is usage not asked of that server for the rest of the
process (a 400 about something else, such as the context size, fails the retry too). Each retry says so in a notice. A model
that sends nothing within its spec's timeout raises `ModelTimeout`, never a `TimeoutError`, so
the run's own time limit is not blamed for it.
"""

from __future__ import annotations

from contextlib import aclosing
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
from brainchat.repeats import RepeatGuard, repeat_notice_text, without_repeats
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
    retried_plain = False
    refused: BaseException | None = None  # the HTTP 400 that may have been stream_options'
    while True:
        try:
            if not streamed:
                return await llm.ainvoke(messages, config={"callbacks": callbacks}, stream=False)  # type: ignore[no-any-return]
            kwargs = {"stream_usage": False} if refused is not None else usage_kwargs(spec)
            reply = await _stream(llm, messages, callbacks, kwargs, name)
            if refused is not None and spec is not None:
                # taken without stream_options: it was them (a 400 about anything else is not)
                refuse_stream_usage(spec)
                emit(stream_options_notice(spec, refused, name))
                refused = None
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
            if (
                streamed
                and refused is None
                and spec is not None
                and rejects_stream_options(exc, spec)
            ):
                refused = exc  # once more without them; marked only if that is taken
                continue
            if refused is not None and _is_bad_request(exc):
                raise  # a 400 either way: not stream_options; the server's reason is shown
            if streamed and not retried_plain and _broken_stream(exc):
                retried_plain, streamed = True, False
                emit(_plain_notice(spec, name, f"the stream broke off ({type(exc).__name__})"))
                continue
            raise


async def _stream(
    llm: Any, messages: list[BaseMessage], callbacks: list[Any], kwargs: dict[str, Any], name: str
) -> AIMessageChunk:
    """The streamed reply, ended early (and kept once) when it repeats itself."""
    reply: AIMessageChunk | None = None
    guard = RepeatGuard()
    stream: Any = llm.astream(messages, config={"callbacks": callbacks}, **kwargs)
    async with aclosing(stream):  # ended early: the HTTP stream closes now
        async for chunk in stream:
            reply = chunk if reply is None else reply + chunk
            if isinstance(chunk.content, str) and (repeated := guard.feed(chunk.content)):
                emit(
                    Notice(
                        kind="info",
                        message=(told := repeat_notice_text(name, repeated))[0],
                        hint=told[1],
                    )
                )
                text = without_repeats(str(reply.content), repeated)
                return AIMessageChunk(content=text, response_metadata=reply.response_metadata)
    return reply if reply is not None else AIMessageChunk(content="")


def _usable(reply: AIMessageChunk) -> bool:
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    reasoning = reply.additional_kwargs.get("reasoning_content")
    return bool(text.strip() or reply.tool_call_chunks or reply.tool_calls or reasoning)


def _is_bad_request(exc: BaseException) -> bool:
    import openai

    return isinstance(exc, openai.BadRequestError)


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
