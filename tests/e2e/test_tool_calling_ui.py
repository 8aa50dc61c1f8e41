"""Models that do not call tools natively, in a real browser: the settings panel's choice and the
notice of a retried stream."""

from __future__ import annotations

import pytest

from brainchat.testing.replies import call_text
from brainchat.testing.scripted_server import Call, Empty, Text, ToolCalls
from conftest import (
    expand_all_steps,
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


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "DEFAULT_MODE": "agent",
    })  # fmt: skip


def test_prompt_tool_calling_picked_in_the_panel_runs_a_json_call(model_server, app, browser):
    page = open_chat(browser, app)
    open_settings(page)
    show_setting(page, "function_call_tool_calling")
    page.click("#function_call_tool_calling")
    page.get_by_role("option", name="Prompt (tools in the system prompt").click()
    save_settings(page)
    page.wait_for_selector("text=tool calling prompt")  # the saved-settings summary
    before = len(model_server.requests_for("fc-m"))
    # a prompt-mode model is guided by default: its turn starts with a record of the request
    record = '{"language": "en", "needs_tools": true, "web": true, "listing": false, "plot": false, "steps": [], "positions": [], "fixed": {}}'  # fmt: skip
    model_server.queue(
        "fc-m",
        Text(record),
        Text(call_text([Call("web_search", {"query": "EEGNet"})], prose="Searching.")),
    )  # the rule ends the loop after the search
    model_server.queue("ans-m", Text("EEGNet is a compact CNN [1]."))
    send(page, "What is EEGNet?")
    page.wait_for_selector("text=EEGNet is a compact CNN")
    wait_idle(page)
    expand_all_steps(page)
    assert any(t.startswith("web_search") for t in step_titles(page)), step_titles(page)
    decide = model_server.requests_for("fc-m")[before + 1]
    assert decide.tools is None and "web_search" in decide.messages[0]["content"]
    assert "```json" not in page.inner_text("body")  # the call is a step, not shown as text


def _pick(page, widget_id: str, option: str) -> None:
    show_setting(page, widget_id)
    page.click(f"#{widget_id}")
    page.get_by_role("option", name=option).click()


def _is_record(request) -> bool:
    fmt = request.params.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name") == "request_record"


def test_the_guidance_picked_in_the_panel_decides_whether_the_request_is_recorded(
    model_server, app, browser
):
    """A prompt-mode model set to minimal guidance is asked for no record of the request (its
    calls run as sent); set to guided, its turn starts with one, shown as a step."""
    page = open_chat(browser, app)
    open_settings(page)
    _pick(page, "function_call_tool_calling", "Prompt (tools in the system prompt")
    _pick(page, "function_call_guidance", "Minimal (limits, approvals")
    save_settings(page)
    page.wait_for_selector("text=guidance minimal")
    before = len(model_server.requests_for("fc-m"))
    model_server.queue("fc-m", Text("No tools needed."))
    model_server.queue("ans-m", Text("Hello from the minimal run."))
    send(page, "你好")
    page.wait_for_selector("text=Hello from the minimal run.")
    wait_idle(page)
    asked = model_server.requests_for("fc-m")[before:]
    assert len(asked) == 1 and not _is_record(asked[0])
    open_settings(page)
    _pick(page, "function_call_guidance", "Guided (a record of the request")
    save_settings(page)
    page.wait_for_selector("text=guidance guided")
    record = '{"language": "zh-CN", "needs_tools": false, "web": false, "listing": false, "plot": false, "steps": [], "positions": [], "fixed": {}}'  # fmt: skip
    model_server.queue("fc-m", Text(record), Text('{"done": "No tools needed."}'))
    model_server.queue("ans-m", Text("你好，我是 brainchat。"))
    send(page, "你好，你是谁？")
    page.wait_for_selector("text=你好，我是 brainchat。")
    wait_idle(page)
    asked = model_server.requests_for("fc-m")[before + 1 :]
    assert _is_record(asked[0]) and not _is_record(asked[1])


def test_an_empty_stream_is_retried_with_a_notice_in_the_chat(model_server, app, browser):
    page = open_chat(browser, app)  # DEFAULT_MODE=agent: no switch needed
    model_server.queue(
        "fc-m",
        Empty(),
        ToolCalls([Call("web_search", {"query": "mu rhythm"})]),  # then the rule ends it
    )
    model_server.queue("ans-m", Text("Mu is 8-13 Hz [2]."))
    send(page, "mu rhythm?")
    page.wait_for_selector("text=Mu is 8-13 Hz")
    wait_idle(page)
    body = page.inner_text("body")
    assert "asked again without streaming" in body and "stream_tool_calls" in body
    assert [r.stream for r in model_server.requests_for("fc-m")][:2] == [True, False]
