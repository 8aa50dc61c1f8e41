"""Chat mode in a real browser: streaming, stats, faults, settings, no-config first screen."""

from __future__ import annotations

import re

import pytest

from brainchat.testing.scripted_server import Fault, Text
from conftest import (
    fill_setting,
    open_chat,
    open_settings,
    save_settings,
    send,
    show_setting,
    spec,
    step_titles,
    wait_idle,
)

pytestmark = pytest.mark.browser
USAGE_LINE = 'a[href$="#brainchat-usage"]'  # unfolds the stats table in place (ui/run_end.py)


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({
        "CHAT_MODEL": spec(model_server, "chat-m"),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
    })  # fmt: skip


def test_chat_answer_streams_and_shows_the_servers_figures(model_server, app, browser):
    words = "Mu rhythm desynchronises over the contralateral motor cortex during imagery."
    model_server.queue(
        "chat-m", Text(words, reasoning="Recall what ERD is.", token_delay=0.25, ttft=0.3)
    )
    page = open_chat(browser, app)
    send(page, "What happens to the mu rhythm during motor imagery?")
    page.wait_for_selector("text=Mu rhythm desynchronises")
    partial = page.locator(".step", has_text="Mu rhythm").last.inner_text()
    assert "imagery." not in partial  # still streaming: only part of the answer is there
    # the input is locked while the answer streams: the stop button replaces submit
    assert page.locator("#stop-button").is_visible()
    wait_idle(page)
    assert words in page.inner_text("body")
    usage = model_server.requests_for("chat-m")[-1].usage
    # under the answer one quiet line (model, tokens, time, cost) opens the stats table
    answer = page.locator(".step", has_text="Mu rhythm desynchronises").last
    assert not answer.locator("table").is_visible()  # folded under its line (no side panel)
    answer.locator(USAGE_LINE).click()
    head, row = page.locator("table", has_text="First token").inner_text().splitlines()[:2]
    assert head.split("\t") == ["Model", "In tokens", "Out tokens", "First token", "Time", "Cost"]
    cells = row.split("\t")
    assert cells[:3] == ["chat-m", str(usage["prompt_tokens"]), str(usage["completion_tokens"])]
    assert re.fullmatch(r"\d+ ms|[\d.]+ s", cells[3]) and cells[5] == "—"  # unknown price
    assert answer.locator("code").count() == 0
    # the model's reasoning is one step, titled like the agent's, with its time, no "Used"
    titles = step_titles(page)
    assert any(re.fullmatch(r"Thinking · chat-m · (\d+ ms|[\d.]+ s)", t) for t in titles), titles
    assert not [t for t in titles if t.startswith(("Used", "Using"))], titles
    page.close()


def test_estimated_tokens_are_marked(model_server, app, browser):
    model_server.send_usage = False
    try:
        model_server.queue("chat-m", Text("Alpha is 8 to 12 Hz."))
        page = open_chat(browser, app)
        send(page, "alpha band?")
        wait_idle(page)
        line = page.locator(USAGE_LINE).last.inner_text()
        assert re.match(r"chat-m · \d+ est\. in / \d+ est\. out tokens", line), line  # marked
        page.locator(USAGE_LINE).last.click()
        shown = page.locator("table", has_text="In tokens").last
        shown.wait_for(state="visible")  # unfolded in place: a folded table reads without tabs
        cells = [
            c.inner_text().strip() for c in shown.locator("tbody tr").first.locator("td").all()
        ]
        assert re.fullmatch(r"\d+ est\.", cells[1]) and re.fullmatch(r"\d+ est\.", cells[2]), cells
        assert cells[0] == "chat-m", cells  # counted here: marked
        page.close()
    finally:
        model_server.send_usage = True


def test_server_fault_shows_a_message_and_the_next_message_works(model_server, app, browser):
    model_server.queue("chat-m", Fault(500, message="upstream exploded"), Text("Back to normal."))
    page = open_chat(browser, app)
    send(page, "first question")
    page.wait_for_selector("text=Your conversation is kept")
    wait_idle(page)
    assert "Traceback" not in page.inner_text("body")
    # the failed call's stats sit under the error; no stray stats bubble of their own
    assert page.locator(USAGE_LINE).count() == 1
    error = page.locator(".step", has_text="Your conversation is kept").last
    error.locator(USAGE_LINE).click()
    table = page.locator("table", has_text="In tokens")
    assert table.count() == 1 and "First token" not in table.inner_text()
    send(page, "second question")
    page.wait_for_selector("text=Back to normal.")
    wait_idle(page)
    page.close()


def test_bad_settings_are_all_named_and_numbers_out_of_range_are_refused(
    model_server, app, browser
):
    page = open_chat(browser, app)
    open_settings(page)
    show_setting(page, "max_iterations")
    assert page.locator("#max_iterations").get_attribute("max") == "30"
    fill_setting(page, "max_iterations", "50")
    page.locator("#chat-settings #confirm").click()  # refused in the browser, before saving
    page.wait_for_selector("text=Max iterations must be a number from 1 to 30.")
    assert page.locator("#max_iterations").is_visible()  # the panel stays open
    assert page.locator("#max_iterations").get_attribute("aria-invalid") == "true"
    fill_setting(page, "max_iterations", "5")
    assert page.locator("text=must be a number from").count() == 0  # fixed: the note goes
    fill_setting(page, "answer_temperature", "hot")
    fill_setting(page, "chat_temperature", "5")
    fill_setting(page, "function_call_model_custom", "two words")
    save_settings(page)
    page.wait_for_selector("text=Settings not applied")
    notice = page.locator(".step", has_text="Settings not applied").last.inner_text()
    assert "3 values are not allowed" in notice  # every bad field at once, each named
    assert "answer temperature" in notice and "chat temperature" in notice
    assert "function_call model" in notice and "max iterations 10" in notice  # nothing applied
    model_server.queue("chat-m", Text("still chat-m"))
    send(page, "hello")
    page.wait_for_selector("text=still chat-m")
    wait_idle(page)
    page.close()


def test_settings_change_applies_from_the_next_message(model_server, app, browser):
    page = open_chat(browser, app)
    page.set_viewport_size({"width": 1280, "height": 1500})
    open_settings(page)
    fill_setting(page, "chat_model_custom", "chat-other")
    fill_setting(page, "chat_temperature", "0.3")
    save_settings(page)
    page.wait_for_selector("text=Settings saved")
    model_server.queue("chat-other", Text("answered by chat-other"))
    send(page, "who are you?")
    page.wait_for_selector("text=answered by chat-other")
    wait_idle(page)
    request = model_server.requests_for("chat-other")[-1]
    assert request.params.get("temperature") == 0.3
    page.close()


def test_no_model_configured_first_screen_says_what_to_set(app_factory, browser):
    url = app_factory({})
    page = open_chat(browser, url)
    page.wait_for_selector("text=brainchat is not ready yet")
    body = page.inner_text("body")
    assert "Set CHAT_MODEL" in body and "bash scripts/dev.sh run --demo" in body  # the offline path
    send(page, "hello?")
    page.wait_for_selector("text=Fix the configuration and restart")
    page.close()


def test_bad_configuration_is_shown_in_the_chat(app_factory, browser):
    url = app_factory({"CHAT_MODEL": '{"model": "x", broken', "AGENT_MAX_ITERATIONS": "99"})
    page = open_chat(browser, url)
    page.wait_for_selector("text=brainchat is not ready yet")
    body = page.inner_text("body")
    assert "CHAT_MODEL" in body and "broken JSON" in body and "AGENT_MAX_ITERATIONS" in body
    send(page, "hello?")
    page.wait_for_selector("text=Fix the configuration and restart")
    page.close()


def test_editing_a_message_leaves_no_ghosts_in_the_history(model_server, app, browser):
    model_server.queue("chat-m", Text("Answer A."), Text("Answer B."), Text("Answer C."))
    page = open_chat(browser, app)
    send(page, "Question A")
    page.wait_for_selector("text=Answer A.")
    wait_idle(page)
    send(page, "Question B")
    page.wait_for_selector("text=Answer B.")
    wait_idle(page)
    first = page.locator(".step", has_text="Question A").first
    first.hover()
    first.locator(".edit-message").click()
    page.fill("#edit-chat-input", "Question C")
    page.click(".confirm-edit")
    page.wait_for_selector("text=Answer C.")
    wait_idle(page)
    assert "Question B" not in page.inner_text("body")  # the page dropped the later turns
    users = [m["content"] for m in model_server.requests_for("chat-m")[-1].messages
             if m["role"] == "user"]  # fmt: skip
    assert users == ["Question C"]  # and so did the history the model saw
    page.close()
