"""Agent mode in a real browser: mode picker, nested steps, two models, stats, stop, approvals."""

from __future__ import annotations

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import expand_all_steps, open_chat, pick_mode, screenshot, send, spec, wait_idle

pytestmark = pytest.mark.browser
RUN = "button[id^='step-Agent run']"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    missing = tmp_path_factory.mktemp("mcp") / "missing-mcp.json"
    return app_factory({
        "CHAT_MODEL": spec(model_server, "chat-m"),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m", input_price=1.0, output_price=2.0),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(missing),  # a failed tool source, listed with its reason
    })  # fmt: skip


def step_titles(page) -> list[str]:
    return [
        " ".join(t.split())
        for t in page.locator("button[id^='step-'], p[id^='step-']").all_inner_texts()
    ]


def two_search_rounds(server, answer_delay: float = 0.02) -> None:
    """Round 1 mixes a search with the study state (the model decides what next); round 2 is
    only a search that found sources, which the evaluation judges enough to answer from."""
    server.queue(
        "fc-m",
        ToolCalls(
            [Call("web_search", {"query": "EEGNet motor imagery"}), Call("get_study_state", {})],
            reasoning="Search first.",
        ),
        ToolCalls([Call("web_search", {"query": "mu rhythm ERD"})], reasoning="Need ERD facts."),
    )
    server.queue("ans-m", Text("EEGNet is a compact CNN [1]; imagery suppresses mu power [2].",
                               token_delay=answer_delay))  # fmt: skip


def test_mode_switch_confirms_tools_failures_and_roles(model_server, app, browser):
    page = open_chat(browser, app)
    assert page.inner_text("#mode-picker-trigger-mode").strip() == "Chat"
    pick_mode(page, "Agent")
    assert page.inner_text("#mode-picker-trigger-mode").strip() == "Agent"
    send(page, "/tools")
    page.wait_for_selector("text=Agent mode is on")
    body = page.inner_text("body")
    assert "web_search" in body and "clear_study (destructive)" in body
    assert "missing-mcp.json" in body and "file not found" in body  # failed source and why
    assert "thinking and tool calls with fc-m, final answer with ans-m" in body
    assert "Agent tools" in body  # the /tools listing itself
    pick_mode(page, "Chat")
    model_server.queue("chat-m", Text("plain chat again"))
    send(page, "hi")
    page.wait_for_selector("text=Chat mode is on")
    page.wait_for_selector("text=plain chat again")
    wait_idle(page)
    page.close()


def test_default_mode_sets_the_starting_mode(model_server, app_factory, browser):
    url = app_factory(
        {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent"}
    )
    page = open_chat(browser, url)
    page.wait_for_selector("text=in Agent mode")
    assert page.inner_text("#mode-picker-trigger-mode").strip() == "Agent"
    page.close()


def test_agent_run_shows_every_step_nested_and_collapsed_with_stats(model_server, app, browser):
    two_search_rounds(model_server)
    page = open_chat(browser, app)
    page.set_viewport_size({"width": 1280, "height": 3300})
    pick_mode(page, "Agent")
    send(page, "What is EEGNet and what happens to mu during imagery?")
    page.wait_for_selector("text=EEGNet is a compact CNN")
    wait_idle(page)
    titles = step_titles(page)
    kinds = ["Thinking · fc-m", "Tool call: web_search · done", "Tool result: web_search",
             "Evaluation · another round", "Thinking · fc-m", "Tool call: web_search · done",
             "Tool result: web_search", "Evaluation · enough to answer",
             "Model switch · answering with ans-m"]  # fmt: skip
    pos = 0
    for kind in kinds:  # every kind, in this order
        pos = next(i for i in range(pos, len(titles)) if kind in titles[i]) + 1
    assert any(t.startswith("Used Agent run · 2 round(s) · 3 tool call(s)") for t in titles)
    # nested: every step sits inside the run step's body; collapsed once done
    run_item = page.locator(f"{RUN}").locator("xpath=ancestor::div[@data-state][1]")
    inner = "button[id^='step-']:not([id^='step-Agent run'])"
    assert run_item.locator(inner).count() >= 10
    assert run_item.locator(f"{inner}[data-state='open']").count() == 0
    assert run_item.locator(f"{inner}[data-state='closed']").count() >= 10
    body = page.inner_text("body")
    assert "Sources" in body and "EEGNet: a compact CNN for EEG-based BCIs" in body
    link = page.locator("a[href='https://example.org/eegnet']")
    assert link.count() >= 1
    fc = model_server.requests_for("fc-m")
    fc_in = sum(r.usage["prompt_tokens"] for r in fc)
    table = page.locator("table").last.inner_text()
    assert "function call\tfc-m\t2\t" + str(fc_in) in table
    assert "answer\tans-m\t1\t" in table and "Total" in table and "$" in table
    assert "First answer token after" in body
    expand_all_steps(page)
    page.locator(RUN).scroll_into_view_if_needed()
    screenshot(page, "agent-run.png", full_page=True)
    page.close()


def test_stop_mid_answer_closes_steps_and_next_message_works(model_server, app, browser):
    long = " ".join(f"word{i}" for i in range(60))
    model_server.queue("fc-m", Text("No tools needed."))
    model_server.queue("ans-m", Text(long, token_delay=0.2))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "write something long")
    page.wait_for_selector("text=word3")
    assert page.locator("#chat-submit").count() == 0 or page.locator("#chat-submit").is_disabled()
    page.click("#stop-button")
    page.wait_for_selector("text=Stopped.")
    wait_idle(page)
    body = page.inner_text("body")
    assert "word3" in body and "word59" not in body  # the partial answer stays
    assert "Usage so far" in body and "ans-m" in body
    fc_usage = model_server.requests_for("fc-m")[0].usage  # the finished call's real usage
    assert f"fc-m\t1\t{fc_usage['prompt_tokens']}\t" in body
    assert "partial answer" in body
    model_server.queue("fc-m", Text("Fine."))
    model_server.queue("ans-m", Text("Next answer works."))
    send(page, "again")
    page.wait_for_selector("text=Next answer works.")
    wait_idle(page)
    page.close()


def test_stop_during_thinking_marks_open_steps_stopped(model_server, app, browser):
    model_server.queue("fc-m", Text("thinking " * 80, token_delay=0.15))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "think slowly")
    page.wait_for_selector("button[id^='step-Thinking']")
    page.wait_for_timeout(800)
    page.click("#stop-button")
    page.wait_for_selector("text=Stopped.")
    wait_idle(page)
    titles = step_titles(page)
    assert any("Thinking · fc-m" in t and "stopped" in t for t in titles), titles
    assert any("Agent run" in t and "stopped" in t for t in titles), titles
    page.close()


def _clear_study_run(server) -> None:
    server.queue("fc-m", ToolCalls([Call("clear_study", {})]), Text("Done with tools."))
    server.queue("ans-m", Text("Finished."))


def test_destructive_tool_asks_first_approve_and_reject(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    _clear_study_run(model_server)
    send(page, "clear the study")
    page.wait_for_selector("text=wants to run clear_study")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_selector("text=Approved: clear_study")
    page.wait_for_selector("text=Finished.")
    wait_idle(page)
    assert any("Tool call: clear_study · done" in t for t in step_titles(page))
    _clear_study_run(model_server)
    send(page, "clear it again")
    page.wait_for_selector("text=wants to run clear_study")
    page.get_by_role("button", name="Reject").click()
    page.wait_for_selector("text=Rejected: clear_study")
    wait_idle(page)
    assert any("Tool call: clear_study · refused" in t for t in step_titles(page))
    tool_msgs = [
        m for r in model_server.requests_for("fc-m") for m in r.messages if m.get("role") == "tool"
    ]
    assert "did not approve" in str(tool_msgs[-1].get("content"))
    page.close()
