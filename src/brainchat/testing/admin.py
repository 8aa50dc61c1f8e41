"""The scripted server's admin API, for a server in another process (see scripted_server's docstring)."""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def admin_routes(server: Any) -> list[Route]:
    """`/_admin/queue`, `/default`, `/config`, `/requests` and `/reset` on `server` (a
    ScriptedServer; not imported here, as it imports this module)."""

    async def queue(request: Request) -> Response:
        body = await request.json()
        try:
            server.queue(str(body["model"]), *body.get("replies", []))
        except (ValueError, KeyError, TypeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(
            {"queued": len(body.get("replies", [])), "remaining": server.remaining(body["model"])}
        )

    async def default(request: Request) -> Response:
        body = await request.json()
        try:
            server.set_default(body.get("model"), body.get("reply"))
        except (ValueError, TypeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({"ok": True})

    async def config(request: Request) -> Response:
        body = await request.json()
        if "send_usage" in body:
            server.send_usage = bool(body["send_usage"])
        if "reject_stream_options" in body:
            server.reject_stream_options = bool(body["reject_stream_options"])
        answer: dict[str, Any] = {
            "send_usage": server.send_usage,
            "reject_stream_options": server.reject_stream_options,
        }
        if "models" in body:
            server.models = None if body["models"] is None else [str(m) for m in body["models"]]
            answer["models"] = server.models
        if "api_key" in body:  # never echoed back
            server.api_key = None if body["api_key"] is None else str(body["api_key"])
        return JSONResponse(answer)

    async def requests(request: Request) -> Response:
        return JSONResponse([dataclasses.asdict(r) for r in server.requests])

    async def reset(request: Request) -> Response:
        server.reset()
        return JSONResponse({"ok": True})

    return [
        Route("/_admin/queue", queue, methods=["POST"]),
        Route("/_admin/default", default, methods=["POST"]),
        Route("/_admin/config", config, methods=["POST"]),
        Route("/_admin/requests", requests, methods=["GET"]),
        Route("/_admin/reset", reset, methods=["POST"]),
    ]
