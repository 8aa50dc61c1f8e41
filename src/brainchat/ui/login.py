"""Password login in front of Chainlit's: throttled per client and per name, sessions that end.

Chainlit's `/login` hands the password callback only the name and password; this route goes
first, knows the client's address (uvicorn takes it from X-Forwarded-For when the proxy is
trusted) and answers 429 with Retry-After while a name at that client, or the client, backs off.
Logging out ends every session of the account (ui/sessions.py).
"""

from __future__ import annotations

import math
import time
from typing import Any

import chainlit as cl
from fastapi import Depends, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from fastapi.security import OAuth2PasswordRequestForm

from brainchat import i18n
from brainchat.redact import get_logger
from brainchat.store.accounts import Accounts
from brainchat.store.throttle import NAME_CHARS, LoginThrottle
from brainchat.ui import sessions

log = get_logger("brainchat.store")


async def check_password(accounts: Accounts, username: str, password: str) -> cl.User | None:
    """The user, with the account's session key and the login time for the cookie, or None."""
    from chainlit.utils import utc_now

    name = (username or "").strip()
    if not await accounts.verify(name, password or "", utc_now()):
        log.info("failed login for %r", name[:NAME_CHARS])
        return None
    key = await accounts.open_session(name)
    metadata = {"provider": "password", sessions.CLAIM: key, sessions.SINCE: int(time.time())}
    return cl.User(identifier=name, metadata=metadata)


def install(accounts: Accounts, throttle: LoginThrottle) -> None:
    """The throttled /login first in Chainlit's routes, and the logout callback; idempotent."""
    from chainlit.server import app
    from chainlit.server import login as chainlit_login

    async def password_login(username: str, password: str) -> cl.User | None:
        return await check_password(accounts, username, password)

    async def logout(request: Request, response: Response) -> dict[str, Any]:
        from chainlit.auth import get_token_from_cookies

        await sessions.end_sessions_of(accounts, get_token_from_cookies(request.cookies))
        return {"success": True}

    cl.password_auth_callback(password_login)
    cl.on_logout(logout)
    if getattr(app.state, "brainchat_login", False):
        return  # `chainlit run -w` imports the app module again on every change

    async def login(request: Request, form_data: OAuth2PasswordRequestForm = Depends()) -> Response:
        name = (form_data.username or "").strip()
        client = request.client.host if request.client else "?"
        if wait := throttle.wait(name, client):
            seconds = math.ceil(wait)
            lang = i18n.pick(request.headers.get("accept-language"))
            log.warning("login for %r from %s refused for %s s: too many failures", name[:NAME_CHARS], client, seconds)  # fmt: skip
            return JSONResponse(
                {"detail": i18n.t("session.too_many_logins", lang, seconds=seconds)},
                status_code=429,
                headers={"Retry-After": str(seconds)},
            )
        try:
            answer: Response = await chainlit_login(request, Response(), form_data)
        except HTTPException as exc:
            if exc.status_code == 401:
                throttle.failed(name, client)
            raise
        throttle.succeeded(name, client)
        return answer

    app.add_api_route("/login", login, methods=["POST"], include_in_schema=False)
    app.router.routes.insert(0, app.router.routes.pop())
    app.state.brainchat_login = True
