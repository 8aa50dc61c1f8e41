"""Thread titles: the first question by default (no model call for it), or a short title written
by the chat model when BRAINCHAT_THREAD_TITLES=model. Over the app's HTTP API and socket."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from typing import Any

import httpx
import pytest
from sio_client import ChainlitSocket, local_login

from brainchat.testing.scripted_server import Text
from brainchat.ui.datalayer import short_title
from conftest import open_chat, send, spec, wait_idle

QUESTION = "What is the mu rhythm and where is it recorded over the scalp?"


def titled(name: str | None) -> bool:
    """The question's title: its threads in this module ask the same, so after the first one
    each gets " (k)" (titles are unique per user, tests/e2e/test_titles_ui.py)."""
    return (
        name is not None
        and re.fullmatch(re.escape(short_title(QUESTION)) + r"( \(\d+\))?", name) is not None
    )


@pytest.fixture(scope="module")
def app(model_server, app_factory) -> str:
    """One app for the module (each test looks at its own thread): Chat, and Agent's models."""
    return str(app_factory({"CHAT_MODEL": spec(model_server, "chat-m"),
                            "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                            "AGENT_ANSWER_MODEL": spec(model_server, "ans-m")}))  # fmt: skip


async def title_of(url: str, cookie: str, tid: str) -> str | None:
    """The stored name of thread `tid` (None while it is not stored or has no name)."""
    async with httpx.AsyncClient(base_url=url, headers={"Cookie": cookie}) as http:
        r = await http.get(f"/project/thread/{tid}")
    return r.json().get("name") if r.status_code == 200 else None


async def one_turn(url: str, answer: str) -> tuple[str, str]:
    """One question and its answer in a new thread: (cookie, thread id)."""
    cookie = await local_login(url)
    sock = ChainlitSocket()
    await sock.connect(url, origin=None, cookie=cookie)
    await sock.start_chat()
    await sock.send(QUESTION)
    await sock.wait_for(answer, timeout=60)
    tid = await sock.wait_thread_id()
    await sock.close()
    return cookie, tid


async def test_a_button_pressed_first_does_not_title_the_thread(model_server, app):
    """Chainlit names a thread after its first interaction: a button's name ("show_tools") or
    files sent without text would become the title; the first question does instead."""
    url = app
    model_server.queue("chat-m", Text("Mu is 8-13 Hz over the motor cortex."))
    cookie = await local_login(url)
    sock = ChainlitSocket()
    await sock.connect(url, origin=None, cookie=cookie)
    await sock.start_chat()
    action = {"name": "show_tools", "payload": {}, "id": str(uuid.uuid4())}
    async with httpx.AsyncClient(base_url=url, headers={"Cookie": cookie}) as http:
        r = await http.post(
            "/project/action", json={"sessionId": sock.session_id, "action": action}
        )
    assert r.status_code == 200, r.text
    await sock.wait_for("web_search")  # the tool list it shows
    await sock.send(QUESTION)
    await sock.wait_for("Mu is 8-13 Hz over the motor cortex.", timeout=60)
    tid = await sock.wait_thread_id()
    await sock.close()
    async with asyncio.timeout(30):
        while not titled(name := await title_of(url, cookie, tid)):
            assert name is None, name  # never "show_tools"
            await asyncio.sleep(0.1)


def title_requests(server: Any) -> list[Any]:
    return [r for r in server.requests_for("chat-m") if "Write a title" in str(r.messages[0])]


async def test_a_thread_is_titled_by_its_first_question_without_a_model_call(model_server, app):
    model_server.queue("chat-m", Text("Mu is 8-13 Hz over the motor cortex."))
    cookie, tid = await one_turn(app, "Mu is 8-13 Hz over the motor cortex.")
    assert titled(await title_of(app, cookie, tid))  # one line, cut at a word
    assert len(model_server.requests_for("chat-m")) == 1 and not title_requests(model_server)


async def test_the_chat_model_writes_the_title_when_configured(model_server, app_factory):
    env = {"CHAT_MODEL": spec(model_server, "chat-m"), "BRAINCHAT_THREAD_TITLES": "model"}
    url = app_factory(env)
    model_server.queue("chat-m", Text("Mu is 8-13 Hz over the motor cortex."), Text('"Mu rhythm"'))
    cookie, tid = await one_turn(url, "Mu is 8-13 Hz over the motor cortex.")
    # the title is written in the background, after the answer (a loaded full run took > 30 s)
    async with asyncio.timeout(120):
        while await title_of(url, cookie, tid) != "Mu rhythm":
            await asyncio.sleep(0.1)
    (request,) = title_requests(model_server)
    assert QUESTION in str(request.messages[-1])


async def test_a_mode_switch_riding_on_a_message_is_saved_with_the_thread(model_server, app):
    """The Mode picker's value comes with the message: the turn starts without a database
    write of its own, and the turn's save keeps the new mode, so a resumed thread is in Agent."""
    url = app
    model_server.queue("fc-m", Text("No tools needed."))
    model_server.queue("ans-m", Text("An agent answer."))
    cookie = await local_login(url)
    sock = ChainlitSocket()
    await sock.connect(url, origin=None, cookie=cookie)
    await sock.start_chat()
    await sock.send(QUESTION, modes={"mode": "agent"})
    await sock.wait_for("An agent answer.", timeout=60)
    tid = await sock.wait_thread_id()
    await sock.close()
    assert tid and not model_server.requests_for("chat-m")  # the turn ran in Agent mode
    async with httpx.AsyncClient(base_url=url, headers={"Cookie": cookie}) as http:
        async with asyncio.timeout(30):  # the turn's save runs as the turn ends
            while True:
                thread = (await http.get(f"/project/thread/{tid}")).json()
                meta = thread.get("metadata") or {}
                meta = json.loads(meta) if isinstance(meta, str) else meta
                if (meta.get("brainchat_state") or {}).get("mode") == "agent":
                    break
                await asyncio.sleep(0.1)


def typed_command(page: Any, how: str) -> None:
    """`/tools` as a person types it: sent as text, or picked from the command menu (a chip)."""
    page.fill("#chat-input", "/tools")
    if how == "text":
        page.click("#chat-submit")
    else:
        page.keyboard.press("Enter")  # picks the command from the menu: the input becomes a chip
        page.wait_for_selector("#command-button, .command-buttons-container")
        page.keyboard.press("Enter")


@pytest.mark.browser
@pytest.mark.parametrize("how", ["text", "menu"])
def test_a_slash_command_never_titles_the_thread(model_server, app, browser, how):
    """A thread begun with `/tools` was titled "/tools"; its first real question titles it."""
    url = app
    page = open_chat(browser, url)
    before = page.request.post(f"{url}/project/threads",
                               data={"pagination": {"first": 100}, "filter": {}}).json()["data"]  # fmt: skip
    model_server.queue("chat-m", Text("Mu is 8-13 Hz over the motor cortex."))
    typed_command(page, how)
    page.wait_for_selector("text=Agent tools")
    wait_idle(page)
    send(page, QUESTION)
    page.wait_for_selector("text=Mu is 8-13 Hz over the motor cortex.")
    wait_idle(page)
    names: list[str] = []
    old = {t["id"] for t in before}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the title is written as the turn's steps are saved
        r = page.request.post(f"{url}/project/threads",
                              data={"pagination": {"first": 100}, "filter": {}})  # fmt: skip
        names = [t["name"] for t in r.json()["data"] if t["id"] not in old]  # this test's thread
        assert not [n for n in names if n and n.startswith("/")], names
        if len(names) == 1 and titled(names[0]):
            break
        page.wait_for_timeout(100)
    assert len(names) == 1 and titled(names[0]), names
    page.close()
