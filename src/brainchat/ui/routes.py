"""HTTP routes that check the owner: stored element files, and ratings of messages.

Chainlit serves nothing for a local storage client, and its feedback routes rate any message of
anyone; these routes go in front of Chainlit's and answer 404 for what is not the caller's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, Response

from brainchat.store.records import Store
from brainchat.ui.datalayer import FILES_ROUTE, LocalStorageClient

INLINE_TYPES = {
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "text/csv",
    "application/json",
}
NOT_FOUND = HTTPException(status_code=404, detail="Not found")


async def current_identifier(request: Request) -> str:
    """The logged-in user's identifier (from the auth cookie or bearer token), or 401."""
    from chainlit.auth import authenticate_user, reuseable_oauth

    token = await reuseable_oauth(request)
    if not token:
        raise HTTPException(status_code=401, detail="Not authenticated")
    user = await authenticate_user(token)
    return str(user.identifier)


def install(store: Store, storage: LocalStorageClient) -> None:
    """Put the routes first in Chainlit's app (before its catch-all page route)."""
    from chainlit.server import app

    if getattr(app.state, "brainchat_routes", False):
        return  # `chainlit run -w` imports the app module again on every change

    async def element_file(request: Request) -> Response:
        key = unquote(request.path_params["key"])
        who = await current_identifier(request)
        found = await store.object_owner(key)
        if found is None or found[0] != who:
            raise NOT_FOUND  # not "forbidden": whether it exists is not theirs to learn
        data = storage.files.read(key)
        if data is None:
            raise NOT_FOUND
        mime = found[1] or "application/octet-stream"
        inline = mime in INLINE_TYPES
        headers = {
            "Cache-Control": "private, max-age=3600",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "Content-Disposition": "inline" if inline else "attachment",
        }
        return Response(
            data, media_type=mime if inline else "application/octet-stream", headers=headers
        )

    async def rate(request: Request) -> Any:
        from chainlit.server import update_feedback
        from chainlit.types import UpdateFeedbackRequest

        who = await current_identifier(request)
        payload = UpdateFeedbackRequest(**await request.json())
        fb = payload.feedback
        if await store.step_author(fb.forId) != who:
            raise NOT_FOUND
        if fb.id and await store.feedback_author(fb.id) not in (None, who):
            raise NOT_FOUND
        user = await _persisted(who)
        return await update_feedback(request, payload, user)

    async def unrate(request: Request) -> JSONResponse:
        body = await request.json()
        who = await current_identifier(request)
        feedback_id = str(body.get("feedbackId") or "")
        if await store.feedback_author(feedback_id) != who:
            raise NOT_FOUND
        await store.delete_feedback(feedback_id)
        return JSONResponse({"success": True})

    routes: list[tuple[str, Any, list[str]]] = [
        (FILES_ROUTE + "{key:path}", element_file, ["GET"]),
        ("/feedback", rate, ["PUT"]),
        ("/feedback", unrate, ["DELETE"]),
    ]
    for path, endpoint, methods in routes:
        app.add_api_route(path, endpoint, methods=methods, include_in_schema=False)
        app.router.routes.insert(0, app.router.routes.pop())
    app.state.brainchat_routes = True


async def _persisted(identifier: str) -> Any:
    from chainlit.data import get_data_layer

    layer = get_data_layer()
    return await layer.get_user(identifier) if layer else None
