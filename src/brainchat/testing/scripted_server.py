"""A scripted OpenAI-compatible model server: real HTTP and SSE on 127.0.0.1, for tests and demos.

Point any OpenAI client at `server.base_url` ("http://127.0.0.1:<port>/v1"); it serves
`POST /v1/chat/completions` (streamed and not) and `GET /v1/models`. `server.models` fixes the
list `/v1/models` reports (None: every model scripted or asked for so far); `server.api_key` makes
both endpoints answer 401 unless the request carries `Authorization: Bearer <that key>`, as a
real server with a key does. Each model has a queue of
scripted replies; when it is empty the `responder` is asked (if set), then the model's default
reply is used, then the server-wide default, then a Text echoing "(scripted) " + the last user
message. A responder is a function of the `RecordedRequest` (model, messages, tools) that returns
a reply (object or dict) or None to pass: replies chosen by what was asked rather than by order,
as the `--demo` app does (`brainchat.demo.replies`); if it raises, that request gets HTTP 500
naming the error::

    from brainchat.testing.scripted_server import Call, Drop, Fault, ScriptedServer, Text, ToolCalls

    with ScriptedServer() as server:                     # or the `scripted_server` pytest fixture
        server.queue("m1", ToolCalls([Call("web_search", {"query": "EEG"})]), Text("Done."))
        server.queue("m2", Fault(429), Text("Hi", reasoning="Greeting.", ttft=0.2))
        server.send_usage = False                        # server-wide: never send a usage chunk
        server.reject_stream_options = True              # HTTP 400 to requests with stream_options
        server.pace = 0                                  # every reply's ttft/token_delay x 0: at once
        ...                                              # run the app against server.base_url
        assert server.requests_for("m1")[0].tools[0]["function"]["name"] == "web_search"

A final usage chunk is streamed when the request sets `stream_options.include_usage` and
`server.send_usage` is true; a reply's `usage=True/False` forces it either way. Usage numbers are
deterministic (formula in `brainchat.testing.replies`) and the exact usage sent is in the request
log. Every request is recorded (`server.requests`, a list of `RecordedRequest`) as it arrives;
`usage`, `first_chunk_at`, `finished_at` and `outcome` are filled in as it is served. Timestamps are
`time.time()` seconds. The server runs uvicorn in a background thread with its own event loop, so
sync tests, async tests and app subprocesses can all use it.

Admin API (for a server in another process, e.g. one started by hand), at the server root:
`POST /_admin/queue {"model", "replies": [reply dicts]}`, `POST /_admin/default {"model" | null,
"reply"}`, `POST /_admin/config {"send_usage": bool, "reject_stream_options": bool, "models": [ids] | null,
"api_key": str | null}`, `GET /_admin/requests`, `POST /_admin/reset`.

Strict use: a request that reaches the last fallback (no queued reply, no responder answer, no
default) is *unexpected* and is kept in `server.unexpected`; `server.unused()` lists the queued
replies never served; `server.problems()` says both in one message (empty when the script was
used exactly). The pytest fixtures (`scripted_server`, the e2e `model_server`) fail a test whose
server has problems at teardown, unless it is marked `@pytest.mark.scripted_lenient("why")`.

By hand: `python -m brainchat.testing.scripted_server [--port 8765] [--responder module:function]
[examples/scripted_demo.json]` prints the base_url and serves until Ctrl-C. A script file is
`{"send_usage": true, "default": reply, "defaults": {model: reply}, "queues": {model: [reply...]}}`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from brainchat.testing.admin import admin_routes
from brainchat.testing.embeddings import embeddings_route
from brainchat.testing.replies import (
    Call,
    Drop,
    Empty,
    Fault,
    Malformed,
    Reply,
    Text,
    ToolCalls,
    describe,
    describe_message,
    message_text,
    reply_from_dict,
    reply_to_dict,
)
from brainchat.testing.wire import Exchange, RecordedRequest, error_response

__all__ = [
    "Call",
    "Drop",
    "Empty",
    "Fault",
    "Malformed",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
]
__all__ += ["Text", "ToolCalls", "reply_from_dict", "reply_to_dict"]

log = logging.getLogger(__name__)
Responder = Callable[[RecordedRequest], Reply | dict[str, Any] | None]
STREAM_OPTIONS_REFUSAL = "Unrecognized request argument supplied: stream_options"


class _QuietDrops(logging.Filter):
    """Hide uvicorn's complaint about the streams we cut on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("ASGI callable returned without completing")


_QUIET_DROPS = _QuietDrops()


class ScriptedServer:
    """A scripted OpenAI-compatible server on 127.0.0.1; see the module docstring."""

    def __init__(
        self,
        port: int = 0,
        *,
        send_usage: bool = True,
        script: dict | str | Path | None = None,
        responder: Responder | None = None,
        pace: float = 1.0,
    ) -> None:
        self.port = port
        # every reply's ttft and token_delay are multiplied by it (0: at once; the demo's
        # BRAINCHAT_DEMO_PACE); the request log keeps the reply as served
        self.pace = self._initial_pace = pace
        self.responder = responder  # asked when a model's queue is empty (see the docstring)
        self.send_usage = send_usage
        # Like some llama.cpp builds: HTTP 400 to any request with `stream_options`.
        self.reject_stream_options = False
        self._initial_send_usage = send_usage
        self.models: list[str] | None = None  # what /v1/models reports (None: the known models)
        self.context_windows: dict[str, int] = {}  # /v1/models' max_model_len per id (like vLLM)
        self.api_key: str | None = None  # when set, requests without this bearer key get 401
        self.embedding_fault: int | None = None  # /v1/embeddings answers this HTTP status
        self.embedding_requests: list[list[str]] = []  # each /v1/embeddings request's inputs
        self._lock = threading.Lock()
        self._queues: dict[str, list[Reply]] = {}
        self._defaults: dict[str | None, Reply] = {}
        self._requests: list[RecordedRequest] = []
        self._unexpected: list[RecordedRequest] = []  # answered by the echo: nothing was scripted
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(routes=self._routes())
        if script is not None:
            self.load_script(script)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def admin_url(self) -> str:
        return f"{self.url}/_admin"

    # -- scripting -------------------------------------------------------------------------
    def queue(self, model: str, *replies: Reply | dict[str, Any]) -> None:
        """Append replies (objects or dicts) to `model`'s queue."""
        parsed = [r if isinstance(r, Reply) else reply_from_dict(r) for r in replies]
        with self._lock:
            self._queues.setdefault(model, []).extend(parsed)

    def set_default(self, model: str | None, reply: Reply | dict[str, Any] | None) -> None:
        """Set the reply used when `model`'s queue is empty (model None: any model; reply None: unset)."""
        with self._lock:
            if reply is None:
                self._defaults.pop(model, None)
            else:
                self._defaults[model] = (
                    reply if isinstance(reply, Reply) else reply_from_dict(reply)
                )

    def remaining(self, model: str | None = None) -> int:
        """How many queued replies are still unserved (for one model, or all)."""
        with self._lock:
            return sum(len(q) for m, q in self._queues.items() if model in (None, m))

    def unused(self) -> dict[str, list[Reply]]:
        """The queued replies never served, per model (models with none left out)."""
        with self._lock:
            return {m: list(q) for m, q in self._queues.items() if q}

    @property
    def unexpected(self) -> list[RecordedRequest]:
        """Requests that found nothing scripted (empty queue, no responder answer, no default)."""
        with self._lock:
            return list(self._unexpected)

    def problems(self) -> str:
        """What a strict test fails on: unused replies and unexpected requests ('' when none)."""
        said = [
            f"{len(replies)} queued reply(s) for {model!r} never requested: "
            + ", ".join(describe(r) for r in replies)
            for model, replies in self.unused().items()
        ]
        said += [
            f"unexpected request to {r.model!r} (its queue was empty), last message "
            f"{describe_message(r.messages)}"
            for r in self.unexpected
        ]
        return "; ".join(said)

    def load_script(self, script: dict[str, Any] | str | Path) -> None:
        """Load a script: a dict or a JSON file path (format in the module docstring)."""
        data = script if isinstance(script, dict) else json.loads(Path(script).read_text())
        unknown = sorted(k for k in data if not k.startswith("_"))
        unknown = [k for k in unknown if k not in {"send_usage", "default", "defaults", "queues"}]
        if unknown:
            raise ValueError(
                f"script: unknown key(s) {unknown}; allowed: send_usage, default, defaults, queues"
            )
        self.send_usage = bool(data.get("send_usage", self.send_usage))
        if data.get("default") is not None:
            self.set_default(None, data["default"])
        for model, reply in data.get("defaults", {}).items():
            self.set_default(model, reply)
        for model, replies in data.get("queues", {}).items():
            self.queue(model, *replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every chat-completion request so far, oldest first (a copy of the list)."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, model: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.model == model]

    def clear(self) -> None:
        """Forget the recorded requests, unexpected ones included (queues and defaults stay)."""
        with self._lock:
            self._requests.clear()
            self._unexpected.clear()

    def reset(self) -> None:
        """Forget requests, queues and defaults, and restore `send_usage`."""
        with self._lock:
            self._requests.clear()
            self._unexpected.clear()
            self._queues.clear()
            self._defaults.clear()
        self.send_usage = self._initial_send_usage
        self.pace = self._initial_pace
        self.reject_stream_options = False
        self.models = self.api_key = None
        self.context_windows = {}

    def _refused(self, request: Request) -> Response | None:
        """A 401 like OpenAI's when a key is required and the request lacks it, else None."""
        if self.api_key is None:
            return None
        if request.headers.get("authorization", "") == f"Bearer {self.api_key}":
            return None
        return error_response(401, "Incorrect API key provided.")

    def _next_reply(self, rec: RecordedRequest) -> Reply:
        model, messages = rec.model, rec.messages
        with self._lock:
            queue = self._queues.get(model)
            if queue:
                return queue.pop(0)
            default = self._defaults.get(model) or self._defaults.get(None)
        if self.responder is not None and (answer := self.responder(rec)) is not None:
            return answer if isinstance(answer, Reply) else reply_from_dict(answer)
        if default is not None:
            return default
        last_user: dict[str, Any] = next(
            (m for m in reversed(messages) if m.get("role") == "user"), {}
        )
        with self._lock:
            self._unexpected.append(rec)
        return Text("(scripted) " + message_text(last_user))

    # -- HTTP ------------------------------------------------------------------------------
    def _routes(self) -> list[Route]:
        return [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            embeddings_route(self),
            *admin_routes(self),
        ]

    async def _chat(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        try:
            body = await request.json()
            model, messages = str(body["model"]), list(body["messages"])
        except (ValueError, KeyError, TypeError) as exc:
            return error_response(400, f"bad chat completion request: {exc!r}")
        stream, options = bool(body.get("stream")), body.get("stream_options")
        rec = RecordedRequest(model, messages, body.get("tools"), stream, options, body)
        with self._lock:
            self._requests.append(rec)
            cid = f"chatcmpl-scripted-{len(self._requests)}"
        if self.reject_stream_options and "stream_options" in body:
            rec.outcome, rec.first_chunk_at = "fault", time.time()
            rec.finished_at = time.time()  # no scripted reply is used up
            return error_response(400, STREAM_OPTIONS_REFUSAL)
        try:
            reply = self._next_reply(rec)
        except Exception as exc:  # noqa: BLE001 - a broken responder fails this request loudly
            log.exception("responder failed for %s", model)
            rec.outcome, rec.first_chunk_at = "fault", time.time()
            rec.finished_at = time.time()
            return error_response(500, f"scripted responder failed: {exc!r}")
        if self.pace != 1.0:
            reply = dataclasses.replace(
                reply, ttft=reply.ttft * self.pace, token_delay=reply.token_delay * self.pace
            )
        rec.reply = reply_to_dict(reply)
        log.info("%s <- %d message(s); serving %s", model, len(messages), rec.reply["type"])
        if isinstance(reply, Fault):
            await asyncio.sleep(reply.ttft)
            rec.outcome, rec.first_chunk_at = "fault", time.time()
            rec.finished_at = time.time()
            return error_response(reply.status, reply.message)
        asked = bool((options or {}).get("include_usage")) if stream else True
        wanted = reply.usage if reply.usage is not None else self.send_usage and asked
        return Exchange(rec, reply, cid, bool(wanted))

    async def _models(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        with self._lock:
            names = (
                set(self._queues)
                | {m for m in self._defaults if m}
                | {r.model for r in self._requests}
            )
        listed = list(self.models) if self.models is not None else sorted(names)
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
            | ({"max_model_len": self.context_windows[m]} if m in self.context_windows else {})
            for m in listed
        ]
        return JSONResponse({"object": "list", "data": data})

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> ScriptedServer:
        """Bind 127.0.0.1:`port` (0: an ephemeral one) and serve in a background thread."""
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit this; without it Nagle + delayed ACK add ~40 ms per response.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        logging.getLogger("uvicorn.error").addFilter(_QUIET_DROPS)  # adding twice is a no-op
        config = uvicorn.Config(
            self.app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=server.run,
            kwargs={"sockets": [sock]},
            daemon=True,
            name=f"scripted-server-{self.port}",
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"scripted server on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (streams still open are cut after ~1 s)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":  # serving by hand lives in by_hand.py (it imports this module)
    import runpy

    runpy.run_module("brainchat.testing.by_hand", run_name="__main__")
