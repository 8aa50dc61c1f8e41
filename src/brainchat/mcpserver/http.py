"""Streamable HTTP at /mcp behind a bearer token: no token or a wrong one answers 401, compared in
constant time; the token is never logged. Host and Origin are checked first (origins.py), on every
bind address."""

from __future__ import annotations

import hmac
import json
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from brainchat.mcpserver.origins import Allowed, OriginGuard, allowed_for

# A plain bearer token, not OAuth: the 401 says so (RFC 6750), and names no resource metadata
# (RFC 9728), so a client knows there is no sign-in to start: the token goes in its headers.
NEEDS_TOKEN = (
    "brainchat mcp-server needs 'Authorization: Bearer <token>' with the token its operator set "
    "in BRAINCHAT_MCP_TOKEN; it has no OAuth sign-in"
)


class BearerGuard:
    """Lets a request through only with `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            await _unauthorized(send, sent=_authorization(scope) != b"")
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        scheme, _, credential = _authorization(scope).partition(b" ")
        # compare_digest: the time taken does not tell how much of a guess was right
        ok = hmac.compare_digest(credential.strip(), self._token)
        return scheme.lower() == b"bearer" and ok


def _authorization(scope: Scope) -> bytes:
    given = b""
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            given = value
    return given


async def _unauthorized(send: Send, *, sent: bool) -> None:
    """RFC 6750: a request without credentials gets the scheme alone; a wrong one invalid_token."""
    body = json.dumps({"error": "invalid_token", "error_description": NEEDS_TOKEN}).encode()
    challenge = 'Bearer realm="brainchat"'
    if sent:
        challenge += f', error="invalid_token", error_description="{NEEDS_TOKEN}"'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", challenge.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any, Any], token: str, allowed: Allowed) -> Any:
    """The Starlette app: Host and Origin checked (OriginGuard), then the token, then /mcp."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    # the SDK's own check is off: OriginGuard runs before it, with the same rules on every bind
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    guarded = BearerGuard(endpoint, token)
    app = Starlette(routes=[Route("/mcp", endpoint=guarded)], lifespan=lambda _: manager.run())
    return OriginGuard(app, allowed)


async def serve_http(
    server: Server[Any, Any], token: str, host: str, port: int, origins: list[str]
) -> None:
    import uvicorn

    app = http_app(server, token, allowed_for(host, port, origins))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    await uvicorn.Server(config).serve()
