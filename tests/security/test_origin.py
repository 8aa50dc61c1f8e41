"""Only the app's own origin (or one listed in BRAINCHAT_ALLOWED_ORIGINS) may drive it.

The real app runs as `chainlit run` (the e2e `app_factory`); a python-socketio client and plain
HTTP requests play a page on another origin, which must get 403, while the app's own origin chats.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
import httpx
import pytest
import socketio

from brainchat.testing.scripted_server import Text
from brainchat.ui.origin import ENV, OriginGuard, parse_allowed
from e2e import conftest as e2e
from e2e.conftest import spec
from e2e.sio_client import SOCKET_PATH, ChainlitSocket

app_factory = e2e.app_factory  # the e2e fixtures: the real app under `chainlit run`
model_server = e2e.model_server

EVIL = "http://evil.example"
LISTED = "https://brainchat.lab.example"
# (method, path) of Chainlit routes that read or change a conversation, the user or settings
STATE_ROUTES = [
    ("GET", "/project/settings?language=en-US"),
    ("GET", "/user"),
    ("POST", "/project/threads"),
    ("PUT", "/project/thread"),
    ("DELETE", "/project/thread"),
    ("PUT", "/feedback"),
    ("POST", "/project/action"),
    ("POST", "/mcp"),
    ("POST", "/auth/header"),
]


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({"CHAT_MODEL": spec(model_server, "chat-m"),
                        ENV: f"{LISTED}, http://localhost:5173"})  # fmt: skip


@pytest.mark.parametrize("transport", ["websocket", "polling"])
async def test_socket_from_a_foreign_origin_is_refused(app, transport):
    client = ChainlitSocket()
    # engineio's polling client closes its HTTP session before it reads a refusal's body, so
    # it sometimes raises "Connection closed." instead (the raw 403 is checked below)
    with pytest.raises((socketio.exceptions.ConnectionError, RuntimeError)):
        await client.connect(app, origin=EVIL, transport=transport)
    assert not client.sio.connected
    await client.close()


@pytest.mark.parametrize("origin", [EVIL, "null", "http://127.0.0.1:9999"])
async def test_raw_handshakes_from_foreign_origins_get_403(app, origin):
    async with aiohttp.ClientSession() as http:
        poll = f"{app}{SOCKET_PATH}/?EIO=4&transport=polling"
        async with http.get(poll, headers={"Origin": origin}) as r:
            assert r.status == 403
        ws = f"{app.replace('http', 'ws')}{SOCKET_PATH}/?EIO=4&transport=websocket"
        with pytest.raises(aiohttp.WSServerHandshakeError) as err:
            await http.ws_connect(ws, headers={"Origin": origin})
        assert err.value.status == 403


@pytest.mark.parametrize("transport", ["websocket", "polling"])
async def test_own_and_listed_origins_chat(model_server, app, transport):
    for origin in (app, LISTED, None):
        model_server.queue("chat-m", Text(f"Alpha is 8 to 12 Hz via {transport}."))
        client = ChainlitSocket()
        await client.connect(app, origin=origin, transport=transport)
        try:
            await client.start_chat()
            await client.send("What is the alpha band?")
            await client.wait_for(f"Alpha is 8 to 12 Hz via {transport}.")
        finally:
            await client.close()


@pytest.mark.parametrize(("method", "path"), STATE_ROUTES)
async def test_state_routes_refuse_a_foreign_origin(app, method, path):
    async with httpx.AsyncClient(base_url=app, timeout=10) as http:
        for origin in (EVIL, "null", app.replace("127.0.0.1", "localhost")):
            r = await http.request(method, path, headers={"Origin": origin}, json={})
            assert r.status_code == 403, (origin, r.status_code, r.text[:200])
            assert "access-control-allow-origin" not in r.headers
            assert ENV in r.text  # the refusal says how to allow an origin


async def test_cors_preflight_from_a_foreign_origin_is_refused(app):
    headers = {"Origin": EVIL, "Access-Control-Request-Method": "PUT"}
    async with httpx.AsyncClient(base_url=app, timeout=10) as http:
        r = await http.options("/project/thread", headers=headers)
    assert r.status_code == 403
    assert "access-control-allow-origin" not in r.headers


async def test_own_origin_listed_origin_and_no_origin_are_served(app):
    async with httpx.AsyncClient(base_url=app, timeout=10) as http:
        for headers in ({"Origin": app}, {"Origin": LISTED}, {}):
            r = await http.get("/project/settings?language=en-US", headers=headers)
            assert r.status_code == 200, (headers, r.text[:200])
            assert "ui" in r.json()
        assert (await http.get("/")).status_code == 200  # a plain page navigation
        r = await http.get("/project/settings?language=en-US", headers={"Origin": LISTED})
        assert r.headers.get("access-control-allow-origin") == LISTED  # CORS follows the list


# -- the guard itself, without a server ---------------------------------------------------------
async def _call(guard: OriginGuard, origin: bytes, kind: str = "http") -> list[dict[str, Any]]:
    scope = {"type": kind, "scheme": "http" if kind == "http" else "ws", "method": "GET",
             "path": "/project/settings", "query_string": b"token=secret",
             "headers": [(b"host", b"127.0.0.1:8000"), (b"origin", origin)]}  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"} if kind == "websocket" else {"type": "http.request"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await guard(scope, receive, send)
    return sent


async def _inner(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (b"http://127.0.0.1:8000", True),
        (b"HTTP://127.0.0.1:8000", True),
        (b"http://127.0.0.1:8001", False),
        (b"https://127.0.0.1:8000", False),
        (b"http://localhost:8000", False),
        (b"http://127.0.0.1:8000.evil.example", False),
        (b"http://127.0.0.1:8000/path", False),
        (b"null", False),
        (b"", False),
    ],
)
async def test_guard_compares_scheme_host_and_port(origin, allowed):
    sent = await _call(OriginGuard(_inner), origin)
    assert sent[0]["status"] == (200 if allowed else 403)


async def test_guard_closes_a_foreign_websocket_before_accepting_it():
    sent = await _call(OriginGuard(_inner), b"http://evil.example", kind="websocket")
    assert sent == [{"type": "websocket.close", "code": 1008}]


async def test_refusal_log_line_is_short_escaped_and_has_no_query(caplog):
    origin = b"http://evil.example/\r\nINFO forged line " + b"x" * 5000
    with caplog.at_level(logging.WARNING, logger="brainchat.ui.origin"):
        await _call(OriginGuard(_inner), origin)
    (record,) = caplog.records
    line = record.getMessage()
    assert "evil.example" in line and "/project/settings" in line
    assert "secret" not in line and "\n" not in line and "\r" not in line
    assert len(line) < 400


def test_allowed_origins_are_normalised_and_bad_entries_named():
    allowed, errors = parse_allowed(" https://Lab.Example:443/, http://[::1]:8000 ,*, ftp://x, lab")
    assert allowed == frozenset({"https://lab.example", "http://[::1]:8000"})
    assert len(errors) == 3
    assert all(ENV in e for e in errors)
    assert any("'*'" in e for e in errors) and any("'ftp://x'" in e for e in errors)
    assert parse_allowed(None) == (frozenset(), [])


# -- DNS rebinding: a name re-pointed at 127.0.0.1 is same-origin with itself -------------------
async def test_a_rebound_host_name_is_refused_on_the_real_app(app):
    port = app.rsplit(":", 1)[1]
    async with httpx.AsyncClient(base_url=app, timeout=10) as http:
        rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        r = await http.get("/project/settings?language=en-US", headers=rebound)
        assert r.status_code == 403
        r = await http.get("/", headers={"Host": f"evil.example:{port}"})  # even a navigation
        assert r.status_code == 403
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "brainchat.lab.example"):
            r = await http.get("/project/settings?language=en-US", headers={"Host": host})
            assert r.status_code == 200, host  # loopback names and listed origins' hosts


async def test_the_host_check_applies_only_to_a_loopback_bound_server():
    async def call(server: tuple[str, int], host: bytes) -> int:
        scope = {"type": "http", "scheme": "http", "method": "GET", "path": "/",
                 "server": server, "headers": [(b"host", host)]}  # fmt: skip
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await OriginGuard(_inner)(scope, receive, send)
        return int(sent[0]["status"])

    assert await call(("127.0.0.1", 8000), b"evil.example:8000") == 403
    assert await call(("127.0.0.1", 8000), b"localhost:8000") == 200
    assert await call(("10.1.2.3", 8000), b"brainchat.example.org") == 200  # behind a proxy
