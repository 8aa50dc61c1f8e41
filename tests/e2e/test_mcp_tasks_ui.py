"""An MCP server task that outlives its turn, in the browser (#43): a task-required tool whose
time limit ran out, and whose tasks/cancel the server refused, is listed after the turn with a
Cancel button; `/tasks` lists it again; the button cancels it on the server. With accounts it
is its owner's alone: another user's `/tasks` shows nothing of it."""

from __future__ import annotations

import json
import sys
import time

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, screenshot, send, spec, wait_idle

pytestmark = pytest.mark.browser
LAB = ROOT / "tests" / "mcp_servers" / "task_lab.py"


@pytest.mark.attack
def test_a_task_left_running_is_shown_to_its_owner_alone_and_cancelled_from_the_page(
    model_server, app_factory, browser, tmp_path
) -> None:
    from test_persist_ui import add_user
    from test_recordings_ui import login

    config = tmp_path / "mcp.json"
    lab = {"command": sys.executable, "args": [str(LAB)], "destructive": False, "timeout": 1}
    config.write_text(json.dumps({"mcpServers": {"lab": lab}}))
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-t"),
           "AGENT_ANSWER_MODEL": spec(model_server, "ans-t"), "DEFAULT_MODE": "agent",
           "MCP_CONFIG": str(config), "BRAINCHAT_MCP_MAX_CALL_SECONDS": "2",
           "BRAINCHAT_AUTH": "password"}  # fmt: skip
    add_user(tmp_path, env, "ana", "correct horse battery")
    add_user(tmp_path, env, "bob", "battery staple horse")
    url = app_factory(env, home=tmp_path)
    marker = tmp_path / "research.txt"
    args = {"topic": "eta", "steps": 400, "seconds": 0.3, "path": str(marker),
            "refuse_cancel": True}  # fmt: skip
    model_server.queue("fc-t", ToolCalls([Call("research", args)]), Text("Enough."))
    model_server.queue("ans-t", Text("The research did not finish."))

    ana = login(browser, url, "ana", "correct horse battery")
    send(ana, "Research eta")
    ana.wait_for_selector("text=/Still running on an MCP server after this turn/", timeout=60_000)
    wait_idle(ana)
    assert marker.read_text() == "started"  # the server goes on with it
    table = ana.locator("table").last.inner_text()
    assert "research" in table and "working" in table
    screenshot(ana, "mcp-task-left-running.png", full_page=True)

    bob = login(browser, url, "bob", "battery staple horse")
    send(bob, "/tasks")
    bob.wait_for_selector("text=No MCP server task of yours is running.", timeout=30_000)
    assert bob.get_by_role("button", name="Cancel research").count() == 0

    send(ana, "/tasks")
    ana.wait_for_selector("text=/Your MCP server tasks still running/", timeout=30_000)
    ana.get_by_role("button", name="Cancel research").last.click()
    ana.wait_for_selector("text=/Cancelled task .* on MCP server lab/", timeout=30_000)
    for _ in range(150):  # the server writes it when it sees the cancel
        if marker.read_text() == "cancelled":
            break
        time.sleep(0.2)
    assert marker.read_text() == "cancelled"
    send(ana, "/tasks")
    ana.wait_for_selector("text=No MCP server task of yours is running.", timeout=30_000)
