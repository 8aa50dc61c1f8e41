"""Model spec -> a LangChain chat model (ChatOpenAI with base_url), one instance per role, tagged."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.outputs import ChatGenerationChunk

from brainchat import netguard
from brainchat.redact import mask, mask_url
from brainchat.settings import ModelSpec

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

ROLE_TAG_PREFIX = "brainchat-role:"
ROUND_KEY = "brainchat_round"  # a request's metadata: the decide round its tokens belong to


@functools.cache
def chat_model_class() -> type[ChatOpenAI]:
    """BrainChatOpenAI, built on first use: langchain_openai (and openai) cost ~1.8 s to import."""
    from langchain_openai import ChatOpenAI

    class BrainChatOpenAI(ChatOpenAI):
        """ChatOpenAI that also keeps `reasoning_content` deltas (DeepSeek, vLLM, llama.cpp)."""

        def _convert_chunk_to_generation_chunk(
            self, chunk: dict, default_chunk_class: type, base_generation_info: dict | None
        ) -> ChatGenerationChunk | None:
            generation = super()._convert_chunk_to_generation_chunk(
                chunk, default_chunk_class, base_generation_info
            )
            choices = chunk.get("choices") or []
            if generation is not None and choices and choices[0].get("delta"):
                reasoning = choices[0]["delta"].get("reasoning_content")
                if reasoning:
                    generation.message.additional_kwargs["reasoning_content"] = reasoning
            return generation

    return BrainChatOpenAI


def make_chat_model(spec: ModelSpec, role: str, **overrides: Any) -> ChatOpenAI:
    """A chat model for one role; its tags carry the role so callbacks can attribute usage."""
    kwargs: dict[str, Any] = {
        "model": spec.model,
        "base_url": spec.base_url,
        "api_key": spec.api_key or "not-needed",
        "timeout": spec.timeout,
        "max_retries": spec.max_retries,
        # a server that refused stream_options is asked without them per request (modelclient)
        "stream_usage": spec.stream_usage,
        "streaming": True,
        # langchain-openai's own gap-between-chunks limit (default 120 s) follows the spec's
        # timeout, so a slow local server gets the time its spec allows and no less.
        "stream_chunk_timeout": spec.timeout,
        "tags": [f"{ROLE_TAG_PREFIX}{role}"],
        "metadata": {"brainchat_role": role, "brainchat_model": spec.name},
    }
    if spec.temperature is not None:
        kwargs["temperature"] = spec.temperature
    # Always bounded: a looping model otherwise writes until the run's time limit
    kwargs["max_tokens"] = spec.reply_tokens
    if "http_async_client" not in overrides:
        kwargs["http_async_client"] = loop_http_client()
    kwargs.update(overrides)
    if spec.user_url and not netguard.active().anywhere:
        # a URL a user typed: every connection checked and pinned, no redirect, no env proxy
        kwargs["http_async_client"] = loop_http_client(guarded=True)
        kwargs["http_client"] = _guarded_sync_client()
    model = chat_model_class()(**kwargs)
    client = getattr(model, "root_async_client", None)
    if client is not None:
        client._process_response_data = _chunks_as_dicts(client._process_response_data)
        if _PLATFORM and getattr(client, "_platform", False) is None:
            client._platform = _PLATFORM[0]  # else its first request asks a worker thread
    return model


_LOOP_CLIENTS: dict[tuple[asyncio.AbstractEventLoop, bool], Any] = {}


@functools.cache
def _guarded_sync_client() -> Any:
    """The blocking client of users' connections (langchain builds one; brainchat streams async)."""
    return netguard.sync_client()


def loop_http_client(*, guarded: bool = False) -> Any:
    """The HTTP client the models of the running event loop share (None outside a loop).

    langchain_openai keeps one httpx client per (base_url, timeout) for the whole process, but a
    client's pooled connections belong to the event loop that opened them: a later loop in the
    same process (each test, each `asyncio.run`) that reaches the same URL picked up a connection
    of a closed loop, and its request failed before it was sent ("Event loop is closed"). So each
    loop gets its own client, shared by every model built on it (keep-alive is kept within the
    loop); the clients of closed loops are dropped. Outside a running loop langchain's default is
    used, for a model that is then used on one loop only. `guarded`: the client of the models of
    users' connections (`netguard.async_client`), kept apart from the configured models'.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return netguard.async_client() if guarded else None
    client = _LOOP_CLIENTS.get((loop, guarded))
    if client is None:
        import openai

        for old in [key for key in _LOOP_CLIENTS if key[0].is_closed()]:
            del _LOOP_CLIENTS[old]
        # timeouts and retries are the openai client's, per request; this holds the connections
        client = _LOOP_CLIENTS[(loop, guarded)] = (
            netguard.async_client() if guarded else openai.DefaultAsyncHttpxClient()
        )
        if not _PLATFORM:
            loop.run_in_executor(None, _look_up_platform)
    return client


_PLATFORM: list[Any] = []  # the openai client's platform header, once looked up


def _look_up_platform() -> None:
    """openai's platform lookup (it may read files), once per process in a worker thread.

    Each new openai client otherwise sends its first request only after its own trip to a worker
    thread for it: one per model, so two on the way to a new session's first answer token.
    """
    try:
        from openai._base_client import get_platform

        _PLATFORM[:] = [get_platform()]
    except Exception:  # noqa: BLE001 - the client then looks it up itself, as before
        pass


def _chunks_as_dicts(process: Callable[..., Any]) -> Callable[..., Any]:
    """The openai client's response parser, less the model it builds for each streamed chunk.

    The SDK turns every chunk's JSON into a `ChatCompletionChunk` (construct_type, ~6% of an
    agent turn's CPU) and langchain_openai turns it straight back into a dict (`model_dump`,
    ~1.5%); it takes dicts as they are. Keys the model would always have are filled in, so
    langchain reads the same values either way.
    """
    from openai.types.chat import ChatCompletionChunk

    def process_response_data(*, data: object, cast_to: type, response: Any) -> Any:
        if cast_to is not ChatCompletionChunk or not isinstance(data, dict):
            return process(data=data, cast_to=cast_to, response=response)
        for choice in data.get("choices") or []:
            if isinstance(choice, dict):
                delta = choice.setdefault("delta", {})
                for call in (delta or {}).get("tool_calls") or []:
                    if isinstance(call, dict):
                        call.setdefault("index", None)
                        call.setdefault("id", None)
                        call.setdefault("function", {})
        return data

    return process_response_data


def server_reason(exc: BaseException) -> str:
    """The error message the server sent (masked, one line, at most 300 characters)."""
    body = getattr(exc, "body", None)
    text = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = str(inner.get("message") if isinstance(inner, dict) else inner or "")
    text = text or str(getattr(exc, "message", "") or exc)
    return mask(" ".join(text.split()))[:300]


def cut_at_limit(message: Any) -> bool:
    """The server stopped this reply at its max_tokens (finish_reason "length")."""
    meta = getattr(message, "response_metadata", None) or {}
    return meta.get("finish_reason") == "length"


def cut_notice_text(spec: ModelSpec | None, name: str) -> tuple[str, str]:
    """What the user reads when `name`'s reply was cut by its length limit, and what to do."""
    limit = f" of {spec.reply_tokens:,} tokens" if spec is not None else ""
    return (
        f"{name}'s reply reached its length limit{limit} (max_tokens) and was cut there.",
        "Ask for a shorter answer, or raise max_tokens in the model's spec (at most half its "
        "context_window).",
    )


def where(spec: ModelSpec | None, name: str | None = None, base_url: str | None = None) -> str:
    """'<model> at <masked url>': how every model error names its model."""
    if spec is not None:
        name, base_url = spec.name, spec.base_url
    shown = mask_url(base_url) if base_url else "the provider's default URL"
    return f"{name or 'the model'} at {shown}"


def is_model_timeout(exc: BaseException) -> bool:
    """The model sent nothing in time: a chunk gap, a read timeout or the SDK's timeout."""
    import httpx
    import openai

    return isinstance(exc, TimeoutError | httpx.TimeoutException | openai.APITimeoutError)


def role_of(tags: list[str] | None, metadata: dict[str, Any] | None = None) -> str | None:
    """The role a model call was made for, from its tags or metadata."""
    if metadata and metadata.get("brainchat_role"):
        return str(metadata["brainchat_role"])
    for tag in tags or []:
        if tag.startswith(ROLE_TAG_PREFIX):
            return tag[len(ROLE_TAG_PREFIX) :]
    return None


def describe_error(
    exc: BaseException,
    spec: ModelSpec | None = None,
    *,
    midstream: bool = False,
    name: str | None = None,
    base_url: str | None = None,
) -> str:
    """A friendly one-line account of a model API failure (never the key, never a traceback)."""
    import openai

    where_ = where(spec, name, base_url)
    if is_model_timeout(exc):
        seconds = getattr(exc, "timeout_s", None) or (spec.timeout if spec else None)
        gap = f" for {seconds:g} s" if seconds else " in time"
        kept = " What arrived so far is kept." if midstream else ""
        return (
            f"The model {where_} sent nothing{gap} (model timeout).{kept} Raise the spec's "
            '"timeout" if the server is slow, or check that it is still working.'
        )
    if midstream:
        return f"The answer from {where_} broke off in the middle ({type(exc).__name__}). What arrived so far is kept; send your message again to retry."
    if isinstance(exc, openai.RateLimitError):
        return f"{where_} is rate-limiting requests (HTTP 429), even after retries. Wait a moment and send your message again."
    if isinstance(exc, openai.AuthenticationError):
        return f"{where_} refused the API key (HTTP 401). Check the key variable for this model."
    if isinstance(exc, openai.NotFoundError):
        return f"{where_} does not know this model (HTTP 404). Check the model name in its spec."
    if isinstance(exc, openai.BadRequestError):
        return (
            f"{where_} refused the request (HTTP 400: {server_reason(exc)}). If it names "
            '"stream_options", set "stream_usage": false in this model\'s spec.'
        )
    if isinstance(exc, openai.APIStatusError):
        return f"{where_} answered with an error (HTTP {exc.status_code}: {server_reason(exc)}). Try again; if it persists, check the server."
    if refusal := netguard.refused(exc):
        return f"brainchat did not send the request to {where_}: {refusal}."
    if isinstance(exc, openai.APIConnectionError) and never_connected(exc):
        return f"Could not connect to {where_}. Is the server running and the base_url right?"
    kind = type(exc).__name__
    return f"The reply from {where_} broke off before anything arrived ({kind}). Send your message again to retry."


def never_connected(exc: BaseException) -> bool:
    """True when no connection was made (refused, DNS, connect timeout), not a cut stream."""
    import httpx

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx.ConnectError | httpx.ConnectTimeout | ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
