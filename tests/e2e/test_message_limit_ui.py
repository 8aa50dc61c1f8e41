"""A message over the size limit gets a clear notice instead of a frozen tab or a silent drop."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from sio_client import ChainlitSocket

from brainchat.testing.scripted_server import Text
from brainchat.ui.message_limit import MAX_MESSAGE_CHARS
from conftest import ROOT, open_chat, send, spec, wait_idle

pytestmark = pytest.mark.browser
NOTICE = "#brainchat-limit-notice"


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({"CHAT_MODEL": spec(model_server, "chat-m")})


def _first_turn(model_server, page) -> None:
    model_server.queue("chat-m", Text("Delta is 0.5 to 4 Hz."))
    send(page, "What is the delta band?")
    page.wait_for_selector("text=Delta is 0.5 to 4 Hz.")
    wait_idle(page)


def _conversation_goes_on(model_server, page) -> None:
    body = page.inner_text("body")
    assert "What is the delta band?" in body and "Delta is 0.5 to 4 Hz." in body
    model_server.queue("chat-m", Text("Gamma is above 30 Hz."))
    send(page, "And gamma?")
    page.wait_for_selector("text=Gamma is above 30 Hz.")
    wait_idle(page)
    assert "What is the delta band?" in page.inner_text("body")


def test_pasting_1_1_mb_shows_the_limit_and_keeps_the_conversation(model_server, app, browser):
    page = open_chat(browser, app)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app)
    _first_turn(model_server, page)
    page.evaluate("navigator.clipboard.writeText('0123456789\\n'.repeat(100000))")  # 1.1 MB
    page.focus("#chat-input")
    page.keyboard.press("Control+V")  # a real, trusted paste
    notice = page.wait_for_selector(NOTICE, state="visible")
    text = notice.inner_text()
    assert "1.1 MB" in text and "1,100,000 characters" in text, text
    assert f"the limit is {MAX_MESSAGE_CHARS:,} characters" in text and "not added" in text
    assert page.input_value("#chat-input") == ""  # the paste never reached the box
    requests = len(model_server.requests_for("chat-m"))
    _conversation_goes_on(model_server, page)
    assert len(model_server.requests_for("chat-m")) == requests + 1
    assert not page.is_visible(NOTICE)  # a message sent within the limit clears it
    page.close()


def test_sending_an_over_limit_box_is_stopped_with_the_notice(model_server, app, browser):
    page = open_chat(browser, app)
    _first_turn(model_server, page)
    page.fill("#chat-input", "y" * 300_000)
    page.wait_for_selector(NOTICE, state="visible")
    page.click("#chat-submit")
    page.keyboard.press("Enter")
    text = page.inner_text(NOTICE)
    assert "300,000 characters" in text and "not sent" in text, text
    assert len(page.input_value("#chat-input")) == 300_000  # kept, to shorten it
    assert page.locator(".step").filter(has_text="yyyyyyyyyy").count() == 0
    page.fill("#chat-input", "")
    _conversation_goes_on(model_server, page)
    assert len(model_server.requests_for("chat-m")) == 2  # the long message never reached it
    page.close()


async def _send_over_limit(model_server, app: str) -> str:
    client = ChainlitSocket()
    await client.connect(app, origin=app)
    try:
        await client.start_chat()
        await client.send("z" * 300_000)
        await client.wait_for(f"the limit is {MAX_MESSAGE_CHARS:,} characters")
        model_server.queue("chat-m", Text("Alpha is 8 to 12 Hz."))
        await client.send("What is the alpha band?")
        await client.wait_for("Alpha is 8 to 12 Hz.")
        return client.text()
    finally:
        await client.close()


def test_the_server_refuses_an_over_limit_message_that_got_past_the_browser(model_server, app):
    # its own thread: the sync playwright of this module's browser tests holds this thread's loop
    with ThreadPoolExecutor(1) as pool:
        text = pool.submit(asyncio.run, _send_over_limit(model_server, app)).result(timeout=120)
    assert "300,000 characters" in text
    assert len(model_server.requests_for("chat-m")) == 1  # only the message within the limit


def test_the_browser_and_the_server_share_one_limit():
    script = (ROOT / "public" / "brainchat.js").read_text()
    (value,) = re.findall(r"const MAX_MESSAGE_CHARS = (\d+);", script)
    assert int(value) == MAX_MESSAGE_CHARS
    config = (ROOT / ".chainlit" / "config.toml").read_text()
    assert re.search(r'^custom_js = "/public/brainchat.js"$', config, re.M)
