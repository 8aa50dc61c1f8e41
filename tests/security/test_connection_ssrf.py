"""SSRF through "Add a model connection" and the plug button (issue #21): an account cannot make the
server reach an internal address.

The real app under `chainlit run` with password login and accounts from `brainchat users add`.
The "internal service" is an HTTP server on 127.0.0.1 started here: it answers any GET with JSON
whose ids a probe would show, and records every request. Bob, logged in, points a connection at
it under every spelling of 127.0.0.1, picks its model and chats; then at a redirect and at a
server whose list holds ids that are not model ids; and at it as an MCP server. Ana's
connection to a model server that the operator allowed (BRAINCHAT_CONNECTION_ALLOW) is refused
at request time once the operator takes the allowance back. Addresses outside 127.0.0.1
(169.254.169.254, private ranges) are tested in tests/test_netguard.py, where the refusal is
shown to come from the address check with no connection attempted.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from brainchat.testing.scripted_server import ScriptedServer, Text
from e2e import conftest as e2e
from e2e.conftest import ROOT
from e2e.sio_client import ChainlitSocket, password_login
from mcp_servers.helpers import free_port, http_lab

pytestmark = pytest.mark.attack
app_factory = e2e.app_factory
PASSWORDS = {"ana": "ana's long password", "bob": "bob's long password"}
INTERNAL_ID = "internal-inventory-7731"  # what the internal service's JSON says
ALLOWED = re.compile(r"allowed_urls = \[[^\]]*\]")


class Internal(http.server.BaseHTTPRequestHandler):
    """An internal JSON service: answers any GET (a redirect under /hop), records everything."""

    seen: list[tuple[str, str, bytes]] = []

    def _record(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        self.seen.append((self.command, self.path, self.rfile.read(size) if size else b""))

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._record()
        if self.path.startswith("/hop"):
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}"
                             "/private-admin-console/v1")  # fmt: skip
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        ids = [INTERNAL_ID]
        if self.path.startswith("/odd"):
            ids = ["llama-3.2-1b", "<img src=x onerror=alert(1)>", "`code`", "a=b&c=d", "{x}"]
        body = json.dumps({"data": [{"id": i} for i in ids]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        self._record()
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def internal() -> Iterator[tuple[int, list[tuple[str, str, bytes]]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Internal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], Internal.seen
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def lab_mcp() -> Iterator[str]:
    with http_lab("--http") as url:  # a real MCP server over streamable HTTP on 127.0.0.1
        yield url


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


def add_accounts(home: Path, env: dict[str, str]) -> None:
    for name, password in PASSWORDS.items():
        subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", name],
                       input=password + "\n", text=True, cwd=ROOT, check=True, timeout=60,
                       env={**os.environ, "BRAINCHAT_DATA_DIR": str(home / "data"), **env})  # fmt: skip


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, lab_mcp: str) -> Path:
    """The app's home, and an app root whose Chainlit config lets users connect the lab MCP
    server (as the repo's config lets them connect 127.0.0.1:8000): only brainchat's rule
    stands between an account and it."""
    home = tmp_path_factory.mktemp("ssrf")
    root = home / "approot"
    (root / ".chainlit").mkdir(parents=True)
    config = (ROOT / ".chainlit" / "config.toml").read_text()
    origin = re.match(r"http://[^/]+", lab_mcp).group(0)  # type: ignore[union-attr]
    (root / ".chainlit" / "config.toml").write_text(
        ALLOWED.sub(f'allowed_urls = ["{origin}"]', config)
    )
    for name in (".chainlit/translations", "public", "chainlit.md"):
        os.symlink(ROOT / name, root / name)
    add_accounts(home, {"BRAINCHAT_AUTH": "password"})
    return home


def env_of(home: Path, **extra: str) -> dict[str, str]:
    return {"BRAINCHAT_AUTH": "password", "CHAINLIT_APP_ROOT": str(home / "approot"), **extra}


@pytest.fixture(scope="module")
def locked(app_factory: Any, home: Path) -> str:
    """The lab's app as shipped: accounts, no internal server allowed."""
    return str(app_factory(env_of(home), home=home))


@pytest.fixture(scope="module")
def allowed(app_factory: Any, home: Path, locked: str) -> str:
    """The same lab with the operator's allowance for 127.0.0.1 (BRAINCHAT_CONNECTION_ALLOW), a
    second app process on the same folders and database."""
    return str(app_factory(env_of(home, BRAINCHAT_CONNECTION_ALLOW="127.0.0.1"), home=home))


async def session(app: str, name: str) -> ChainlitSocket:
    cookie = await password_login(app, name, PASSWORDS[name])
    assert cookie, f"{name} could not log in"
    client = ChainlitSocket()
    client.cookie = cookie  # type: ignore[attr-defined]
    await client.connect(app, origin=None, cookie=cookie)
    await client.start_chat()
    return client


async def said_after(
    client: ChainlitSocket, before: int, *needles: str, timeout: float = 30
) -> str:
    """The text of the events after `before`, once one of them holds one of `needles`."""
    async with asyncio.timeout(timeout):
        while True:
            text = "\n".join(f"{event} {data}" for event, data in client.events[before:])
            if any(n in text for n in needles):
                return text
            await asyncio.sleep(0.05)


async def turn_over(client: ChainlitSocket, before: int, timeout: float = 60) -> str:
    """The text of the events after `before`, once a run ended after it and none runs now (the
    last task event is a `task_end`). Each step waits so for its own turn: a `task_end` alone may
    be an earlier turn's, arriving late on a loaded machine (the /connect turn's once came after
    "Connected", was taken for the save's, and the save's for the question's answer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        names = [event for event, _ in client.events]
        tasks = [n for n in names if n in ("task_start", "task_end")]
        if "task_end" in names[before:] and tasks[-1] == "task_end":
            return "\n".join(f"{event} {data}" for event, data in client.events[before:])
        assert loop.time() < deadline, f"no turn ended within {timeout:g} s: {names}"
        await asyncio.sleep(0.05)


async def connect(client: ChainlitSocket, name: str, url: str, key: str = "") -> str:
    """Submit the "Add a model connection" form; the app's answer, once its turn has ended."""
    before = len(client.events)
    await client.add_connection(name, url, key)
    said = await said_after(client, before, "Connection not added", "Connected `")
    if "Connection not added" in said:  # the form is offered again: left unanswered, it closes
        await said_after(client, before, "closed after no answer")
    return await turn_over(client, before)


async def pick_and_ask(client: ChainlitSocket, label: str, text: str) -> str:
    """Pick `label` as the chat model, then ask; what the turn said."""
    before = len(client.events)
    await client.sio.emit("chat_settings_change", {"chat_model": label})
    await turn_over(client, before)  # the save's answer
    before = len(client.events)
    await client.send(text)
    return await turn_over(client, before)


SPELLINGS = [  # 127.0.0.1 as a URL may spell it (before the fix each reached it, or crashed the save)
    "127.0.0.1", "0x7f000001", "2130706433", "127.1", "0177.0.0.1", "localhost", "0.0.0.0",
    "[::ffff:127.0.0.1]",
]  # fmt: skip


async def test_an_account_cannot_read_an_internal_service_under_any_spelling(locked, internal):
    port, seen = internal
    seen.clear()
    bob = await session(locked, "bob")
    answers = []
    for host in SPELLINGS:
        answer = await connect(bob, "intra", f"http://{host}:{port}/internal/v1")
        answers.append(answer)
        assert INTERNAL_ID not in answer, f"{host}: the internal JSON reached the user"
        assert "Connection not added" in answer, host
    said = await pick_and_ask(bob, f"{INTERNAL_ID} @ intra", "the lab's secret plan")
    await bob.close()
    assert INTERNAL_ID not in said
    assert seen == [], f"the server requested the internal address: {seen}"


async def test_the_refusal_does_not_tell_an_open_port_from_a_closed_one(locked, internal):
    port, seen = internal
    bob = await session(locked, "bob")
    open_ = await connect(bob, "probe", f"http://127.0.0.1:{port}/v1")
    closed = await connect(bob, "probe", f"http://127.0.0.1:{free_port()}/v1")
    await bob.close()

    def reason(text: str) -> str:
        found = re.search(r"Connection not added:\*\* (.*?)\\n", text)
        assert found, text
        return re.sub(r":\d+", ":PORT", found.group(1))

    assert reason(open_) == reason(closed)
    assert "not a public" in reason(open_) and "BRAINCHAT_CONNECTION_ALLOW" in reason(open_)


async def test_an_account_cannot_connect_an_internal_mcp_server(locked, lab_mcp):
    bob = await session(locked, "bob")
    async with httpx.AsyncClient(base_url=locked, headers={"Cookie": bob.cookie}) as http:  # type: ignore[attr-defined]
        r = await http.post("/mcp", json={"sessionId": bob.session_id, "name": "lab",
                                          "clientType": "streamable-http", "url": lab_mcp},
                            timeout=60)  # fmt: skip
    await bob.close()
    assert r.status_code == 400, r.text
    assert "not a public" in r.json()["detail"]


async def test_an_internal_mcp_server_the_operator_allows_connects(allowed, lab_mcp):
    """BRAINCHAT_CONNECTION_ALLOW opens an internal MCP server too, through the guarded client."""
    bob = await session(allowed, "bob")
    async with httpx.AsyncClient(base_url=allowed, headers={"Cookie": bob.cookie}) as http:  # type: ignore[attr-defined]
        r = await http.post("/mcp", json={"sessionId": bob.session_id, "name": "lab",
                                          "clientType": "streamable-http", "url": lab_mcp},
                            timeout=60)  # fmt: skip
    await bob.close()
    assert r.status_code == 200, r.text
    assert {"name": "echo"} in r.json()["mcp"]["tools"]


async def test_no_redirect_is_followed_or_shown_and_only_model_ids_are_listed(internal, allowed):
    """With the operator's allowance for 127.0.0.1 (the documented way to open an internal
    model server), a probe still follows no redirect, names no redirect target, and lists only
    ids that look like model ids."""
    port, seen = internal
    seen.clear()
    bob = await session(allowed, "bob")
    moved = await connect(bob, "hop", f"http://127.0.0.1:{port}/hop/v1")
    odd = await connect(bob, "odd", f"http://127.0.0.1:{port}/odd/v1")
    await bob.close()
    assert "Connection not added" in moved and "redirect" in moved
    assert "private-admin-console" not in moved
    assert [p for _, p, _ in seen] == ["/hop/v1/models", "/odd/v1/models"]  # nothing followed
    assert "Connected `odd`" in odd and "llama-3.2-1b" in odd
    for bad in ("img src", "onerror", "`code`", "a=b", "{x}"):
        assert bad not in odd, bad


async def test_a_model_call_is_refused_once_its_address_is_no_longer_allowed(
    model_server, allowed, locked
):
    """Connect time is not enough: ana's connection was allowed when she added it; an app without
    the allowance (the operator took it back: `locked` runs on the same folders and database)
    never lets her picked model's requests leave the server."""
    model_server.reset()
    model_server.models = ["lab-m"]
    model_server.queue("lab-m", Text("Hello from the lab server."))
    ana = await session(allowed, "ana")
    assert "Connected `lab`" in await connect(ana, "lab", model_server.base_url)
    said = await pick_and_ask(ana, "lab-m @ lab", "first question")
    assert "Hello from the lab server." in said
    await ana.close()
    model_server.clear()

    ana = await session(locked, "ana")  # the operator removed the allowance
    said = await pick_and_ask(ana, "lab-m @ lab", "the lab's secret plan")
    await ana.close()
    assert model_server.requests == [], "the conversation was sent to the internal address"
    assert "not a public" in said
