"""Agent mode in a real browser: the switch, the run's steps, two models, stats, stop, approvals."""

from __future__ import annotations

import re

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import (
    STOP_NOTICE,
    expand_all_steps,
    open_chat,
    pick_mode,
    screenshot,
    send,
    spec,
    step_titles,
    wait_idle,
)

pytestmark = pytest.mark.browser
RUN = "button[id^='step-Agent run']"
INNER = "button[id^='step-']:not([id^='step-Agent run'])"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    missing = tmp_path_factory.mktemp("mcp") / "missing-mcp.json"
    return app_factory({
        "CHAT_MODEL": spec(model_server, "chat-m"),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m", input_price=1.0, output_price=2.0),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(missing),  # a failed tool source, listed with its reason
    })  # fmt: skip


def two_search_rounds(server, answer_delay: float = 0.02) -> None:
    """Round 1 mixes a search with the study state (the model decides what next); round 2 is
    only a search that found sources, which the evaluation judges enough to answer from. The
    answer model streams its own reasoning first: that is not a round."""
    server.queue(
        "fc-m",
        ToolCalls(
            [Call("web_search", {"query": "EEGNet motor imagery"}), Call("get_study_state", {})],
            reasoning="Search first.",
        ),
        ToolCalls([Call("web_search", {"query": "mu rhythm ERD"})], reasoning="Need ERD facts."),
    )
    server.queue("ans-m", Text("EEGNet is a compact CNN [1]; imagery suppresses mu power [2].",
                               reasoning="Cite both sources.", token_delay=answer_delay))  # fmt: skip


def test_picking_agent_asks_at_the_switch_and_says_the_tools_in_one_line(
    model_server, app, browser
):
    page = open_chat(browser, app)
    assert page.inner_text("#mode-picker-trigger-mode").strip() == "Chat"
    pick_mode(page, "Agent", answer="Stay in Chat")  # no message sent: the question comes now
    page.wait_for_selector("text=Stayed in Chat mode")
    page.wait_for_function(
        "document.getElementById('mode-picker-trigger-mode').innerText.trim() === 'Chat'"
    )  # the picker is put back
    pick_mode(page, "Agent")
    assert page.inner_text("#mode-picker-trigger-mode").strip() == "Agent"
    line = page.locator(".step", has_text="Agent mode is on").last.inner_text()
    assert re.search(r"Agent mode is on · \d+ tools; 1 tool source unavailable", line), line
    assert "thinks with fc-m, answers with ans-m" in line
    assert "clear_study" not in page.inner_text("body")  # a count, not the list
    page.locator(".step", has_text="Agent mode is on").last.get_by_role(
        "button", name="Show tools"
    ).click()
    page.wait_for_selector("text=Agent tools")
    body = page.inner_text("body")
    assert "web_search" in body and "clear_study (destructive)" in body
    assert "missing-mcp.json" in body and "file not found" in body  # failed source and why
    assert model_server.requests == []  # switching asked no model anything
    pick_mode(page, "Chat")  # back to Chat: at once, no question
    model_server.queue("chat-m", Text("plain chat again"))
    send(page, "hi")
    page.wait_for_selector("text=plain chat again")
    wait_idle(page)
    assert [r.model for r in model_server.requests] == ["chat-m"]
    page.close()


def test_default_mode_sets_the_starting_mode(model_server, app_factory, browser):
    url = app_factory(
        {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent"}
    )
    page = open_chat(browser, url)
    page.wait_for_selector("text=in Agent mode")
    assert page.inner_text("#mode-picker-trigger-mode").strip() == "Agent"
    page.close()


def test_agent_run_steps_titles_and_stats_that_add_up(model_server, app, browser):
    two_search_rounds(model_server)
    page = open_chat(browser, app)
    page.set_viewport_size({"width": 1280, "height": 2400})
    pick_mode(page, "Agent")
    send(page, "What is EEGNet and what happens to mu during imagery?")
    page.wait_for_selector("text=EEGNet is a compact CNN")
    wait_idle(page)
    titles = step_titles(page)
    assert not [t for t in titles if t.startswith(("Used", "Using"))], titles  # no Chainlit prefix
    kinds = [r"Thinking · fc-m · \d+ ms", r"web_search · 4 results · \d+ ms", r"get_study_state · done",
             r"Thinking · fc-m · \d+ ms", r"web_search · 4 results",
             r"Decision · enough to answer · answering with ans-m", r"Reasoning · ans-m · \d+ ms"]  # fmt: skip
    pos = 0
    for kind in kinds:  # every kind, in this order
        pos = next(i for i in range(pos, len(titles)) if re.match(kind, titles[i])) + 1
    assert not [t for t in titles if "Evaluation" in t or "Study ·" in t], titles  # quiet
    run_title = next(t for t in titles if t.startswith("Agent run"))
    # two rounds, though the answer model streamed reasoning of its own
    m = re.fullmatch(r"Agent run · 2 rounds · 3 tool calls · ([\d.]+ m?s)", run_title)
    assert m, run_title
    table = page.locator("table").last.inner_text()
    total = next(line for line in table.splitlines() if line.startswith("Total"))
    assert total.split("\t")[5] == m.group(1)  # the header's time is the table's total
    run_item = page.locator(RUN).locator("xpath=ancestor::div[@data-state][1]")
    assert run_item.locator(INNER).count() == 7  # nested, and only these
    assert run_item.locator(f"{INNER}[data-state='open']").count() == 0  # collapsed once done
    body = page.inner_text("body")
    assert "Sources" in body and "EEGNet: a compact CNN for EEG-based BCIs" in body
    assert page.locator("a[href='https://example.org/eegnet']").count() >= 1
    fc_in = sum(r.usage["prompt_tokens"] for r in model_server.requests_for("fc-m"))
    assert "function call\tfc-m\t2\t" + str(fc_in) in table
    assert "answer\tans-m\t1\t" in table and "$" in table
    unknown = page.locator("table").last.locator("a[title*='No price is known for ans-m']")
    assert (
        unknown.count() >= 1 and unknown.first.inner_text() == "—"
    )  # a tooltip says how to set it
    assert "First answer token after" in body
    page.close()


def test_stop_mid_answer_leaves_one_message_and_the_next_message_works(model_server, app, browser):
    long = " ".join(f"word{i}" for i in range(60))
    model_server.queue("fc-m", Text("No tools needed."))
    model_server.queue("ans-m", Text(long, token_delay=0.2))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "write something long")
    page.wait_for_selector("text=word3")
    assert page.locator("#chat-submit").count() == 0 or page.locator("#chat-submit").is_disabled()
    page.click("#stop-button")
    page.wait_for_selector(STOP_NOTICE)
    wait_idle(page)
    body = page.inner_text("body")
    assert "word3" in body and "word59" not in body and "partial answer" in body
    assert body.count("Stopped") == 1 and "Task manually stopped" not in body  # one message
    assert "Usage so far" in body and "ans-m" in body
    fc_usage = model_server.requests_for("fc-m")[0].usage  # the finished call's real usage
    assert f"fc-m\t1\t{fc_usage['prompt_tokens']}\t" in body
    model_server.queue("fc-m", Text("Fine."))
    model_server.queue("ans-m", Text("Next answer works."))
    send(page, "again")
    page.wait_for_selector("text=Next answer works.")
    wait_idle(page)
    page.close()


def test_stop_during_thinking_marks_open_steps_stopped(model_server, app, browser):
    model_server.queue("fc-m", Text(" ".join(f"thinking{j}" for j in range(80)), token_delay=0.15))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "think slowly")
    page.wait_for_selector("button[id^='step-Thinking']")
    page.wait_for_timeout(800)
    page.click("#stop-button")
    page.wait_for_selector(STOP_NOTICE)
    wait_idle(page)
    titles = step_titles(page)
    assert any("Thinking · fc-m" in t and "stopped" in t for t in titles), titles
    assert any("Agent run" in t and "stopped" in t for t in titles), titles
    body = page.inner_text("body")
    assert body.count("Stopped") == 1 and "after —" not in body  # no answer token: no TTFT line
    page.close()


def _clear_study_run(server) -> None:
    server.queue("fc-m", ToolCalls([Call("clear_study", {})]), Text("Done with tools."))
    server.queue("ans-m", Text("Finished."))


def test_destructive_tool_waits_for_approval_then_runs_or_is_refused(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    _clear_study_run(model_server)
    send(page, "clear the study")
    page.wait_for_selector("text=wants to run clear_study")
    waiting = page.locator("button[id='step-clear_study · waiting for your approval']")
    assert waiting.is_visible()  # said in the step's title, not "running…"
    screenshot(page, "approval.png")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_selector("text=Approved: clear_study")
    # clear_study runs in the conversation's kernel, started at its first EEG step: on a loaded
    # two-core machine (the full suite) its start took over a minute once
    page.wait_for_selector("text=Finished.", timeout=180_000)
    wait_idle(page)
    assert any(re.match(r"clear_study · done · \d+", t) for t in step_titles(page))
    _clear_study_run(model_server)
    send(page, "clear it again")
    page.wait_for_selector("text=wants to run clear_study")
    page.get_by_role("button", name="Reject").click()
    page.wait_for_selector("text=Rejected: clear_study")
    wait_idle(page)
    assert any(t.startswith("clear_study · refused") for t in step_titles(page))
    tool_msgs = [
        m for r in model_server.requests_for("fc-m") for m in r.messages if m.get("role") == "tool"
    ]
    assert "did not approve" in str(tool_msgs[-1].get("content"))
    expand_all_steps(page)
    page.close()


def test_a_draft_typed_right_after_the_switch_survives_the_move_to_the_threads_page(
    model_server, app, browser
):
    """Answering the switch question is the conversation's first interaction: Chainlit fetches
    the thread list, then moves the page to /thread/<id>, which builds a new message box. A
    user who types while the list loads (slow under load: CI saw 60 s of a disabled send
    button) lost the draft; it is kept and can be sent."""
    page = open_chat(browser, app)
    held: list = []
    page.route("**/project/threads", lambda route: held.append(route))  # the list loads slowly
    pick_mode(page, "Agent", moved=False)
    assert page.url.rstrip("/") == app and held  # still on the start page, the list pending
    draft = "Which bands separate eyes-open from eyes-closed?"
    page.fill("#chat-input", draft)
    old_box = page.locator("#chat-input").element_handle()
    for route in held:
        route.continue_()
    page.unroute("**/project/threads")
    page.wait_for_url(re.compile(r"/thread/"))
    page.wait_for_function("box => !box.isConnected", arg=old_box)  # a new message box
    page.wait_for_function(
        "draft => document.getElementById('chat-input')?.value === draft", arg=draft
    )
    model_server.queue("fc-m", Text("No tools needed."))
    model_server.queue("ans-m", Text("Alpha rises with eyes closed."))
    page.click("#chat-submit")  # the send button works with the kept draft
    page.wait_for_selector("text=Alpha rises with eyes closed.")
    wait_idle(page)
    sent = model_server.requests_for("fc-m")[-1].messages
    assert any(draft in str(m.get("content")) for m in sent), sent
    assert page.input_value("#chat-input") == ""  # sent: not restored again
    thread = page.url
    # a draft stays where it was typed when the user opens another conversation
    page.click("#new-chat-button")
    page.get_by_role("button", name="Confirm").click()
    page.wait_for_selector("text=/brainchat is ready/")
    page.fill("#chat-input", "a draft for the new conversation")
    page.locator(f"a[href$='{thread.split('/thread/')[1]}']").first.click()
    page.wait_for_url(thread)
    page.wait_for_selector("text=Alpha rises with eyes closed.")
    assert page.input_value("#chat-input") == ""
    page.close()
