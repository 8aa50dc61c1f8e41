"""The page in Chinese: a browser whose language is 简体中文 (or 繁體中文) gets brainchat's own text
in it (the welcome, step titles, the settings panel), as Chainlit's own chrome follows the
browser; tool names, model names and figures stay as they are. The panel's Interface language
overrides the browser: English on a zh-CN browser turns brainchat's text English, and stays so
when the conversation is opened again."""

from __future__ import annotations

import json
import re
import time
from urllib.parse import urlparse

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import open_settings, screenshot, send, spec, step_titles

pytestmark = pytest.mark.browser

TABS = {
    "zh-CN": ["模型", "智能体", "高级", "界面"],
    "zh-TW": ["模型", "智能體", "進階", "介面"],
    "en": ["Models", "Agent", "Advanced", "Interface"],
}
READY = {"zh-CN": "已就绪", "zh-TW": "已就緒"}


def models(server) -> dict[str, str]:
    return {
        "AGENT_FUNCTION_CALL_MODEL": spec(server, "fc-z"),
        "AGENT_ANSWER_MODEL": spec(server, "ans-z"),
        "CHAT_MODEL": spec(server, "chat-z"),
        "DEFAULT_MODE": "agent",
    }


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory(models(model_server))


def open_in(browser, url: str, locale: str):
    """A fresh conversation in a browser whose language is `locale` (its Accept-Language)."""
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("text=/brainchat (is ready|已就绪|已就緒)/")
    return page


ANSWER = "EEGNet is a compact CNN [1]."


def search_turn(page, server, n: int) -> None:
    """Ask one question answered after a web search; wait for its `n`th answer and the run's end
    (the stats table closes the answer)."""
    server.queue("fc-z", ToolCalls([Call("web_search", {"query": "EEGNet"})]))  # found: enough
    server.queue("ans-z", Text(ANSWER))
    send(page, "EEGNet 是什么？")  # a question in Chinese; the interface follows its own setting
    page.wait_for_function(
        "n => document.body.innerText.split('EEGNet is a compact CNN').length > n", arg=n
    )
    page.wait_for_selector("#stop-button", state="detached")
    page.wait_for_selector("#chat-submit")


def panel_tabs(page) -> list[str]:
    open_settings(page)
    return [t.strip() for t in page.locator("#chat-settings [role=tab]").all_inner_texts()]


@pytest.mark.parametrize("locale", ["zh-CN", "zh-TW"])
def test_a_chinese_browser_gets_brainchat_in_chinese(model_server, app, browser, locale):
    page = open_in(browser, app, locale)
    page.wait_for_selector(f"text={READY[locale]}")
    welcome = page.inner_text("body")  # the welcome is the only message yet
    if locale == "zh-CN":
        assert "智能体模式" in welcome and "聊天模型：chat-z" in welcome, welcome
        assert "显示工具" in welcome and "is ready" not in welcome
    else:
        assert "智能體模式" in welcome and "聊天模型：chat-z" in welcome, welcome
        assert "顯示工具" in welcome and "is ready" not in welcome
    assert "fc-z" in welcome and "ans-z" in welcome  # model names as they are

    search_turn(page, model_server, 1)
    titles = " | ".join(step_titles(page))
    run, results = {"zh-CN": ("智能体运行", "个结果"), "zh-TW": ("智能體執行", "個結果")}[locale]
    assert run in titles and "Agent run" not in titles, titles
    assert f"web_search · 4 {results}" in titles, titles  # the tool's name stays
    screenshot(page, f"chinese-chat-{locale}.png")

    assert panel_tabs(page) == TABS[locale]
    text = page.inner_text("#chat-settings")
    assert ("函数调用模型" if locale == "zh-CN" else "函式呼叫模型") in text, text
    screenshot(page, f"chinese-settings-{locale}.png")
    page.context.close()


def saved_language(page, thread_url: str) -> str | None:
    """The Interface language stored with the thread's state (None while none is stored)."""
    r = page.request.get(thread_url)
    meta = (r.json().get("metadata") if r.ok else None) or {}
    meta = json.loads(meta) if isinstance(meta, str) else meta
    return (meta.get("brainchat_state") or {}).get("interface_language")


def test_choosing_english_in_the_panel_wins_over_a_chinese_browser(
    model_server, app_factory, browser
):
    app = app_factory(models(model_server))  # its own app: it is killed below
    page = open_in(browser, app, "zh-CN")
    page.wait_for_selector("text=已就绪")
    assert panel_tabs(page) == TABS["zh-CN"]
    page.get_by_role("tab", name="界面").click()
    page.click("#interface_language")
    assert page.get_by_role("option").all_inner_texts() == [
        "自动（跟随浏览器语言）", "English", "简体中文", "繁體中文",
    ]  # fmt: skip
    page.get_by_role("option", name="English", exact=True).click()
    page.get_by_role("button", name="确认").click()  # Chainlit's own button, in its zh-CN
    page.wait_for_selector("#chat-settings", state="detached")
    page.wait_for_selector("text=Settings saved")  # the notice already in the chosen language
    # the panel comes back in English, with English chosen
    assert panel_tabs(page) == TABS["en"]
    page.get_by_role("tab", name="Interface").click()
    assert page.inner_text("#interface_language").strip() == "English"
    page.keyboard.press("Escape")
    page.wait_for_selector("#chat-settings", state="detached")

    search_turn(page, model_server, 1)
    titles = " | ".join(step_titles(page))
    assert "Agent run" in titles and "web_search · 4 results" in titles, titles
    assert "智能体运行" not in titles
    page.wait_for_url(re.compile(r"/thread/[0-9a-f-]+"))
    thread = urlparse(page.url).path

    # the choice is kept with the conversation's state, written with each turn: after a crash
    # (before the page could say goodbye), the thread opened again on a zh-CN browser is English.
    # The turn's write is waited for: a crash before it would lose the turn, not the choice.
    deadline = time.monotonic() + 60
    while saved_language(page, app + "/project" + thread) in (None, "auto"):
        assert time.monotonic() < deadline, "the turn's state was not saved within 60 s"
        page.wait_for_timeout(100)
    app_factory.stop(app, kill=True)
    page.context.close()
    again = app_factory(models(model_server), home=app_factory.home[app])
    page = browser.new_context(locale="zh-CN").new_page()
    page.goto(again + thread)
    page.wait_for_selector("text=Conversation resumed")
    assert "对话已恢复" not in page.inner_text("body")
    assert panel_tabs(page) == TABS["en"]
    page.context.close()


def test_the_mode_switch_speaks_chinese(model_server, app, browser):
    page = open_in(browser, app, "zh-CN")
    page.wait_for_selector("text=已就绪")
    trigger = "#mode-picker-trigger-mode"
    before = page.inner_text(trigger).strip()
    page.click(trigger)
    page.get_by_role("option").nth(0).click()  # Chat: switches at once, with one line
    page.wait_for_function(
        "([sel, was]) => document.querySelector(sel)?.textContent.trim() !== was",
        arg=[trigger, before],
    )
    page.wait_for_selector("text=对话模式已开启")  # the one-line notice, in Chinese
    assert page.inner_text(trigger).strip() == "对话"
    page.click(trigger)
    page.get_by_role("option").nth(1).click()  # Agent: asks first, with two buttons
    page.wait_for_selector("text=切换到智能体模式？")
    body = page.inner_text("body")
    assert "mode is on" not in body and "Switch to Agent mode?" not in body, body
    assert page.get_by_role("button", name="Switch to Agent").count() == 0
    assert page.get_by_role("button", name="Stay in Chat").count() == 0
    page.get_by_role("button", name="切换到智能体").click()
    page.wait_for_selector("text=智能体模式已开启")
    page.wait_for_function(
        "([sel]) => document.querySelector(sel)?.textContent.trim() === '智能体'", arg=[trigger]
    )
    page.context.close()
