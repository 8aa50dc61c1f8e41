"""Past one machine: two app processes on one (embedded) Postgres, with shared data and state
folders, as behind a sticky load balancer. A thread started on one resumes on the other, with
its model history and its EEG study; a login cookie from one is good on the other.
The test talks to each process directly."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

import httpx
import pytest
from sio_client import ChainlitSocket, local_login

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.store.history import TURN_MARK
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import spec

FILE = "sub-01_ses-01_task-mi_eeg.edf"
ACC = re.compile(r"csp_lda on \d+ test epochs: accuracy (\d\.\d{3}), balanced (\d\.\d{3})")


@pytest.fixture(scope="module")
def apps(model_server, app_factory, embedded_pg, tmp_path_factory) -> tuple[str, str]:
    home = tmp_path_factory.mktemp("shared")
    write_demo_set(home / "data", subjects=1, sessions=1, trials=24, seed=4)
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "DATABASE_URL": embedded_pg.new_database("two_" + uuid.uuid4().hex[:8])}  # fmt: skip
    return app_factory(env, home=home), app_factory(env, home=home)


def said(request: Any) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.messages)


def accuracy(server: Any) -> tuple[str, ...]:
    """The last evaluation's figures, as the tool result the model was sent."""
    found = [m.groups() for r in server.requests_for("fc-m") for m in ACC.finditer(said(r))]
    assert found, "no evaluate_model result reached the model"
    return found[-1]


async def stored_answer(url: str, cookie: str, tid: str, answer: str) -> None:
    """Wait until the thread, read through `url`, holds `answer` marked as a turn (its last write)."""
    async with httpx.AsyncClient(base_url=url, headers={"Cookie": cookie}) as http:
        async with asyncio.timeout(30):
            while True:
                r = await http.get(f"/project/thread/{tid}")
                steps = r.json().get("steps") or [] if r.status_code == 200 else []
                if any(str(s.get("output")).startswith(answer) and TURN_MARK in (s.get("metadata") or {})
                       for s in steps):  # fmt: skip
                    return
                await asyncio.sleep(0.1)


async def test_a_thread_started_on_one_process_resumes_on_the_other(model_server, apps):
    a, b = apps
    cookie = await local_login(a)
    model_server.queue("fc-m", ToolCalls([
        Call("load_data", {"files": [FILE]}), Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        Call("split_dataset", {"by": "trial", "test_ratio": 0.25}),
        Call("train_model", {"model": "csp_lda"}), Call("evaluate_model", {"model": "csp_lda"}),
    ]), Text("The tools ran."), Text("Trained on process A."))  # fmt: skip
    on_a = ChainlitSocket()
    await on_a.connect(a, origin=None, cookie=cookie)
    await on_a.start_chat()
    await on_a.send("Train CSP+LDA on subject 1")
    await on_a.wait_for("Trained on process A.", timeout=120)
    before = accuracy(model_server)
    tid = await on_a.wait_thread_id()
    await stored_answer(b, cookie, tid, "Trained on process A.")  # A's writes, seen through B
    await on_a.close()

    async with httpx.AsyncClient(base_url=b, headers={"Cookie": cookie}) as http:
        listed = (
            await http.post("/project/threads", json={"pagination": {"first": 20}, "filter": {}})
        ).json()
    assert [t["id"] for t in listed["data"]] == [tid]  # A's cookie is good on B (shared secret)

    on_b = ChainlitSocket()
    await on_b.connect(b, origin=None, cookie=cookie, thread_id=tid)
    await on_b.sio.emit("connection_successful")
    await on_b.wait_for("Conversation resumed")
    assert "Trained on process A." in on_b.text()  # the stored steps came back from Postgres
    assert "Usage so far: 1 turn(s)" in on_b.text()  # the usage totals kept by A
    model_server.queue("fc-m", ToolCalls([Call("evaluate_model", {"model": "csp_lda"})]),
                       Text("The tool ran."), Text("Evaluated on process B."))  # fmt: skip
    await on_b.send("Evaluate it again")
    await on_b.wait_for("Evaluated on process B.", timeout=120)
    await on_b.wait_for("Study restored")
    assert accuracy(model_server) == before  # B replayed the study and reloaded A's model
    # the follow-up's first model call carries the earlier turn, restored from Postgres
    decide = next(
        said(r) for r in model_server.requests_for("fc-m") if "Evaluate it again" in said(r)
    )
    assert "Train CSP+LDA on subject 1" in decide and "Trained on process A." in decide
    await on_b.close()


def test_the_shared_auth_secret_is_private_and_never_logged(apps, app_factory):
    home = app_factory.home[apps[0]]
    secret = home / "state" / "auth_secret"
    assert secret.stat().st_mode & 0o077 == 0 and len(secret.read_text().strip()) >= 32
    assert secret.read_text().strip() not in (home / "app.log").read_text(errors="replace")
