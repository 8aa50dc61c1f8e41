"""A second tab takes a running turn over (#37), in a real browser: the conversation opened in
another tab while a cross-validation computes shows the run going on, streams its answer, and
the tab it left is told where the turn went and stops showing it as running (before, that tab
kept its Stop button and a step that never moved again)."""

from __future__ import annotations

import pytest
from test_reload_ui import THREAD, long_run
from test_reload_ui import app as app  # the reload tests' app, shared by fixture name

from brainchat.testing.scripted_server import Text
from conftest import send, wait_idle

pytestmark = pytest.mark.browser


def test_a_second_tab_takes_the_run_over_and_the_first_is_told(model_server, app, browser):
    model_server.queue("fc-m", long_run(20), Text("The tools ran."),
                       Text("Separable, as the second tab shows."))  # fmt: skip
    tabs = browser.new_context(viewport={"width": 1280, "height": 900})  # one browser's cookies
    first = tabs.new_page()
    first.goto(app)
    first.wait_for_selector("text=/brainchat is (ready|not ready)/")
    send(first, "cross-validate my two sessions with permutations")
    first.wait_for_url(THREAD, timeout=60_000)
    first.wait_for_selector("[id^='step-cross_validate']", state="attached", timeout=180_000)
    second = tabs.new_page()
    second.goto(first.url)
    second.wait_for_selector("#chat-input")
    second.wait_for_selector("#stop-button", timeout=30_000)  # the run goes on, here
    first.wait_for_selector("text=/continues in another tab or window/", timeout=30_000)
    first.wait_for_selector("#stop-button", state="detached", timeout=30_000)
    second.wait_for_selector("text=Separable, as the second tab shows.", timeout=240_000)
    wait_idle(second)
    assert "Separable, as the second tab shows." not in first.inner_text("body")
    tabs.close()
