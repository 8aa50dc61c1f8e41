"""MCP in a real browser: a configured stdio server's tool runs as an agent step with its result."""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
LAB = ROOT / "tests" / "mcp_servers" / "eeg_lab.py"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    servers = {
        "lab": {"command": sys.executable, "args": [str(LAB)], "readOnly": True},
        "ghost": {"command": "brainchat-no-such-command-42"},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def test_mcp_tools_listed_and_a_call_shows_its_step_and_result(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "/tools")
    page.wait_for_selector("text=structured_weather")
    body = page.inner_text("body")
    assert "ghost" in body and "brainchat-no-such-command-42" in body  # failed server and why
    model_server.queue(
        "fc-m",
        ToolCalls([Call("structured_weather", {"city": "Oslo"})]),
        Text("I have the weather."),
    )
    model_server.queue("ans-m", Text("It is sunny in Oslo, 21.5 degrees."))
    send(page, "What is the weather in Oslo?")
    page.wait_for_selector("text=It is sunny in Oslo")
    wait_idle(page)
    expand_all_steps(page)
    steps = " ".join(page.locator(".step, button[id^='step-']").all_inner_texts())
    assert "structured_weather" in steps
    body = page.inner_text("body")
    assert (
        '"conditions":"sunny"' in body or '"conditions": "sunny"' in body
    )  # the result, in the step
    page.close()
