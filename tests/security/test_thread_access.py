"""Each user sees only their own threads, files and data folder, over the HTTP API and the socket.

The real app under `chainlit run` with password login and two accounts; ana's agent loads EEG
data from her folder, trains a model and plots (a stored image element); bob, logged in, tries
every route to her thread directly. Then ana deletes the thread: its steps, elements, files and
saved models go.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import socketio

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from e2e import conftest as e2e
from e2e.conftest import ROOT, spec
from e2e.sio_client import ChainlitSocket, password_login

app_factory = e2e.app_factory
model_server = e2e.model_server
FILE = "sub-01_ses-01_task-mi_eeg.edf"
PASSWORDS = {"ana": "ana's long password", "bob": "bob's long password"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    write_demo_set(home / "data" / "users" / "ana", subjects=1, sessions=1, trials=24, seed=2)
    return home


@pytest.fixture(scope="module")
def app(model_server, app_factory, home):
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password"}  # fmt: skip
    import os

    for name, password in PASSWORDS.items():
        subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", name],
                       input=password + "\n", text=True, cwd=ROOT, check=True, timeout=60,
                       env={**os.environ, "BRAINCHAT_DATA_DIR": str(home / "data"), **env})  # fmt: skip
    return app_factory(env, home=home)


async def login(app: str, name: str) -> str:
    cookie = await password_login(app, name, PASSWORDS[name])
    assert cookie, f"{name} could not log in"
    return cookie


async def chat(app: str, cookie: str, text: str, wait: str, thread_id: str = "") -> ChainlitSocket:
    client = ChainlitSocket()
    await client.connect(app, origin=None, cookie=cookie, thread_id=thread_id)
    await client.start_chat()
    await client.send(text)
    await client.wait_for(wait, timeout=120)
    return client


async def stored_thread(http: httpx.AsyncClient, thread_id: str) -> dict[str, Any]:
    """The thread once background tasks have stored its plot (row and file) and the answer."""
    deadline = time.monotonic() + 60
    while True:
        thread = (await http.get(f"/project/thread/{thread_id}")).json()
        elements = thread.get("elements") or []
        answered = any(s["type"] == "assistant_message" for s in thread.get("steps") or [])
        if answered and elements and (await http.get(elements[0]["url"])).status_code == 200:
            return dict(thread)
        assert time.monotonic() < deadline, f"the thread was not stored within 60 s: {thread}"
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
def anas_thread(app, model_server) -> dict[str, Any]:
    """Ana's thread with a trained model and a stored plot; returns ids, cookie and element."""
    model_server.queue("fc-m", ToolCalls([
        Call("load_data", {"files": [FILE]}), Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        Call("split_dataset", {"by": "trial", "test_ratio": 0.25}),
        Call("train_model", {"model": "csp_lda"}), Call("plot_psd", {"fmin": 2, "fmax": 40}),
    ]), Text("Loaded, trained and plotted."),
       Text("Ana's model is trained; the plot is below."))  # the same model answers  # fmt: skip

    async def run() -> dict[str, Any]:
        cookie = await login(app, "ana")
        client = await chat(app, cookie, "train and plot", "the plot is below.")
        async with httpx.AsyncClient(base_url=app, headers={"Cookie": cookie}) as http:
            thread = await stored_thread(http, client.thread_id)
        await client.close()
        # the figure shown inline (its PNG and SVG downloads are elements of their own)
        (element,) = [e for e in thread["elements"] if e.get("type") == "image"]
        step = next(s for s in thread["steps"] if s["type"] == "assistant_message")
        return {"id": client.thread_id, "cookie": cookie, "element": element, "step": step["id"]}

    return asyncio.run(run())


async def test_the_owner_gets_her_thread_and_its_plot(app, anas_thread):
    element = anas_thread["element"]
    assert element["url"].startswith("/brainchat/files/") and element["mime"] == "image/png"
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": anas_thread["cookie"]}) as http:
        r = await http.get(element["url"])
        assert r.status_code == 200 and r.content.startswith(b"\x89PNG")
        assert (
            r.headers["content-type"] == "image/png"
            and r.headers["x-content-type-options"] == "nosniff"
        )
        listed = (
            await http.post("/project/threads", json={"pagination": {"first": 20}, "filter": {}})
        ).json()
    assert [t["id"] for t in listed["data"]] == [anas_thread["id"]]


async def test_another_user_cannot_list_open_or_fetch_it(app, anas_thread):
    tid, element = anas_thread["id"], anas_thread["element"]
    bob = await login(app, "bob")
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": bob}) as http:
        listed = (
            await http.post("/project/threads", json={"pagination": {"first": 20}, "filter": {}})
        ).json()
        assert listed["data"] == []
        assert (await http.get(f"/project/thread/{tid}")).status_code in (401, 403, 404)
        r = await http.get(f"/project/thread/{tid}/element/{element['id']}")
        assert r.status_code in (401, 403, 404)
        assert (await http.get(element["url"])).status_code == 404  # not even whether it exists
        r = await http.put("/project/thread", json={"threadId": tid, "name": "mine now"})
        assert r.status_code in (401, 403, 404)
        r = await http.request("DELETE", "/project/thread", json={"threadId": tid})
        assert r.status_code in (401, 403, 404)
        r = await http.put("/feedback", json={"feedback": {"forId": anas_thread["step"], "value": 0},
                                              "sessionId": "x"})  # fmt: skip
        assert r.status_code == 404
    async with httpx.AsyncClient(base_url=app) as anonymous:
        assert (await anonymous.get(element["url"])).status_code == 401
        r = await anonymous.post(
            "/project/threads", json={"pagination": {"first": 20}, "filter": {}}
        )
        assert r.status_code == 401
    client = ChainlitSocket()
    with pytest.raises(socketio.exceptions.ConnectionError):
        await client.connect(app, origin=None, cookie=bob, thread_id=tid)  # resume someone else's
    await client.close()
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": anas_thread["cookie"]}) as http:
        thread = (await http.get(f"/project/thread/{tid}")).json()
    assert thread["name"] != "mine now" and all(s.get("feedback") is None for s in thread["steps"])


async def test_each_user_has_their_own_data_folder(app, model_server, home, anas_thread):
    model_server.queue("fc-m", ToolCalls([Call("load_data", {"files": [FILE]}),
                                          Call("load_data", {"files": [f"../ana/{FILE}"]})]),
                       Text("Could not load."), Text("Bob has no such file."))  # fmt: skip
    bob = await login(app, "bob")
    client = await chat(app, bob, "load ana's file", "Bob has no such file.")  # the answer
    await client.close()
    tool_results = [m["content"] for r in model_server.requests_for("fc-m") for m in r.messages
                    if m.get("role") == "tool"]  # fmt: skip
    text = json.dumps(tool_results)
    assert "not found in the data folder" in text and "outside the data folder" in text
    assert (home / "data" / "users" / "bob").is_dir()


async def test_feedback_on_ones_own_message_is_kept(app, anas_thread):
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": anas_thread["cookie"]}) as http:
        r = await http.put("/feedback", json={"feedback": {"forId": anas_thread["step"], "value": 1},
                                              "sessionId": "x"})  # fmt: skip
        assert r.status_code == 200, r.text
        thread = (await http.get(f"/project/thread/{anas_thread['id']}")).json()
    rated = [s for s in thread["steps"] if s.get("feedback")]
    assert [s["feedback"]["value"] for s in rated] == [1]


async def test_deleting_the_thread_deletes_its_steps_files_and_models(app, home, anas_thread):
    tid, key = anas_thread["id"], anas_thread["element"]["url"].removeprefix("/brainchat/files/")
    models = home / "data" / "users" / "ana" / "models" / tid
    assert (models / "csp_lda.pkl").is_file()
    files = home / "state" / "files"
    assert any(files.rglob("*")), "the plot was stored as a file"
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": anas_thread["cookie"]}) as http:
        r = await http.request("DELETE", "/project/thread", json={"threadId": tid})
        assert r.status_code == 200
        assert (await http.get(f"/project/thread/{tid}")).status_code in (401, 404)
        assert (await http.get(anas_thread["element"]["url"])).status_code == 404
    assert not models.exists()
    assert not any(p.is_file() for p in files.rglob("*")), key
    with sqlite3.connect(home / "state" / "brainchat.db") as db:
        counts = [db.execute(f'SELECT COUNT(*) FROM {t} WHERE "threadId" = ?', (tid,)).fetchone()[0]
                  for t in ("steps", "elements", "feedbacks")]  # fmt: skip
    assert counts == [0, 0, 0]
