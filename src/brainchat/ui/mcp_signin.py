"""Sign-in to a user's MCP server that requires OAuth: the link in the chat, the callback route.

A server the user connects with the plug button goes through Chainlit's `/mcp` route and the
guarded client of ui/outbound.py, which asks `user_auth()` for its httpx.Auth. On a 401 the SDK's
flow (tools/mcp_oauth.py) sends the link here (`show_link`: a chat message naming the server and
the host where the user signs in), and waits for the callback: the authorization server sends the
browser to `CALLBACK_PATH`, whose handler checks that the `state` is this user's pending sign-in
and hands the code over; the connect then finishes as any other. Tokens are kept per user in the
store, encrypted; removing the server (the plug dialog's trash) deletes them: that is signing out.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
from typing import Any
from urllib.parse import quote

import chainlit as cl
import httpx
from fastapi import Request

from brainchat import i18n
from brainchat.redact import get_logger, mask, mask_url
from brainchat.tools import mcp_oauth
from brainchat.tools.mcp_oauth import CALLBACK_PATH, CLIENT_METADATA_PATH, SignInLink
from brainchat.ui.render import AUTHOR

log = get_logger("brainchat.ui")
_vault: Any = mcp_oauth.MemoryVault()  # the store's McpTokenStore once install() gave it
_servers: dict[tuple[str, str], str] = {}  # (chat session id, server name) -> its URL, for sign-out
TASK_PREFIX = "mcp-session-"  # Chainlit's name for the task that connects a server


def install(vault: Any) -> None:
    """Keep sign-ins in `vault` (the store), and serve the callback route before Chainlit's pages."""
    global _vault
    _vault = vault
    from chainlit.server import app

    if getattr(app.state, "brainchat_mcp_signin", False):
        return  # `chainlit run -w` imports the app module again on every change
    for path, endpoint in ((CALLBACK_PATH, callback), (CLIENT_METADATA_PATH, client_document)):
        app.add_api_route(path, endpoint, methods=["GET"], include_in_schema=False)
        app.router.routes.insert(0, app.router.routes.pop())
    app.state.brainchat_mcp_signin = True


def vault() -> Any:
    return _vault


def _user() -> str | None:
    try:
        user = cl.context.session.user
    except Exception:  # noqa: BLE001 - no chat context: no one to sign in
        return None
    return str(user.identifier) if user is not None else None


def _server_name() -> str | None:
    """The name the user gave the server (Chainlit names its connect task after it)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    name = task.get_name() if task is not None else ""
    return name[len(TASK_PREFIX) :] if name.startswith(TASK_PREFIX) else None


def app_origin() -> str:
    """The app's origin as the user's page sees it (CHAINLIT_URL, else the page's Origin)."""
    base = os.environ.get("CHAINLIT_URL", "").rstrip("/")
    if not base:
        environ = cl.context.session.environ if hasattr(cl.context.session, "environ") else {}
        base = str(environ.get("HTTP_ORIGIN") or "")
        if not base:
            scheme = "https" if environ.get("wsgi.url_scheme") == "https" else "http"
            base = f"{scheme}://{environ.get('HTTP_HOST', '127.0.0.1:8000')}"
    return base


def user_auth() -> mcp_oauth.FirstRequestAuth | None:
    """The OAuth sign-in for the server the current user is connecting (None: no user)."""
    user = _user()
    if user is None:
        return None
    origin = app_origin()
    session = cl.context.session
    named = _server_name()  # now: the first request runs in another task

    def make(server_url: str) -> httpx.Auth:
        name = named or mask_url(server_url, drop_query=True)
        _servers[(session.id, name)] = server_url
        return mcp_oauth.user_sign_in(
            user=user,
            server=name,
            server_url=server_url,
            vault=vault(),
            redirect_uri=origin + CALLBACK_PATH,
            show_link=show_link,
            client_metadata_url=mcp_oauth.metadata_document_url(origin),
        )

    return mcp_oauth.FirstRequestAuth(make)


async def show_link(link: SignInLink) -> None:
    """The sign-in link in the chat, with the server's name and where the user signs in."""
    wait = int(mcp_oauth.SIGN_IN_WAIT)
    log.info("MCP server %r asks the user to sign in at %s", link.server, link.host)
    # The server and its authorization server chose these: no markdown of theirs in the message
    server, host, url = _text(link.server), _text(link.host), _href(link.url)
    said = i18n.t("mcp.sign_in", server=server, host=host, url=url, minutes=wait // 60)
    await cl.Message(content=said, author=AUTHOR).send()


def _text(value: str) -> str:
    """`value` as plain text in markdown (its markup characters escaped)."""
    return re.sub(r"([\\`*_{}\[\]()<>#+!|~-])", r"\\\1", value)


def _href(url: str) -> str:
    """`url` as a markdown link target: what could end or break the target percent-encoded."""
    return quote(url, safe="/:?&=%#@!$',;+.~_-")


async def sign_out(session_id: str, server: str) -> bool:
    """The user removed the server: delete their tokens for it. True when some were kept."""
    url, user = _servers.pop((session_id, server), None), _user()
    if url is None or user is None:
        return False
    try:
        return bool(await vault().remove(user, url))
    except Exception as exc:  # noqa: BLE001 - the server is gone from the chat either way
        log.warning("MCP sign-in to %r not deleted: %s", server, mask(str(exc)))
        return False


def _page(title: str, text: str, status: int) -> Any:
    from fastapi.responses import HTMLResponse

    body = (
        "<!doctype html><html><head><meta charset='utf-8'><title>"
        f"{html.escape(title)}</title></head><body style='font-family:sans-serif;margin:3em'>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>"
    )
    headers = {
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    }
    return HTMLResponse(body, status_code=status, headers=headers)


async def callback(request: Request) -> Any:
    """GET CALLBACK_PATH?code=...&state=...: finish the caller's own pending sign-in, or refuse."""
    from fastapi import HTTPException

    from brainchat.ui.routes import current_identifier

    try:
        who = await current_identifier(request)
    except HTTPException:
        who = None
    lang = i18n.pick(request.headers.get("accept-language"))  # the page the browser opens
    params = request.query_params
    state, code, error = params.get("state"), params.get("code"), params.get("error")
    try:
        if who is None or not state:
            raise mcp_oauth.SignInRefused("not signed in to brainchat")
        server = mcp_oauth.PENDING.finish(who, state, code, error)
    except mcp_oauth.SignInRefused:
        log.info("MCP sign-in callback refused (no pending sign-in of this user for its state)")
        return _page(
            i18n.t("mcp.page.not_accepted", lang), i18n.t("mcp.page.not_accepted_text", lang), 400
        )
    if error:
        return _page(
            i18n.t("mcp.page.refused", lang),
            i18n.t("mcp.page.refused_text", lang, server=server),
            400,
        )
    log.info("MCP sign-in to %r: code received", server)
    return _page(
        i18n.t("mcp.page.signed_in", lang),
        i18n.t("mcp.page.signed_in_text", lang, server=server),
        200,
    )


async def client_document(request: Request) -> Any:
    """GET CLIENT_METADATA_PATH: brainchat's Client ID Metadata Document (public, no login)."""
    from fastapi.responses import JSONResponse

    origin = os.environ.get("CHAINLIT_URL", "").rstrip("/") or str(request.base_url).rstrip("/")
    headers = {"Cache-Control": "public, max-age=3600"}
    return JSONResponse(mcp_oauth.client_document(origin), headers=headers)
