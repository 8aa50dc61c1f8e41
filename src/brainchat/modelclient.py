"""One model client: every model request brainchat makes (chat, decide, planner, answer, titles).

It owns streaming, usage (the callbacks, the round label, `stream_options`), the retries and the
fallbacks, each written once:

- a server that answers HTTP 400 to a streamed request asking for usage (`stream_options`) is
  asked once more without it; only when that retry is taken is the server remembered, and no
  request to it asks for usage again in this process (a 400 about something else, such as the
  context size, fails the retry too). The user is told once per fallback;
- a function-call reply (`ask`) that streamed nothing usable, or whose stream broke off after
  connecting, is asked again once without streaming (or never streamed: `"stream_tool_calls":
  false`); a text reply (`text`) may take one quiet retry when its stream broke before any text;
- a reply that repeats itself is ended early and kept once;
- a model that sends nothing within its spec's timeout raises `ModelTimeout` from `ask`, so the
  run's own time limit is not blamed for it.
"""

from __future__ import annotations

import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage

from brainchat.events import Notice, emit
from brainchat.llm import (
    ROUND_KEY,
    cut_at_limit,
    is_model_timeout,
    never_connected,
    server_reason,
    where,
)
from brainchat.repeats import RepeatGuard, Repetition, repeat_notice_text, without_repeats
from brainchat.settings import ModelSpec

# Servers (base URLs) that answered HTTP 400 to `stream_options` and then took the same request
# without them: no request to them asks for usage again in this process.
_NO_STREAM_OPTIONS: set[str | None] = set()


def stream_usage_refused(spec: ModelSpec) -> bool:
    """True once this model's server has rejected `stream_options` in this process."""
    return spec.base_url in _NO_STREAM_OPTIONS


class ModelTimeout(Exception):
    """The model itself timed out (chunk gap, read timeout); `error` is the original exception."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class Streamed:
    """A text reply as it arrives: kept by the caller, so a reply cut by a timeout keeps its part."""

    parts: list[str] = field(default_factory=list)
    first_token: float | None = None  # perf_counter time of the first text
    cut: bool = False  # the server stopped it at max_tokens (finish_reason "length")
    repeated: Repetition | None = None  # ended early for repeating itself
    # perf_counter time after which the stream is read no further, and whether it was: a
    # caller's own deadline, checked at each chunk, since a cancellation from a timeout can be
    # swallowed inside the HTTP stack while the stream goes on
    stop_at: float | None = None
    stopped: bool = False

    @property
    def text(self) -> str:
        """The reply, a repetition that ended it left out once."""
        text = "".join(self.parts)
        return text if self.repeated is None else without_repeats(text, self.repeated)


@dataclass(frozen=True)
class ModelClient:
    """One model of one role: `model` (a chat model, tools bound or not), its spec and name."""

    model: Any
    spec: ModelSpec | None
    name: str

    async def text(
        self,
        messages: list[BaseMessage],
        callbacks: list[Any],
        out: Streamed,
        *,
        quiet_retry: bool = False,
    ) -> None:
        """Stream a text reply into `out` (the stream_options fallback; `quiet_retry`: once more
        when the stream broke before any text). Failures raise, with what arrived kept in `out`."""
        refused: BaseException | None = None  # the HTTP 400 that may have been stream_options'
        retried = False
        while True:
            try:
                await self._stream_text(messages, callbacks, out, usage=refused is None)
            except Exception as exc:
                if out.parts:
                    raise
                if refused is None and self._rejects_stream_options(exc):
                    refused = exc  # once more without them; marked only if that is taken
                    continue
                if quiet_retry and not retried and _retryable_midstream(exc):
                    retried = True  # the stream broke before any text: one quiet retry
                    continue
                raise
            if refused is not None:
                self._refused(refused)
            return

    async def ask(
        self,
        messages: list[BaseMessage],
        callbacks: list[Any],
        *,
        round_: int = 0,
        stream: bool | None = None,
    ) -> BaseMessage:
        """A function-call reply to `messages`, whole (tool calls parsed): see the module text.
        `stream=False` asks for the reply whole (a reply held to a JSON schema)."""
        spec, config = self.spec, _config(callbacks, round_)
        streamed = (spec is None or spec.stream_tool_calls) if stream is None else stream
        retried_plain = False
        refused: BaseException | None = None  # the HTTP 400 that may have been stream_options'
        while True:
            try:
                if not streamed:
                    return await self.model.ainvoke(messages, config=config, stream=False)  # type: ignore[no-any-return]
                reply = await self._stream_whole(messages, config, usage=refused is None)
                if refused is not None:  # taken without stream_options: it was them
                    self._refused(refused)
                    refused = None
                if not _usable(reply) and not retried_plain:
                    retried_plain, streamed = True, False
                    emit(self._plain_notice("the stream ended with no reply in it"))
                    continue
                return reply
            except TimeoutError as exc:
                raise ModelTimeout(exc) from exc
            except Exception as exc:
                if is_model_timeout(exc):
                    raise ModelTimeout(exc) from exc
                if streamed and refused is None and self._rejects_stream_options(exc):
                    refused = exc  # once more without them; marked only if that is taken
                    continue
                if refused is not None and _is_bad_request(exc):
                    raise  # a 400 either way: not stream_options; the server's reason is shown
                if streamed and not retried_plain and _broken_stream(exc):
                    retried_plain, streamed = True, False
                    emit(self._plain_notice(f"the stream broke off ({type(exc).__name__})"))
                    continue
                raise

    def _usage_kwargs(self, usage: bool) -> dict[str, Any]:
        """No `stream_options` after a refusal (this request's, or the server's before)."""
        refused = self.spec is not None and stream_usage_refused(self.spec)
        return {} if usage and not refused else {"stream_usage": False}

    async def _stream_text(
        self, messages: list[BaseMessage], callbacks: list[Any], out: Streamed, usage: bool
    ) -> None:
        out.cut, out.repeated, guard = False, None, RepeatGuard()
        kwargs = self._usage_kwargs(usage)
        stream: Any = self.model.astream(messages, config={"callbacks": callbacks}, **kwargs)
        async with aclosing(stream):  # ended early: the HTTP stream closes now
            async for chunk in stream:
                if isinstance(chunk.content, str) and chunk.content:
                    if out.first_token is None:
                        out.first_token = time.perf_counter()
                    out.parts.append(chunk.content)
                    if (repeated := guard.feed(chunk.content)) is not None:
                        out.repeated = repeated
                        told, hint = repeat_notice_text(self.name, repeated)
                        emit(Notice(kind="info", message=told, hint=hint))
                        return
                out.cut = out.cut or cut_at_limit(chunk)
                if out.stop_at is not None and time.perf_counter() >= out.stop_at:
                    out.stopped = True  # this chunk is kept: its tokens were shown already
                    return

    async def _stream_whole(
        self, messages: list[BaseMessage], config: dict[str, Any], usage: bool
    ) -> AIMessageChunk:
        """The streamed reply, ended early (and kept once) when it repeats itself."""
        chunks: list[AIMessageChunk] = []
        guard = RepeatGuard()
        kwargs = self._usage_kwargs(usage)
        stream: Any = self.model.astream(messages, config=config, **kwargs)
        async with aclosing(stream):  # ended early: the HTTP stream closes now
            async for chunk in stream:
                chunks.append(chunk)
                if isinstance(chunk.content, str) and (repeated := guard.feed(chunk.content)):
                    told, hint = repeat_notice_text(self.name, repeated)
                    emit(Notice(kind="info", message=told, hint=hint))
                    reply = _merged(chunks)
                    text = without_repeats(str(reply.content), repeated)
                    return AIMessageChunk(content=text, response_metadata=reply.response_metadata)
        return _merged(chunks) if chunks else AIMessageChunk(content="")

    def _rejects_stream_options(self, exc: BaseException) -> bool:
        """An HTTP 400 to a streamed request that asked for usage: maybe `stream_options` itself
        (only maybe: a 400 may be about the context size or the tools)."""
        import openai

        spec = self.spec
        asked = spec is not None and spec.stream_usage and not stream_usage_refused(spec)
        return isinstance(exc, openai.BadRequestError) and asked

    def _refused(self, exc: BaseException) -> None:
        """The retry without `stream_options` was taken: remember the server, tell the user."""
        assert self.spec is not None  # only a spec's request asks for usage
        _NO_STREAM_OPTIONS.add(self.spec.base_url)
        emit(
            Notice(
                kind="info",
                message=f"{where(self.spec, self.name)} refused the request's stream_options "
                f"(HTTP 400: {server_reason(exc)}); it was asked again without them. Token "
                "counts for this model are estimated from now on.",
                hint='Set "stream_usage": false in this model\'s spec to skip the first try.',
            )
        )

    def _plain_notice(self, why: str) -> Notice:
        return Notice(
            kind="info",
            message=f"The streamed reply of {where(self.spec, self.name)} ended with nothing "
            f"usable ({why}); it was asked again without streaming.",
            hint='If this server cannot stream tool calls, set "stream_tool_calls": false in '
            "its spec.",
        )


def _config(callbacks: list[Any], round_: int) -> dict[str, Any]:
    """The request's callbacks, and the decide round its tokens belong to (usage labels)."""
    if not round_:
        return {"callbacks": callbacks}
    return {"callbacks": callbacks, "metadata": {ROUND_KEY: round_}}


def _merged(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    """The chunks as one message, merged once at the end: adding each chunk to the reply so far
    rebuilt (and re-parsed the tool-call arguments of) the whole message per chunk."""
    return chunks[0] if len(chunks) == 1 else chunks[0] + chunks[1:]


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


def _retryable_midstream(exc: BaseException) -> bool:
    import httpx
    import openai

    if isinstance(exc, openai.APIStatusError):
        return False  # the SDK already retried 429/5xx with backoff
    return isinstance(exc, httpx.HTTPError | openai.APIError | ValueError)
