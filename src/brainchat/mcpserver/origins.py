"""Which Host and Origin headers `brainchat mcp-server --http` answers, on every bind address.

The specification's transport section: servers MUST validate Origin (DNS rebinding: a page on
another site reaching a server on this machine or network). Allowed: the names the server is
reached by (the loopback names on a loopback bind, the bound host otherwise), pages served from
those names, and the origins named in BRAINCHAT_MCP_ALLOWED_ORIGINS (the MCP Inspector's page is
http://localhost:6274). A request without an Origin (no browser: an SDK, curl, an IDE) passes.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from brainchat.settings.declared import ServerVars
from brainchat.settings.fields import env_name

ORIGINS_ENV = env_name(ServerVars, "mcp_allowed_origins")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "")


class OriginsError(ValueError):
    """A bad BRAINCHAT_MCP_ALLOWED_ORIGINS entry; the message names it and the form wanted."""


@dataclass(frozen=True)
class Allowed:
    """The Host names (any port) and Origins (exact, or `scheme://host:*`) a server answers."""

    hosts: frozenset[str]
    origins: frozenset[str]

    def host_ok(self, host: str) -> bool:
        return _host_name(host) in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True  # no browser sent this
        origin = origin.strip().lower().rstrip("/")
        if origin in self.origins:
            return True
        base, _, port = origin.rpartition(":")
        return port.isdigit() and f"{base}:*" in self.origins


def _host_name(host: str) -> str:
    """`name` of a Host header `name[:port]` (`[v6]` keeps its brackets), lowercased."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def bound_names(host: str) -> list[str]:
    """The names a client reaches a server bound to `host` by: loopback names for a loopback
    bind, the host itself otherwise (a wildcard bind: also this machine's names)."""
    from brainchat.store.config import is_loopback

    host = host.strip().lower()
    if host in WILDCARD_BINDS:
        return [*LOOPBACK_NAMES, socket.gethostname().lower(), socket.getfqdn().lower()]
    if is_loopback(host):
        return list(LOOPBACK_NAMES)
    return [f"[{host}]" if ":" in host and not host.startswith("[") else host]


def parse_origins(raw: str | None) -> list[str]:
    """The comma list of BRAINCHAT_MCP_ALLOWED_ORIGINS, each `http(s)://host[:port|:*]`."""
    out = []
    for item in (raw or "").split(","):
        item = item.strip().lower().rstrip("/")
        if not item:
            continue
        wild = item.endswith(":*")
        parts = urlsplit(item[:-2] if wild else item)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
            raise OriginsError(
                f"{ORIGINS_ENV}: {item!r} is not an origin; write scheme://host[:port] "
                "(http or https, no path), e.g. http://localhost:6274, comma-separated"
            )
        out.append(item)
    return out


def allowed_for(host: str, port: int, extra_origins: list[str]) -> Allowed:
    names = bound_names(host)
    own = {f"{scheme}://{name}:{port}" for name in names for scheme in ("http", "https")}
    own |= {f"https://{name}" for name in names}  # a TLS proxy on 443 in front
    return Allowed(frozenset(names), frozenset(own | set(extra_origins)))


def configured_origins() -> list[str]:
    """BRAINCHAT_MCP_ALLOWED_ORIGINS from the environment or .env (OriginsError when bad)."""
    import os

    from brainchat.settings.load import read_env

    return parse_origins(os.environ.get(ORIGINS_ENV) or read_env().get(ORIGINS_ENV))


class OriginGuard:
    """Refuses a request whose Host is not a name of this server (421) or whose Origin is not
    allowed (403), before anything else reads it."""

    def __init__(self, app: ASGIApp, allowed: Allowed) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not self.allowed.host_ok(headers.get(b"host", "")):
                await _refuse(send, 421, "this server does not answer to that Host name")
                return
            if not self.allowed.origin_ok(headers.get(b"origin")):
                await _refuse(
                    send,
                    403,
                    f"Origin not allowed; the server's operator can add it to {ORIGINS_ENV}",
                )
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers: list[Any] = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
