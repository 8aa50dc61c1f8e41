"""An MCP server asks the user for input mid-call (#25 elicitation), in a real browser: the
agent calls a FastMCP tool that elicits; the form shows the server, its message and one box per
field; a wrong answer is shown again with what is wrong; Accept sends the answers and the
server's result shows them; Decline says no; a secret never comes back to the page."""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
LAB = ROOT / "tests" / "mcp_servers" / "elicit_lab.py"
FORM = "#brainchat-elicitation-form"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    # no approval dialog before the calls, and time enough to fill the form on a loaded machine
    lab = {"command": sys.executable, "args": [str(LAB)], "destructive": False, "timeout": 300}
    config.write_text(json.dumps({"mcpServers": {"elicit": lab}}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "AGENT_MAX_EXECUTION_TIME": "300",
        "AGENT_TOOL_TIMEOUT": "300",
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def test_the_user_fills_the_form_and_the_servers_result_shows_the_answers(
    model_server, app, browser
):
    result = "registered Ada <ada@example.org>, 36 y, 70 kg, consent=True"
    model_server.queue("fc-m", ToolCalls([Call("register_participant", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("Ada is registered."))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "Register the participant")
    form = page.locator(FORM)
    form.wait_for(timeout=90_000)  # the agent's round and the call come first
    body = page.inner_text("body")
    assert "MCP server elicit asks" in body and "Who is the participant?" in body
    assert form.get_by_label("Weight").input_value() == "70"  # the schema's default
    form.get_by_label("Name *").fill("A")  # too short
    form.get_by_label("Email *").fill("ada@example.org")
    form.get_by_label("Age *").fill("36")
    form.get_by_label("Consent *").check()
    form.locator("#elicit_accept").click()
    page.wait_for_selector("text=Name must have at least 2 characters")  # shown again
    form = page.locator(FORM)
    assert form.get_by_label("Email *").input_value() == "ada@example.org"  # kept
    form.get_by_label("Name *").fill("Ada")
    form.get_by_label("Consent *").check()
    form.locator("#elicit_accept").click()
    page.wait_for_selector("text=Ada is registered.", timeout=90_000)
    wait_idle(page)
    assert page.locator(FORM).count() == 0
    assert (
        "you accepted (Name: Ada; Email: ada@example.org; Age: 36; Weight: 70; Consent: True)"
        in (page.inner_text("body"))
    )
    tool_results = [
        m["content"]
        for m in model_server.requests_for("ans-m")[0].messages
        if result in str(m.get("content"))
    ]
    assert tool_results  # the server's result, made of the answers, reached the answer model
    expand_all_steps(page)
    page.wait_for_selector(f"text={result}")  # the tool step shows the server's result
    page.wait_for_selector("text=Asked:")  # and that the server asked, and what was answered
    page.close()


def test_decline_goes_to_the_server_and_a_secret_never_comes_back(model_server, app, browser):
    model_server.queue("fc-m", ToolCalls([Call("pick_band", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("Nothing was picked."))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "Pick a band")
    form = page.locator(FORM)
    form.wait_for(timeout=90_000)  # the agent's round and the call come first
    form.get_by_label("Frequency band *").select_option(label="Beta (13-30 Hz)")
    password = form.get_by_label("Archive password")
    assert password.get_attribute("type") == "password"
    password.fill("hunter2-secret")
    form.locator("#elicit_decline").click()
    page.wait_for_selector("text=Nothing was picked.", timeout=90_000)
    wait_idle(page)
    assert "you declined" in page.inner_text("body")
    expand_all_steps(page)
    page.get_by_text('"action":"decline"').first.wait_for()  # the server got decline
    assert "hunter2" not in page.content()
    page.close()


def test_cancel_closes_the_form_and_the_server_gets_cancel(model_server, app, browser):
    model_server.queue("fc-m", ToolCalls([Call("register_participant", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("Registration was cancelled."))
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "Register the participant")
    page.locator(FORM).wait_for(timeout=90_000)
    page.locator("#elicit_cancel").click()
    page.wait_for_selector("text=Registration was cancelled.", timeout=90_000)
    wait_idle(page)
    assert page.locator(FORM).count() == 0
    expand_all_steps(page)
    page.wait_for_selector("text=not registered: the user chose cancel")
    page.close()
