"""An MCP server's session features in a real browser (#43), against changing_lab.py:

- prompt arguments completed by the server (completion/complete): a prompt command sent without
  its required arguments shows the server's values for the first one as buttons; a click goes
  on to the next (completed with the first as context), the last renders and sends the prompt;
- resource subscriptions: an attached resource the server updates (resources/updated) is read
  again, shown, and its new text goes with the next message;
- a prompt the server adds mid-run (prompts/list_changed) joins the command menu after the run.
"""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
LAB = ROOT / "tests" / "mcp_servers" / "changing_lab.py"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    lab = {"command": sys.executable, "args": [str(LAB)], "destructive": False}  # no approval
    config.write_text(json.dumps({"mcpServers": {"changing": lab}}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def test_the_servers_values_are_offered_one_argument_after_another(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    before = len(model_server.requests_for("fc-m"))
    send(page, "/mcp.changing.analyse")
    page.wait_for_selector("text=the server suggests")
    assert "band" in page.inner_text("body")
    page.get_by_role("button", name="mu", exact=True).click()
    page.get_by_role("button", name="C4", exact=True).wait_for()  # mu's channels only
    assert page.get_by_role("button", name="O1", exact=True).count() == 0
    assert len(model_server.requests_for("fc-m")) == before  # nothing sent yet
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("Mu at C4 analysed."))
    page.get_by_role("button", name="C4", exact=True).click()
    page.wait_for_selector("text=Mu at C4 analysed.")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert users[-1]["content"].startswith("Analyse the mu band at C4.")
    page.close()


def test_an_attached_resource_the_server_updates_is_read_again_for_the_next_message(
    model_server, app, browser
):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "/resource changing lab://counter")
    page.wait_for_selector("text=Attached lab://counter")
    page.wait_for_selector("text=You will see its updates here")  # the server offers them
    model_server.queue("fc-m", ToolCalls([Call("bump", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("Bumped."))
    send(page, "Bump the counter")
    page.wait_for_selector("text=Bumped.")
    page.wait_for_selector("text=the new text goes with your next message", timeout=30_000)
    assert "MCP server changing updated lab://counter" in page.inner_text("body")
    wait_idle(page)
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("It is 1."))
    send(page, "What is the count?")
    page.wait_for_selector("text=It is 1.")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert "count=1" in users[-1]["content"]  # the new text, not the attached count=0
    page.close()


def test_a_prompt_the_server_adds_mid_run_joins_the_command_menu(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    model_server.queue("fc-m", ToolCalls([Call("grow", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("Grown."))
    send(page, "Grow")
    page.wait_for_selector("text=Grown.")
    wait_idle(page)
    page.fill("#chat-input", "/mcp.changing")
    page.get_by_text("mcp.changing.late_prompt", exact=False).first.wait_for()
    page.close()


def test_a_servers_log_messages_stay_in_the_calls_step_masked(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    model_server.queue("fc-m", ToolCalls([Call("chatty", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("It talked."))
    send(page, "Talk")
    page.wait_for_selector("text=It talked.")
    wait_idle(page)
    expand_all_steps(page)
    page.wait_for_selector("text=The server said:")
    body = page.inner_text("body")
    assert "log [error] (lab): error: sensor 7 failed" in body
    assert "debug detail" not in body and "info: loading" not in body  # below warning
    assert "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234" not in page.content()
    page.close()
