"""The conversation's first interaction moves the page from / to /thread/<id> once Chainlit has
loaded the thread list, and that move builds the page anew. On a busy server the list takes
seconds (CI saw a half-filled "Connect an MCP" form vanish and a keyboard user's Enter go nowhere),
so the tests hold the list's request and let it go at the worst moment."""

from __future__ import annotations

import re

import pytest
from test_mcp_connect_ui import DIALOG, PLUG

from conftest import open_chat, pick_mode, spec

pytestmark = pytest.mark.browser

TRIGGER = "#mode-picker-trigger-mode"
THREADS = "**/project/threads"
THREAD_PAGE = re.compile(r"/thread/[^/]+/?$")


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({
        "CHAT_MODEL": spec(model_server, "chat-f"),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-f"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-f"),
    })  # fmt: skip


def hold_thread_list(page) -> list:
    """The thread list's requests wait in the returned list until `let_go`."""
    held: list = []
    page.route(THREADS, lambda route: held.append(route))
    return held


def let_go(page, held: list) -> None:
    assert held, "the first interaction asked for the thread list"
    with page.expect_event("requestfinished", lambda r: "/project/threads" in r.url):
        for route in held:
            route.continue_()
    page.unroute(THREADS)


def test_a_form_being_filled_when_the_list_comes_stays_open_and_the_page_moves_after(app, browser):
    page = open_chat(browser, app)
    held = hold_thread_list(page)
    pick_mode(page, "Agent", moved=False)  # the first interaction: the list is held
    assert page.evaluate("window.__bcMoveTo")  # the harness saw it (conftest.settle waits on it)
    page.click(PLUG)
    dialog = page.locator(DIALOG)
    dialog.get_by_role("tab", name="Connect an MCP").click()
    page.fill("#server-name", "eeg-notes")
    page.fill("#server-url", "http://127.0.0.1:9/mcp")
    let_go(page, held)  # the list has come while the user fills the form
    page.wait_for_timeout(1500)  # room for the move, were it to happen now
    assert page.locator(DIALOG).count() == 1, "the form was closed under the user"
    assert page.input_value("#server-name") == "eeg-notes"
    assert page.input_value("#server-url") == "http://127.0.0.1:9/mcp"
    assert not THREAD_PAGE.search(page.url)
    page.keyboard.press("Escape")  # the user is done with the dialog: now the page moves
    page.wait_for_selector(DIALOG, state="detached")
    page.wait_for_url(THREAD_PAGE)
    thread = page.url.split("/thread/")[1].strip("/")
    page.locator(f"a[href$='/thread/{thread}']").first.wait_for()  # and the list shows it
    page.close()


def test_a_keyboard_user_keeps_the_focus_through_the_move(app, browser):
    page = open_chat(browser, app)
    held = hold_thread_list(page)
    pick_mode(page, "Agent", answer="Stay in Chat")  # answering is the first interaction
    page.wait_for_selector("text=Stayed in Chat mode")
    page.focus(TRIGGER)
    old = page.locator(TRIGGER).element_handle()
    let_go(page, held)
    page.wait_for_url(THREAD_PAGE)
    page.wait_for_function("el => !el.isConnected", arg=old)  # a new picker was built
    page.wait_for_function(f"() => document.activeElement?.id === '{TRIGGER[1:]}'")
    page.keyboard.press("Enter")  # the picker opens, as it would have without the move
    page.wait_for_selector("#mode-picker-popover-mode")
    page.keyboard.press("Escape")
    page.close()
