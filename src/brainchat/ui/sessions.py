"""Sessions that end: on logout, a password change or an account's removal, and after a lifetime.

Chainlit's login cookie is a JWT it trusts until it expires. With password login the JWT also
names the account's session key at login (`CLAIM` in the user's metadata); `brainchat users
passwd|remove` and logging out replace the key in the database, so every process sees every
older cookie of the account end at once. This pure ASGI middleware, outside all of Chainlit's app,
checks each request and socket.io connection that carries a token: one whose key is not the
account's any more, or that is older than BRAINCHAT_SESSION_HOURS, is taken off a page request
(Chainlit then answers 401, the page shows the login) and refused on the socket, and a socket
opened before is closed at its next message. Cookies get `Secure` when the request came over
https (uvicorn reads X-Forwarded-Proto from a trusted proxy) or BRAINCHAT_SECURE_COOKIES=always.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from brainchat import i18n
from brainchat.redact import get_logger
from brainchat.store.accounts import Accounts

log = get_logger("brainchat.sessions")

CLAIM = "brainchat_session"  # in the JWT's user metadata: the account's session key at login
SINCE = "brainchat_login_at"  # and when the password was checked (a token renewed at /auth/jwt
# keeps it, so the lifetime counts from the login, not from the renewal)
COOKIE = os.environ.get("CHAINLIT_AUTH_COOKIE_NAME", "access_token")
SOCKET_PATH = "/ws/socket.io"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def claims(token: str) -> dict[str, Any] | None:
    """The JWT's claims when Chainlit's secret signed it and it has not expired, else None."""
    import jwt

    secret = os.environ.get("CHAINLIT_AUTH_SECRET")
    if not secret:
        return None
    try:
        return dict(jwt.decode(token, secret, algorithms=["HS256"]))
    except jwt.PyJWTError:
        return None


def _cookies(scope: Scope) -> dict[str, str]:
    from starlette.requests import cookie_parser

    found: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            found.update(cookie_parser(value.decode("latin-1")))
    return found


def tokens(scope: Scope) -> list[str]:
    """The login tokens a request carries: the cookie (whole or in Chainlit's chunks), a bearer."""
    cookies = _cookies(scope)
    found = [cookies[COOKIE]] if cookies.get(COOKIE) else []
    chunks = "".join(cookies.get(f"{COOKIE}_{i}", "") for i in range(len(cookies)))
    if chunks:
        found.append(chunks)
    for key, value in scope.get("headers", ()):
        scheme, _, token = value.decode("latin-1").partition(" ")
        if key == b"authorization" and scheme.lower() == "bearer" and token.strip():
            found.append(token.strip())
    return found


def without_credentials(scope: Scope) -> Scope:
    """The request with its login cookie(s) and bearer token taken off."""
    headers = []
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            continue
        if key == b"cookie":
            kept = [
                part
                for part in value.decode("latin-1").split(";")
                if part.split("=", 1)[0].strip() != COOKIE
                and not part.split("=", 1)[0].strip().startswith(COOKIE + "_")
            ]
            if not any(p.strip() for p in kept):
                continue
            value = ";".join(kept).encode("latin-1")
        headers.append((key, value))
    return {**scope, "headers": headers}


class SessionGuard:
    """ASGI middleware: ended or too old sessions are not let in; cookies Secure over https."""

    def __init__(
        self, app: ASGIApp, accounts: Accounts | None, lifetime: float, secure: str = "auto"
    ) -> None:
        self.app, self.accounts, self.lifetime, self.secure = app, accounts, lifetime, secure

    async def valid(self, token: str) -> bool:
        found = claims(token)
        if found is None:
            return False
        metadata = found.get("metadata") if isinstance(found.get("metadata"), dict) else {}
        started = (metadata or {}).get(SINCE, found.get("iat"))
        if not isinstance(started, (int, float)) or time.time() - started > self.lifetime:
            return False
        if self.accounts is None:
            return True  # local login: one user, no accounts to end
        key = (metadata or {}).get(CLAIM)
        name = found.get("identifier")
        if not key or not isinstance(name, str):
            return False  # made before sessions could be ended, or not by a password login
        return bool(key == await self.accounts.session_key(name))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        held = tokens(scope)
        ended = False
        for token in held:
            if not await self.valid(token):
                ended = True
        if ended and SOCKET_PATH in scope.get("path", ""):
            await _refuse(scope, receive, send)
            return
        if ended:
            scope = without_credentials(scope)
        if scope["type"] == "http":
            await self.app(scope, receive, self._cookie_send(scope, send, ended))
        elif held and not ended and self.accounts is not None:
            await self._watched(scope, receive, send, held)
        else:
            await self.app(scope, receive, send)

    def _cookie_send(self, scope: Scope, send: Send, ended: bool) -> Send:
        secure = self.secure == "always" or scope.get("scheme") == "https"

        async def send_with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if ended:  # the browser stops sending a cookie that no longer opens anything
                    gone = f"{COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=lax"
                    headers.append((b"set-cookie", gone.encode()))
                if secure:
                    headers = [_secured(k, v) for k, v in headers]
                message = {**message, "headers": headers}
            await send(message)

        return send_with_cookies

    async def _watched(self, scope: Scope, receive: Receive, send: Send, held: list[str]) -> None:
        """A websocket whose session is checked again at each message from the client."""
        closed = False

        async def checked_receive() -> Message:
            nonlocal closed
            message = await receive()
            if message["type"] == "websocket.receive" and not all(
                [await self.valid(t) for t in held]
            ):
                log.info("closed a socket whose session has ended (logout, password, removal)")
                closed = True
                await send({"type": "websocket.close", "code": 1008})
                return {"type": "websocket.disconnect", "code": 1008}
            return message

        async def guarded_send(message: Message) -> None:
            if not closed:  # after our close, the app's own close or frames have nowhere to go
                await send(message)

        await self.app(scope, checked_receive, guarded_send)


def _secured(key: bytes, value: bytes) -> tuple[bytes, bytes]:
    if key.lower() != b"set-cookie":
        return key, value
    attributes = {p.strip().lower() for p in value.split(b";")[1:]}
    return key, value if b"secure" in attributes else value + b"; Secure"


async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await receive()  # websocket.connect; closing before accepting answers HTTP 403
        await send({"type": "websocket.close", "code": 1008})
        return
    said = dict(scope.get("headers") or []).get(b"accept-language", b"").decode("latin-1")
    body = i18n.t("session.ended", i18n.pick(said)).encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def install(accounts: Accounts | None, hours: float, secure: str) -> None:
    """Chainlit's JWTs and cookies last `hours`; SessionGuard wraps the app; idempotent."""
    from chainlit.config import config
    from chainlit.server import app

    config.project.user_session_timeout = int(hours * 3600)
    if getattr(app.state, "brainchat_sessions", False):
        return  # `chainlit run -w` loads the module again on every change
    app.add_middleware(SessionGuard, accounts=accounts, lifetime=hours * 3600, secure=secure)
    app.state.brainchat_sessions = True


async def end_sessions_of(accounts: Accounts, token: str | None) -> None:
    """Logging out: every session of the token's account ends (the cookie was checked already)."""
    found = claims(token) if token else None
    if found and isinstance(found.get("identifier"), str):
        await accounts.end_sessions(found["identifier"])
        log.info("logged out: every session of %r ended", found["identifier"][:64])
