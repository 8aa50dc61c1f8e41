"""The settings panel in a real browser: three short sections (models, agent limits, advanced),
and a value set in one section survives a visit to another."""

from __future__ import annotations

import pytest

from conftest import open_chat, open_settings, save_settings, spec

pytestmark = pytest.mark.browser

SECTIONS = {
    "Models": ["function_call_model", "answer_model", "chat_model"],
    "Agent": ["max_iterations", "max_execution_time", "execution_mode", "plan_mode"],
    "Advanced": [
        "function_call_tool_calling",
        "function_call_stream_tool_calls",
        "function_call_model_custom",
        "function_call_temperature",
        "answer_model_custom",
        "answer_temperature",
        "chat_model_custom",
        "chat_temperature",
    ],
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


def test_the_panel_is_three_short_sections_and_keeps_values_across_them(app, browser):
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
