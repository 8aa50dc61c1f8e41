"""Model connections a user adds in the browser: an OpenAI-compatible server, its key, its models.

`probe` asks the server for its model list (`GET {base_url}/models` with the key); a server that
refuses, cannot be reached or answers something else raises `ConnectionFailed`, whose message names
the connection and its masked URL and says what to check, never the key nor the answer's body.
With accounts the address must be open to users (`netguard`: public, or listed by the operator),
a redirect is not followed, and only ids shaped like model ids are listed. `Connection.spec(model)`
is the `ModelSpec` a role uses once the user picks one of those models; its requests go through
the same guard. No Chainlit here.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from brainchat import netguard, redact
from brainchat.settings import ModelSpec

PROBE_TIMEOUT = 10.0  # seconds for the whole /models request (connect, headers and body)
MAX_MODELS = 500  # a server listing more is cut (the panel's lists stay usable)
MAX_ID_CHARS = 200  # longer "model ids" are skipped (they would flood the panel and the chat)
MAX_LIST_BYTES = 5_000_000  # a /models answer larger than this is refused, not read whole
NAME = re.compile(r"^[\w .:@()+-]{1,40}$")
# What a model id looks like (gpt-4o-mini, llama3.1:8b, Qwen/Qwen2.5-7B-Instruct, hf.co/x/y:Q4_K_M);
# anything else an internal JSON service returns under "id" is not shown to the user
MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$")


class ConnectionFailed(ValueError):
    """Why a connection cannot be used, naming it and its masked URL; never holds the key."""


@dataclass(frozen=True)
class Connection:
    """One server a user connected. The key never appears in repr, logs or the page."""

    name: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    models: tuple[str, ...] = ()
    # (model id, context window) where the server's list says it (vLLM, LM Studio, OpenRouter);
    # other models get ModelSpec's default, which the agent and chat size their requests to
    windows: tuple[tuple[str, int], ...] = ()

    @property
    def shown_url(self) -> str:
        return redact.mask_url(self.base_url, drop_query=True)

    def label(self, model: str) -> str:
        """How the settings panel lists one of its models (unique across connections)."""
        return f"{model} @ {self.name}"

    def spec(self, model: str) -> ModelSpec:
        spec = ModelSpec(
            model=model,
            provider="openai-compatible",
            base_url=self.base_url,
            api_key=self.api_key or "not-needed",
            label=self.label(model),
            user_url=True,
        )
        window = dict(self.windows).get(model)
        return replace(spec, context_window=window) if window else spec

    def specs(self) -> dict[str, ModelSpec]:
        return {self.label(m): self.spec(m) for m in self.models}


def checked(name: str, base_url: str, api_key: str | None) -> Connection:
    """The form's values as a Connection (no models yet), or ConnectionFailed saying what is wrong."""
    name, url = (name or "").strip(), (base_url or "").strip().rstrip("/")
    key = (api_key or "").strip() or None
    if (
        not url.startswith(("http://", "https://"))
        or any(c.isspace() for c in url)
        or not _parses(url)
    ):
        shown = redact.show(url, 60) if url else "empty"
        raise ConnectionFailed(
            f"the base URL {shown} is not valid: give the server's OpenAI-compatible address "
            "starting with http:// or https://, e.g. http://localhost:8080/v1"
        )
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise ConnectionFailed(
            f"the base URL {redact.show(url, 60)} holds a user name, password, query or fragment: "
            "give the bare address (e.g. https://host/v1) and put the credential in the API key "
            "field, which is the only one kept encrypted"
        )
    if not name:
        name = re.sub(r"^https?://", "", url).split("/")[0][:40] or "connection"
    if not NAME.match(name) or redact.looks_secret(name):
        raise ConnectionFailed(
            "the provider name may have 1-40 letters, digits, spaces and . : @ ( ) + - _ "
            "(it labels the connection's models in the panel; it is not the key)"
        )
    if key is not None and (any(c.isspace() for c in key) or len(key) > 4096):
        raise ConnectionFailed(
            f"connection {name!r}: the API key has spaces or is too long; paste the key alone"
        )
    return Connection(name, url, key)


def _parses(url: str) -> bool:
    """Whether the HTTP client can send to `url` (it refuses e.g. the host 0177.0.0.1)."""
    import httpx

    try:
        httpx.URL(url)
    except (httpx.InvalidURL, ValueError, UnicodeError):
        return False
    return True


async def probe(
    conn: Connection, wait: float = PROBE_TIMEOUT, guard: netguard.Guard | None = None
) -> Connection:
    """`conn` with the model ids its server lists, or ConnectionFailed saying why not."""
    import httpx

    where = f"connection {conn.name!r} ({conn.shown_url})"
    headers = {"Authorization": f"Bearer {conn.api_key}"} if conn.api_key else {}
    try:
        async with asyncio.timeout(wait), netguard.async_client(guard, timeout=wait) as client:
            async with client.stream("GET", f"{conn.base_url}/models", headers=headers) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_LIST_BYTES:
                        raise ConnectionFailed(
                            f"{where}: the /models answer is over {MAX_LIST_BYTES // 1_000_000} MB;"
                            " is this an OpenAI-compatible server?"
                        )
    except (TimeoutError, httpx.TimeoutException):
        raise ConnectionFailed(
            f"{where}: no answer within {wait:g} s; check the URL and that the server runs"
        ) from None
    except httpx.HTTPError as exc:
        if refusal := netguard.refused(exc):
            raise ConnectionFailed(f"{where}: {refusal}") from None
        raise ConnectionFailed(
            f"{where}: could not reach the server ({type(exc).__name__}); check the URL, the "
            "port and that the server runs"
        ) from None
    if problem := _status_problem(response.status_code, conn.shown_url):
        raise ConnectionFailed(f"{where}: {problem}")
    try:
        data = json.loads(bytes(body))
        listed = data["data"] if isinstance(data, dict) else data
        ids = [str(item["id"]) for item in listed]
        windows = tuple(
            (str(item["id"]).strip(), n) for item in listed if (n := _context_window(item))
        )
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise ConnectionFailed(
            f"{where}: /models did not answer with an OpenAI model list "
            f"(JSON with data: [{{id: ...}}]) ({type(exc).__name__}); is this an "
            "OpenAI-compatible server?"
        ) from None
    ids = list(dict.fromkeys(i.strip() for i in ids if 0 < len(i.strip()) <= MAX_ID_CHARS))
    usable = [i for i in ids if MODEL_ID.match(i)][:MAX_MODELS]
    if not usable:
        raise ConnectionFailed(
            f"{where}: the server lists no models (none whose id looks like a model id); load "
            "one on it first"
        )
    known = [(m, n) for m, n in windows if m in usable]
    return Connection(conn.name, conn.base_url, conn.api_key, tuple(usable), tuple(known))


def _status_problem(status: int, shown_url: str) -> str | None:
    """What an HTTP status of the /models answer says is wrong, or None when it is a success."""
    if status in (401, 403):
        return f"the server refused the API key (HTTP {status}); check the key"
    if status == 404:
        return (
            f"the server has no model list at {shown_url}/models (HTTP 404); "
            "the base URL of an OpenAI-compatible server usually ends in /v1"
        )
    if 300 <= status < 400:  # not followed, and its target not shown: it may be internal
        return (
            f"the server answered /models with a redirect (HTTP {status}), which "
            "brainchat does not follow; give the server's own address as the base URL"
        )
    if status >= 400:
        return f"the server answered HTTP {status} to /models"
    return None


WINDOW_FIELDS = ("context_length", "max_model_len", "context_window", "max_context_length")


def _context_window(item: object) -> int | None:
    """The context window a /models entry states (vLLM: max_model_len; OpenRouter, LM Studio:
    context_length / max_context_length), if it is a plausible number of tokens."""
    if not isinstance(item, dict):
        return None
    for key in WINDOW_FIELDS:
        value = item.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 512 <= value <= 10_000_000:
            return value
    return None
