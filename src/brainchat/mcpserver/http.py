"""Streamable HTTP at /mcp behind a bearer token: no token or a wrong one answers 401, compared in
constant time; the token is never logged."""

from __future__ import annotations

import hmac
import json
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]


class BearerGuard:
    """Lets a request through only with `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            await _unauthorized(send)
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                given = value
        scheme, _, credential = given.partition(b" ")
        # compare_digest: the time taken does not tell how much of a guess was right
        ok = hmac.compare_digest(credential.strip(), self._token)
        return scheme.lower() == b"bearer" and ok


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {
            "error": "invalid_token",
            "error_description": "brainchat mcp-server needs 'Authorization: Bearer <token>' "
            "with the token in BRAINCHAT_MCP_TOKEN",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="brainchat"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any, Any], token: str, *, loopback: bool) -> Any:
    """The Starlette app: /mcp behind the guard; on loopback, Host headers other than a loopback
    name are refused too (DNS rebinding)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback, allowed_hosts=LOOPBACK_HOSTS
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    guarded = BearerGuard(endpoint, token)
    return Starlette(routes=[Route("/mcp", endpoint=guarded)], lifespan=lambda _: manager.run())


async def serve_http(server: Server[Any, Any], token: str, host: str, port: int) -> None:
    import uvicorn

    from brainchat.store.config import is_loopback

    app = http_app(server, token, loopback=is_loopback(host))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    await uvicorn.Server(config).serve()
