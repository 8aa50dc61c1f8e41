"""An MCP server asks to use the user's model mid-call (#43 sampling), in a real browser: the
dialog names the server, the tool and the server's words, with Allow once / Always allow this
server / Deny; "Always" serves the request with the run's model and the next request of that
server in the conversation is not asked again; Deny sends the server an error."""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import (
    ROOT,
    expand_all_steps,
    open_chat,
    pick_mode,
    screenshot,
    send,
    spec,
    wait_idle,
)

pytestmark = pytest.mark.browser
LAB = ROOT / "tests" / "mcp_servers" / "sampling_lab.py"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    # read-only: no approval of the tool itself, so the only dialog is the sampling one
    lab = {"command": sys.executable, "args": [str(LAB)], "readOnly": True, "timeout": 300}
    config.write_text(json.dumps({"mcpServers": {"sampler": lab}}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "AGENT_MAX_EXECUTION_TIME": "300",
        "AGENT_TOOL_TIMEOUT": "300",
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def summarise_turn(model_server, sampled: str | None, answer: str) -> None:
    replies = [ToolCalls([Call("summarise", {"text": "mu rhythm over C3"})])]
    replies += [Text(sampled)] if sampled else []
    model_server.queue("fc-m", *replies, Text("Enough."))
    model_server.queue("ans-m", Text(answer))


def test_always_allow_serves_it_with_the_runs_model_and_is_not_asked_again(
    model_server, app, browser
):
    summarise_turn(model_server, "Mu ERD at C3.", "First summary done.")
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "Summarise the note")
    always = page.get_by_role("button", name="Always allow this server")
    always.wait_for(timeout=90_000)  # the agent's round and the call come first
    body = page.inner_text("body")
    assert "MCP server sampler asks to use your model" in body and "summarise" in body
    assert "Summarise: mu rhythm over C3" in body and "You write one-line summaries." in body
    assert page.get_by_role("button", name="Allow once").count() == 1
    assert page.get_by_role("button", name="Deny").count() == 1
    page.wait_for_selector("text=summarise · waiting for your approval")  # the call's step
    screenshot(page, "mcp-sampling-dialog.png")
    always.click()
    page.wait_for_selector("text=First summary done.", timeout=90_000)
    wait_idle(page)
    assert "may use your model for the rest of this conversation" in page.inner_text("body")
    sampled = model_server.requests_for("fc-m")[1]
    assert sampled.messages[-1]["content"] == "Summarise: mu rhythm over C3"
    expand_all_steps(page)
    page.wait_for_selector("text=sampling (sampler)")  # the request's own step
    page.get_by_text("summary from fc-m: Mu ERD at C3.").first.wait_for()
    screenshot(page, "mcp-sampling-step.png", full_page=True)

    summarise_turn(model_server, "Still mu ERD.", "Second summary done.")
    send(page, "Summarise it again")
    page.wait_for_selector("text=Second summary done.", timeout=90_000)
    wait_idle(page)
    assert page.get_by_role("button", name="Always allow this server").count() == 0
    page.close()


def test_deny_sends_the_server_an_error_and_asks_no_model(model_server, app, browser):
    summarise_turn(model_server, None, "The server was refused.")
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "Summarise the note")
    deny = page.get_by_role("button", name="Deny")
    deny.wait_for(timeout=90_000)
    deny.click()
    page.wait_for_selector("text=The server was refused.", timeout=90_000)
    wait_idle(page)
    assert "was told you refused" in page.inner_text("body")
    assert len(model_server.requests_for("fc-m")) == 2  # its two rounds; no sampling request
    expand_all_steps(page)
    page.get_by_text("refused: the user denied the sampling request (-1)").first.wait_for()
    page.close()
