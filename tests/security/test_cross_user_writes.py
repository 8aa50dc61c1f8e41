"""One user cannot write into, move or delete another user's elements and steps.

Before: `PUT /project/element` with ana's thread id put an element into her thread (and wrote a
file under her id), `DELETE /project/element` with her plot's id deleted her plot, and a message
sent with the id of one of her steps moved that step into the sender's thread (a tool step's
input and parent came with it). Chainlit trusts the ids a client sends and its element routes
check only that the session is the caller's; the data layer checks the thread's owner.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from e2e import conftest as e2e
from e2e.conftest import spec
from e2e.sio_client import ChainlitSocket

from lab import add_accounts, app_log, cookie_of, login

app_factory = e2e.app_factory
model_server = e2e.model_server
FILE = "sub-01_ses-01_task-mi_eeg.edf"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("lab")
    write_demo_set(home / "data" / "users" / "ana", subjects=1, sessions=1, trials=24, seed=2)
    return home


@pytest.fixture(scope="module")
def app(model_server, app_factory, home):
    add_accounts(home, "ana", "bob")
    # the answer turns (one model plays both roles); the tests are about the writes, not the answer
    model_server.set_default("fc-m", Text("That is all."))
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password"}  # fmt: skip
    return app_factory(env, home=home)


async def get_thread(app: str, cookie: str, thread_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": cookie}, timeout=30) as http:
        r = await http.get(f"/project/thread/{thread_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.fixture(scope="module")
def anas(app, model_server) -> dict[str, Any]:
    """Ana's thread: a question, a tool step with input, a plot, an answer."""
    model_server.queue("fc-m", ToolCalls([Call("load_data", {"files": [FILE]})]),
                       ToolCalls([Call("plot_psd", {"fmin": 2, "fmax": 40})]),
                       Text("Loaded and plotted."))  # fmt: skip

    async def run() -> dict[str, Any]:
        cookie = cookie_of(await login(app, "ana"))
        client = ChainlitSocket()
        await client.connect(app, origin=None, cookie=cookie)
        await client.start_chat()
        await client.send("load and plot")
        await client.wait_for("Loaded and plotted.", timeout=120)
        tid = await client.wait_thread_id()
        await client.close()
        async with asyncio.timeout(30):  # the plot's row and file are written by background tasks
            while not images(thread := await get_thread(app, cookie, tid)):
                await asyncio.sleep(0.1)
        steps = {s["type"]: s for s in thread["steps"]}
        tool = next(s for s in thread["steps"] if s["type"] == "tool" and s.get("input"))
        return {"id": tid, "cookie": cookie, "plot": images(thread)[0], "tool": tool,
                "question": steps["user_message"], "answer": steps["assistant_message"]}  # fmt: skip

    return asyncio.run(run())


async def bobs_chat(app: str, model_server: Any) -> tuple[ChainlitSocket, str]:
    """Bob, logged in, with a conversation of his own (Chainlit writes after a first message)."""
    cookie = cookie_of(await login(app, "bob"))
    model_server.queue("fc-m", Text("Hello Bob."))
    client = ChainlitSocket()
    await client.connect(app, origin=None, cookie=cookie)
    await client.start_chat()
    await client.send("hi")
    await client.wait_for("Hello Bob.", timeout=60)
    await client.wait_thread_id()
    return client, cookie


def images(thread: dict) -> list[dict]:
    """The thread's figures shown inline (not their download files)."""
    return [e for e in thread["elements"] if e.get("type") == "image"]


async def until_logged_or(home: Path, needle: str, done: Any) -> None:
    """Wait until the app logs a line naming `needle` or the write shows (`done()` is true)."""
    async with asyncio.timeout(30):
        while needle not in app_log(home) and not await done():
            await asyncio.sleep(0.1)


@pytest.mark.attack
async def test_an_element_cannot_be_put_into_or_taken_from_anothers_thread(
    app, home, model_server, anas
):
    client, bob = await bobs_chat(app, model_server)
    injected = str(uuid.uuid4())
    plot = anas["plot"]
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": bob}, timeout=30) as http:
        element = {"type": "custom", "id": injected, "threadId": anas["id"],
                   "forId": anas["answer"]["id"], "name": "injected", "props": {"x": 1},
                   "display": "inline"}  # fmt: skip
        await http.put(
            "/project/element", json={"sessionId": client.session_id, "element": element}
        )

        async def landed() -> bool:
            thread = await get_thread(app, anas["cookie"], anas["id"])
            return any(e["id"] == injected for e in thread["elements"])

        await until_logged_or(home, injected, landed)
        # her plot's id with his thread: the row (and her file's key) would move to him
        moved = {**element, "id": plot["id"], "threadId": client.thread_id, "name": "moved"}
        await http.put("/project/element", json={"sessionId": client.session_id, "element": moved})

        async def gone() -> bool:
            thread = await get_thread(app, anas["cookie"], anas["id"])
            return not any(e["id"] == plot["id"] for e in thread["elements"])

        await until_logged_or(home, plot["id"], gone)
        removed = {"type": "custom", "id": plot["id"], "threadId": anas["id"], "name": "x",
                   "display": "inline"}  # fmt: skip
        await http.request("DELETE", "/project/element",
                           json={"sessionId": client.session_id, "element": removed})  # fmt: skip
    await client.close()
    thread = await get_thread(app, anas["cookie"], anas["id"])
    assert injected not in [e["id"] for e in thread["elements"]]
    # her figure (the image; its PNG and SVG downloads are elements of their own) stays hers
    assert [e["id"] for e in images(thread)] == [plot["id"]]
    assert images(thread)[0]["name"] == plot["name"]
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": anas["cookie"]}) as http:
        r = await http.get(plot["url"])
    assert r.status_code == 200 and r.content.startswith(b"\x89PNG")
    files = home / "state" / "files"
    assert not [p for p in files.rglob("*") if injected in str(p)], "a file was written for her"


@pytest.mark.attack
async def test_a_message_with_anothers_step_id_does_not_move_the_step(
    app, home, model_server, anas
):
    client, bob = await bobs_chat(app, model_server)
    stolen = [anas["question"], anas["answer"], anas["tool"]]
    for step in stolen:
        model_server.queue("fc-m", Text(f"Answer for {step['id'][:8]}."))
        await client.send("mine now", message_id=step["id"])
        await client.wait_for(f"Answer for {step['id'][:8]}.", timeout=60)

        async def moved(step_id: str = step["id"]) -> bool:
            thread = await get_thread(app, bob, client.thread_id or "")
            return any(s["id"] == step_id for s in thread["steps"])

        await until_logged_or(home, step["id"], moved)
    await client.close()
    bobs = await get_thread(app, bob, client.thread_id or "")
    assert not {s["id"] for s in bobs["steps"]} & {s["id"] for s in stolen}
    assert anas["tool"]["input"] not in str(bobs)
    hers = {s["id"]: s for s in (await get_thread(app, anas["cookie"], anas["id"]))["steps"]}
    for step in stolen:
        assert hers[step["id"]]["output"] == step["output"]
