"""Refuse HTTP and websocket requests whose Origin is neither the app's own nor listed.

Chainlit turns socket.io's origin check off and answers CORS for any origin, and browsers send
the app's cookies to it from any page on the same machine (ports do not make sites different).
So a page served from http://127.0.0.1:9999 could open the app's socket and run turns. This
pure ASGI middleware sits outside all of Chainlit's app, the socket.io mount included.

Requests without an Origin header pass: browsers send one with every websocket handshake,
every cross-origin fetch and every POST/PUT/DELETE, so a request without one is a plain page
or asset navigation or a non-browser client (curl), which a web page cannot drive.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from brainchat.redact import show

log = logging.getLogger(__name__)

ENV = "BRAINCHAT_ALLOWED_ORIGINS"
DEFAULT_PORTS = {"http": 80, "https": 443}
WS_SCHEMES = {"ws": "http", "wss": "https"}
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LOGGED_CHARS = 80  # an Origin header is attacker-chosen: log only its start

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REFUSAL = (
    "Forbidden: this request came from a page on another origin. brainchat only accepts "
    f"requests from its own pages; to allow another origin, list it in {ENV}."
).encode()


def normalize(origin: str) -> str | None:
    """`scheme://host[:port]` in canonical form (lower case, no default port); None if not one."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username or parts.password:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{scheme}://{host}" + ("" if port in (None, DEFAULT_PORTS[scheme]) else f":{port}")


def parse_allowed(value: str | None) -> tuple[frozenset[str], list[str]]:
    """The origins listed in BRAINCHAT_ALLOWED_ORIGINS, and one error line per bad entry."""
    allowed: set[str] = set()
    errors: list[str] = []
    for entry in (value or "").split(","):
        if not (entry := entry.strip()):
            continue
        if origin := normalize(entry):
            allowed.add(origin)
        else:
            errors.append(
                f"{ENV}: {show(entry, LOGGED_CHARS)} is not an origin; list origins like "
                "'https://brainchat.example.org' or 'http://localhost:5173', comma-separated "
                "(a scheme http or https, a host, an optional port; no path, no '*')"
            )
    return frozenset(allowed), errors


def _own_origin(scope: Scope) -> str | None:
    """The origin the request was addressed to: its scheme and its Host header."""
    host = next((v for k, v in scope.get("headers", ()) if k == b"host"), None)
    if host is None:
        return None
    scheme = scope.get("scheme", "http")
    return normalize(f"{WS_SCHEMES.get(scheme, scheme)}://{host.decode('latin-1')}")


def _host_header(scope: Scope) -> str:
    host = next((v for k, v in scope.get("headers", ()) if k == b"host"), b"")
    return host.decode("latin-1")


class OriginGuard:
    """ASGI middleware: 403 for a request whose Origin is neither the app's own nor allowed."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(allowed)
        self.allowed_hosts = frozenset(urlsplit(o).hostname or "" for o in self.allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            origins = [v for k, v in scope.get("headers", ()) if k == b"origin"]
            if origins and not all(self._allowed(scope, o.decode("latin-1")) for o in origins):
                await self._refuse(scope, receive, send, origins[0].decode("latin-1"))
                return
            if self._rebound(scope):
                await self._refuse(scope, receive, send, "Host " + _host_header(scope))
                return
        await self.app(scope, receive, send)

    def _rebound(self, scope: Scope) -> bool:
        """DNS rebinding: a server on loopback addressed by a name that is not a loopback one.

        A page on evil.example whose name was re-pointed at 127.0.0.1 is same-origin with
        itself, so the Origin check passes; its Host header still says evil.example.
        """
        server = scope.get("server") or ("", 0)
        if str(server[0]) not in LOOPBACK_HOSTS:
            return False  # bound to a public interface: a proxy or login guards it
        host = urlsplit("//" + _host_header(scope)).hostname or ""
        return host not in LOOPBACK_HOSTS and host not in self.allowed_hosts

    def _allowed(self, scope: Scope, origin: str) -> bool:
        canonical = normalize(origin)
        return canonical is not None and (
            canonical in self.allowed or canonical == _own_origin(scope)
        )

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, origin: str) -> None:
        log.warning(
            "refused a %s request to %s from origin %s: not this app's origin nor listed in %s",
            scope["type"],
            ascii(scope.get("path", "")[:LOGGED_CHARS]),
            ascii(origin[:LOGGED_CHARS]),
            ENV,
        )
        if scope["type"] == "websocket":
            await receive()  # websocket.connect; closing before accepting answers HTTP 403
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(REFUSAL)).encode()),
        ]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": REFUSAL})


def install() -> None:
    """Wrap the app `chainlit run` serves (socket.io included) in OriginGuard; idempotent."""
    from chainlit.server import app

    if getattr(app.state, "brainchat_origin_guard", False):
        return  # `chainlit run -w` loads the module again on every change
    allowed, errors = parse_allowed(os.environ.get(ENV))
    for error in errors:
        log.error("configuration: %s", error)
    _list_in_cors(app, allowed)
    app.add_middleware(OriginGuard, allowed=allowed)  # first in the list: outermost
    app.state.brainchat_origin_guard = True


def _list_in_cors(app: Any, allowed: frozenset[str]) -> None:
    """Chainlit's CORS answers exactly the allowed origins (a listed page may read responses)."""
    from starlette.middleware.cors import CORSMiddleware

    for middleware in app.user_middleware:
        if middleware.cls is CORSMiddleware:
            configured: Any = middleware.kwargs.get("allow_origins") or []
            listed = {o for o in configured if o != "*"}  # "*" is moot behind OriginGuard
            middleware.kwargs["allow_origins"] = sorted(listed | allowed)
