"""The settings panel and the mode picker in a real browser: the panel is four short sections
(models, agent limits, advanced, the interface language), a value set in one section survives a
visit to another, and the Chat / Agent picker shows the mode in force until the server has
confirmed a switch."""

from __future__ import annotations

import re

import pytest

from brainchat.testing.scripted_server import Text
from conftest import open_chat, open_settings, save_settings, send, spec, wait_idle

pytestmark = pytest.mark.browser

TRIGGER = "#mode-picker-trigger-mode"
SECTIONS = {
    "Models": ["function_call_model", "answer_model", "chat_model"],
    "Agent": ["max_iterations", "max_execution_time", "execution_mode", "plan_mode"],
    "Advanced": [
        "function_call_tool_calling",
        "function_call_guidance",
        "function_call_stream_tool_calls",
        "function_call_model_custom",
        "function_call_temperature",
        "answer_model_custom",
        "answer_temperature",
        "chat_model_custom",
        "chat_temperature",
    ],
    "Interface": ["interface_language"],  # brainchat's own text: Auto, English, 简体中文, 繁體中文
}


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-s"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-s"),
        "CHAT_MODEL": spec(model_server, "chat-s"),
    })  # fmt: skip


def section_fields(page) -> list[str]:
    """The ids of the inputs the open section shows, in order."""
    panel = page.locator("#chat-settings [role=tabpanel][data-state=active]")
    panel.wait_for()
    return [
        str(x) for x in panel.locator("label[for]").evaluate_all("ls => ls.map(l => l.htmlFor)")
    ]


def test_the_panel_is_four_short_sections_and_keeps_values_across_them(app, browser):
    page = open_chat(browser, app)
    page.click("#chat-settings-open-modal")
    tabs = page.locator("#chat-settings [role=tab]")
    tabs.first.wait_for()
    assert tabs.all_inner_texts() == list(SECTIONS)
    for name, fields in SECTIONS.items():
        page.get_by_role("tab", name=name).click()
        assert section_fields(page) == fields, name
    text = page.inner_text("#chat-settings")
    assert "API key" not in text and "base URL" not in text  # connections have their own form
    # the Models section says where connections are added
    page.get_by_role("tab", name="Models").click()
    assert "Add a model connection" in page.inner_text("#chat-settings")

    # a value typed in one section is saved with a pick made in another
    page.get_by_role("tab", name="Agent").click()
    page.fill("#max_iterations", "7")
    page.get_by_role("tab", name="Advanced").click()
    page.fill("#chat_temperature", "0.4")
    page.get_by_role("tab", name="Models").click()
    save_settings(page)
    page.wait_for_selector("text=Settings saved")
    body = page.inner_text("body")
    assert "max iterations 7" in body and "chat: chat-s (temperature 0.4)" in body
    page.close()


def test_an_out_of_range_number_in_a_hidden_section_is_still_refused(app, browser):
    page = open_chat(browser, app)
    open_settings(page)
    page.get_by_role("tab", name="Agent").click()
    page.fill("#max_iterations", "50")
    page.get_by_role("tab", name="Models").click()
    page.locator("#chat-settings #confirm").click()
    page.wait_for_selector("text=Settings not applied")
    assert "max iterations 10" in page.inner_text("body")  # the value in force stays
    page.close()


def trigger_text(page) -> str:
    return str(page.inner_text(TRIGGER)).strip()


def choose(page, name: str) -> None:
    page.click(TRIGGER)
    page.get_by_role("option", name=re.compile(name)).click()


def wait_trigger(page, name: str) -> None:
    page.wait_for_function(
        "([sel, name]) => document.querySelector(sel)?.textContent.trim() === name",
        arg=[TRIGGER, name],
    )


RECORD = """(said) => {
  window.__picker = [];
  const shown = () => document.querySelector('#mode-picker-trigger-mode')?.textContent.trim();
  let last = shown();
  new MutationObserver(() => {
    const now = shown();
    if (now === last) return;
    last = now;
    window.__picker.push([now, document.body.innerText.split(said).length - 1]);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_the_picker_shows_the_mode_in_force_until_a_switch_is_confirmed(model_server, app,
                                                                        browser):  # fmt: skip
    page = open_chat(browser, app)
    assert trigger_text(page) == "Chat"

    # picking Agent asks; until the answer the picker still says Chat (the mode in force)
    choose(page, "Agent")
    page.wait_for_selector("text=Switch to Agent mode?")
    assert trigger_text(page) == "Chat"
    page.get_by_role("button", name="Stay in Chat").click()
    page.wait_for_selector("text=Stayed in Chat mode")
    assert trigger_text(page) == "Chat"

    # by keyboard too: the question comes, the picker does not move
    page.focus(TRIGGER)
    page.keyboard.press("Enter")
    page.wait_for_selector("#mode-picker-popover-mode")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Switch to Agent mode?")  # asked again (the first one was answered)
    assert trigger_text(page) == "Chat"
    page.get_by_role("button", name="Switch to Agent").click()
    page.wait_for_selector("text=Agent mode is on")
    wait_trigger(page, "Agent")
    wait_idle(page)

    # back to Chat: the picker says Agent until the server's "Chat mode is on"
    page.evaluate(RECORD, "Chat mode is on")
    choose(page, "Chat")
    page.wait_for_selector("text=Chat mode is on")
    wait_trigger(page, "Chat")
    changes = page.evaluate("window.__picker")
    assert changes and all(seen > 0 for shown, seen in changes if shown == "Chat"), changes
    assert changes[-1][0] == "Chat"

    model_server.queue("chat-s", Text("Chat answers again."))
    send(page, "hello")
    page.wait_for_selector("text=Chat answers again.")
    wait_idle(page)
    assert [r.model for r in model_server.requests] == ["chat-s"]
    page.close()
