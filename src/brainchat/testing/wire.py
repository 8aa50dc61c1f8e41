"""How the scripted server puts a reply on the wire: OpenAI chunks, errors, cut streams.

`Exchange` plays one scripted reply over raw ASGI (not a Starlette StreamingResponse) so that a
`Drop` can end the response without finishing it, and it watches for the client going away so
the request log can tell a finished exchange from one the client abandoned.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from brainchat.testing.replies import (
    Drop,
    Malformed,
    Reply,
    Text,
    ToolCalls,
    content_deltas,
    full_message,
    usage_for,
)

ERROR_TYPES = {400: "invalid_request_error", 429: "rate_limit_error"}


@dataclass
class RecordedRequest:
    """One chat-completion request as the server saw it, and what it sent back."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    stream: bool
    stream_options: dict[str, Any] | None
    params: dict[str, Any]  # the whole JSON body
    usage: dict[str, Any] | None = None  # the usage object sent, None when none was sent
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    first_chunk_at: float | None = None  # first SSE data chunk (or the non-streamed body)
    reply: dict[str, Any] | None = None  # the scripted reply served, in dict form
    outcome: str = "pending"  # ok | fault | drop | malformed | disconnected


def chunk(
    rec: RecordedRequest, cid: str, delta: dict[str, Any], finish: str | None = None
) -> bytes:
    body = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(rec.started_at),
        "model": rec.model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def error_response(status: int, message: str) -> JSONResponse:
    kind = ERROR_TYPES.get(status, "server_error")
    headers = {"retry-after": "0"} if status == 429 else None
    body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return JSONResponse(body, status_code=status, headers=headers)


class Exchange(Response):
    """Plays one scripted reply over raw ASGI, so a stream can be cut without finishing it."""

    def __init__(self, rec: RecordedRequest, reply: Reply, cid: str, send_usage: bool) -> None:
        self.rec, self.reply, self.cid = rec, reply, cid
        self.deltas = content_deltas(reply, id_prefix=f"call_{cid.rsplit('-', 1)[-1]}")
        self.finish = "tool_calls" if isinstance(reply, ToolCalls) else "stop"
        limit = rec.params.get("max_completion_tokens") or rec.params.get("max_tokens")
        if isinstance(reply, Text) and isinstance(limit, int) and len(self.deltas) > limit:
            # A real server stops at max_tokens (here a streamed piece stands for a token) and
            # says so with finish_reason "length".
            self.deltas = self.deltas[:limit]
            kept = "".join(str(d.get("content") or "") for d in self.deltas)
            self.reply = dataclasses.replace(reply, content=kept)
            self.finish = "length"
        self.usage = usage_for(self.reply, rec.messages, self.deltas) if send_usage else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if self.rec.outcome == "pending":  # uvicorn also reports a disconnect once we are done
                self.rec.outcome = "disconnected"
            tg.cancel_scope.cancel()

        async def play() -> None:
            await (self._stream(send) if self.rec.stream else self._whole(send))
            tg.cancel_scope.cancel()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                tg.start_soon(play)
        finally:
            if self.rec.finished_at is None:  # a cut or abandoned exchange ends here
                self.rec.finished_at = time.time()

    async def _start(self, send: Send, content_type: bytes) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", content_type)],
            }
        )

    async def _body(self, send: Send, data: bytes, more: bool = True) -> None:
        if self.rec.first_chunk_at is None:
            self.rec.first_chunk_at = time.time()
        if not more:  # stamped before the last byte leaves: the client may read the log at once
            self.rec.finished_at = time.time()
        await send({"type": "http.response.body", "body": data, "more_body": more})

    async def _stream(self, send: Send) -> None:
        reply, rec = self.reply, self.rec
        items = [chunk(rec, self.cid, d) for d in self.deltas]
        if isinstance(reply, Drop | Malformed):
            cut = min(max(reply.after_chunks, 0), len(items))
            if isinstance(reply, Drop):
                items = items[:cut]
            else:
                items.insert(cut, b"data: {not json\n\n")
        await self._start(send, b"text/event-stream; charset=utf-8")
        # Chunk i is due at ttft + i x token_delay after the start, like a real server's clock:
        # a late wake-up (a loaded machine) delays one chunk, not every chunk after it.
        start = time.monotonic()
        await asyncio.sleep(reply.ttft)
        for i, item in enumerate(items):
            if i and reply.token_delay:
                due = start + reply.ttft + i * reply.token_delay
                await asyncio.sleep(max(0.0, due - time.monotonic()))
            await self._body(send, item)
        if isinstance(reply, Drop):
            rec.outcome = "drop"
            return  # returning without the final body makes uvicorn close the connection
        await self._body(send, chunk(rec, self.cid, {}, self.finish))
        if self.usage is not None:
            usage_chunk = {
                "id": self.cid,
                "object": "chat.completion.chunk",
                "created": int(rec.started_at),
            }
            usage_chunk |= {"model": rec.model, "choices": [], "usage": self.usage}
            await self._body(send, b"data: " + json.dumps(usage_chunk).encode() + b"\n\n")
            rec.usage = self.usage
        rec.outcome = "malformed" if isinstance(reply, Malformed) else "ok"
        await self._body(send, b"data: [DONE]\n\n", more=False)

    async def _whole(self, send: Send) -> None:
        reply, rec = self.reply, self.rec
        await asyncio.sleep(reply.ttft + reply.token_delay * max(len(self.deltas) - 1, 0))
        await self._start(send, b"application/json")
        if isinstance(reply, Drop):
            rec.outcome = "drop"
            return await self._body(send, b'{"id": "' + self.cid.encode() + b'", "choices": [')
        if isinstance(reply, Malformed):
            rec.outcome = "malformed"
            return await self._body(send, b"{not json", more=False)
        finish = self.finish
        choice = {"index": 0, "message": full_message(reply, f"call_{self.cid.rsplit('-', 1)[-1]}")}
        body = {"id": self.cid, "object": "chat.completion", "created": int(rec.started_at)}
        body |= {
            "model": rec.model,
            "choices": [choice | {"finish_reason": finish, "logprobs": None}],
        }
        if self.usage is not None:
            body["usage"] = rec.usage = self.usage
        rec.outcome = "ok"
        await self._body(send, json.dumps(body).encode(), more=False)
