"""The page as a browser loads it: every file from the app itself, under the app's own name.

Chainlit's page asks Google Fonts for Inter and jsDelivr for KaTeX's stylesheet (offline the page
waits on them and logs errors; online it tells third parties that the app was opened), and its
og:image and og:url name Chainlit. public/ carries the same fonts and stylesheet (public/fonts,
public/katex) and the app's picture (public/brainchat.png); `install()` serves Chainlit's page
with those instead. In local mode (no login) `install_local_user` answers the page's first
question, GET /user, with the local user instead of a 401 that every browser logs as an error.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any, cast

from fastapi import HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import HTMLResponse, JSONResponse, Response

PAGE_ROUTE = "/{full_path:path}"  # Chainlit's catch-all: the page, whatever the path
IMAGE = "/public/brainchat.png"
# Chainlit's Google Fonts block (a public/theme.json with custom_fonts replaces it: left as is)
FONTS = re.compile(
    r'<!-- FONT START -->\s*<link\s+href="https://fonts\.googleapis\.com/[^>]*>\s*<!-- FONT END -->'
)
PRECONNECT = re.compile(r'\s*<link rel="preconnect" href="https://[^"]*"[^>]*>')
KATEX = re.compile(r'href="https://cdn\.jsdelivr\.net/npm/katex@[^"]*/katex\.min\.css"')


def offline_page(page: str, root: str, url: str, image: str) -> str:
    """Chainlit's page with the fonts and KaTeX from public/, no preconnect to their CDNs, and
    og:url / og:image set to `url` / `image` where Chainlit's own defaults name Chainlit."""
    from chainlit.config import config

    page = PRECONNECT.sub("", page)
    fonts = f'<link rel="stylesheet" href="{root}/public/fonts/inter.css" />'
    page = FONTS.sub(lambda _: f"<!-- FONT START -->{fonts}<!-- FONT END -->", page)
    page = KATEX.sub(f'href="{root}/public/katex/katex.min.css"', page)
    url = config.ui.custom_meta_url or url
    image = config.ui.custom_meta_image_url or image
    for prop, value in (("og:url", url), ("og:image", image)):
        tag = re.compile(rf'<meta property="{prop}" content="[^"]*">')
        page = tag.sub(_meta(prop, value).replace("\\", "\\\\"), page, count=1)  # a literal
    more = "".join(f"\n    {_meta(p, config.ui.name)}" for p in ("og:site_name", "og:image:alt"))
    return page.replace(_meta("og:url", url), _meta("og:url", url) + more, 1)


def _meta(prop: str, value: str) -> str:
    return f'<meta property="{prop}" content="{html.escape(value, quote=True)}">'


def install() -> None:
    """Serve the page through `offline_page`: a route just before Chainlit's catch-all, so every
    route Chainlit matches first still answers as before; idempotent."""
    from chainlit import server

    if getattr(server.app.state, "brainchat_page", False):
        return  # `chainlit run -w` imports the app module again on every change
    # FastAPI 0.165 keeps an included router's routes in that router (matched in its order,
    # read at the first request); older ones copied them into the app's list at inclusion
    for owner in (server.router, server.app.router):
        routes = owner.routes
        at = [i for i, r in enumerate(routes) if getattr(r, "endpoint", None) is server.serve]
        if at:
            path = PAGE_ROUTE if owner is server.router else cast(Any, routes[at[0]]).path
            owner.add_api_route(path, serve_page, methods=["GET"], include_in_schema=False)
            routes.insert(at[0], routes.pop())
            break
    else:
        raise RuntimeError("brainchat: Chainlit's page route is gone (a new Chainlit version?)")
    server.app.state.brainchat_page = True


async def serve_page(request: Request) -> HTMLResponse:
    from chainlit.server import get_html_template, get_user_facing_url

    root = os.getenv("CHAINLIT_PARENT_ROOT_PATH", "") + os.getenv("CHAINLIT_ROOT_PATH", "")
    root = root.rstrip("/")
    origin = os.environ.get("CHAINLIT_URL", "").rstrip("/") or (
        f"{request.url.scheme}://{request.url.netloc}"
    )
    page = offline_page(
        get_html_template(root), root, get_user_facing_url(request.url), origin + root + IMAGE
    )
    return HTMLResponse(page)


LocalUser = Callable[[Any], Awaitable[Any]]


def install_local_user(local_user: LocalUser) -> None:
    """GET /user in local mode: the user of the auth cookie, or else the local user, logged in
    on the spot as POST /auth/header would (the same callback decides, so a proxied request
    still gets 401); the page then never sees a 401. Put before Chainlit's /user; idempotent."""
    from chainlit.server import app

    if getattr(app.state, "brainchat_local_user", False):
        return

    async def user(request: Request) -> Response:
        from chainlit.auth import authenticate_user, create_jwt, reuseable_oauth, set_auth_cookie

        token = await reuseable_oauth(request)
        if token:
            try:
                return JSONResponse(jsonable_encoder(await authenticate_user(token)))
            except HTTPException:
                pass  # signed with another secret (a new state folder): log in afresh
        found = await local_user(request.headers)
        if found is None:
            raise HTTPException(status_code=401, detail="Not authenticated")
        token = create_jwt(found)
        response = JSONResponse(jsonable_encoder(await authenticate_user(token)))
        set_auth_cookie(request, response, token)
        return response

    app.add_api_route("/user", user, methods=["GET"], include_in_schema=False)
    app.router.routes.insert(0, app.router.routes.pop())
    app.state.brainchat_local_user = True
