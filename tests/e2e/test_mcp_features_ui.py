"""MCP client features in a real browser (#25): attach a configured server's resource."""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
NOTES = ROOT / "tests" / "mcp_servers" / "study_notes.py"
PROTOCOL = "Motor imagery protocol: 4 s cue, left vs right hand, 64-channel EEG at 512 Hz."


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    servers = {"notes": {"command": sys.executable, "args": [str(NOTES)]}}
    config.write_text(json.dumps({"mcpServers": servers}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def test_a_resource_attached_from_the_list_goes_with_the_next_message(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "/resource")
    page.wait_for_selector("text=notes://subject/{subject}")  # templates are listed too
    page.get_by_role("button", name="Attach notes://protocol").click()
    page.wait_for_selector("text=Attached notes://protocol")
    page.wait_for_selector(f"text={PROTOCOL}")  # its text, shown in the chat
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("The cue lasts 4 s."))
    send(page, "How long is the cue?")
    page.wait_for_selector("text=The cue lasts 4 s.")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[0].messages if m["role"] == "user"]
    assert "How long is the cue?" in users[-1]["content"]
    assert PROTOCOL in users[-1]["content"]  # the attached resource is the message's context
    # attached once: the next message goes without it
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("Hello again."))
    send(page, "Thanks")
    page.wait_for_selector("text=Hello again.")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert "Thanks" in users[-1]["content"] and PROTOCOL not in users[-1]["content"]
    page.close()


def test_a_uri_the_server_does_not_offer_is_refused(app, browser):
    page = open_chat(browser, app)
    send(page, "/resource notes file:///etc/passwd")
    page.wait_for_selector("text=does not offer the resource")
    assert "root:" not in page.inner_text("body")
    page.close()


def test_a_server_prompt_is_a_slash_command_whose_rendering_is_the_users_turn(
    model_server, app, browser
):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    page.fill("#chat-input", "/mcp.notes")
    item = page.get_by_text("mcp.notes.summarise", exact=False).first
    item.wait_for()  # the server's prompt is in the command menu, with its arguments
    assert "subject=" in page.inner_text("body")
    item.click()
    page.fill("#chat-input", "subject=S02 style=brief")
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("S02 is fine."))
    page.click("#chat-submit")
    page.wait_for_selector("text=S02 is fine.")
    wait_idle(page)
    rendered = "Summarise subject S02 in a brief style, citing notes://subject/S02."
    assert rendered in page.inner_text("body")  # shown as what was sent
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert users[-1]["content"].startswith(rendered)
    page.close()


def test_a_prompt_without_its_required_argument_says_how_and_sends_nothing(
    model_server, app, browser
):
    page = open_chat(browser, app)
    before = len(model_server.requests_for("fc-m"))
    send(page, "/mcp.notes.summarise style=long")
    page.wait_for_selector("text=missing subject")
    assert "/mcp.notes.summarise subject=" in page.inner_text("body")
    assert len(model_server.requests_for("fc-m")) == before
    page.close()


def test_structured_records_are_shown_as_a_table_in_the_step(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    model_server.queue("fc-m", ToolCalls([Call("trial_table", {})]), Text("I have them."))
    model_server.queue("ans-m", Text("S03 has the most trials."))
    send(page, "Trials per subject?")
    page.wait_for_selector("text=S03 has the most trials.")
    wait_idle(page)
    expand_all_steps(page)
    cells = page.locator("table td, table th").all_inner_texts()
    assert {"subject", "trials", "S02", "38"} <= {c.strip() for c in cells}, cells
    page.close()
