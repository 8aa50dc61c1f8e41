"""Tools whose execution.taskSupport is `required` run as tasks (#43, MCP 2025-11-25): created
by tools/call with the task parameter, polled with tasks/get (its status messages are the step's
progress), read with tasks/result, cancelled with tasks/cancel on Stop or a time limit."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig

from support import wait_until

TASK_LAB = Path(__file__).parent / "mcp_servers" / "task_lab.py"


def task_config(**kwargs) -> McpServerConfig:
    return McpServerConfig(name="tasks", command=sys.executable, args=[str(TASK_LAB)], **kwargs)


@pytest.fixture
async def lab():
    hub = McpHub([task_config(timeout=5)])
    await hub.start()
    assert hub.status()[0]["state"] == "connected", hub.status()
    yield hub
    await hub.close()


def tools(hub: McpHub) -> dict:
    return {t.name: t for t in hub.toolset().tools}


async def test_a_task_required_tool_runs_as_a_task(lab):
    answer = await tools(lab)["research"].ainvoke({"topic": "alpha", "steps": 3})
    assert answer == "report on alpha: 3 steps"
    assert lab.status()[0]["state"] == "connected"


async def test_a_failed_task_is_the_calls_error_and_the_session_is_kept(lab):
    with pytest.raises(ToolException, match=r"tool 'research' \(task .*\) failed: no sources"):
        await tools(lab)["research"].ainvoke({"topic": "x", "fail": "no sources"})
    assert lab.status()[0]["state"] == "connected" and lab.status()[0]["restarts"] == 0
    assert lab.status()[0]["tasks"] == []


async def test_a_task_that_asks_the_user_is_answered_through_tasks_result(lab):
    # input_required: tasks/result carries the server's question; with no run to answer it
    # (a bare call), the client's elicitation answers as it does for a plain call
    answer = await tools(lab)["research"].ainvoke({"topic": "y", "ask": "How deep?"})
    assert answer in ("asked: cancel", "asked: decline")
    assert lab.status()[0]["tasks"] == []


async def test_status_messages_are_the_steps_progress(lab):
    from brainchat import events

    queue = events.EventQueue()
    token, call = queue.bind(), events.set_tool_call("call-9", "research")
    try:
        args = {"topic": "beta", "steps": 4, "seconds": 0.6}
        assert await tools(lab)["research"].ainvoke(args) == "report on beta: 4 steps"
    finally:
        events.unbind(token)
        events._tool_call.reset(call)
    seen = []
    while not queue.queue.empty():
        seen.append(queue.queue.get_nowait())
    progress = [e for e in seen if isinstance(e, events.ToolProgress)]
    assert progress and all(p.call_id == "call-9" for p in progress)
    assert all(" of 4: reading sources" in p.message for p in progress)


async def test_stop_cancels_the_task_and_the_task_is_listed_while_it_runs(lab, tmp_path):
    marker = tmp_path / "research.txt"
    t = tools(lab)
    assert await t["note"].ainvoke({"value": "study C"}) == "kept"
    args = {"topic": "gamma", "steps": 100, "seconds": 0.3, "path": str(marker)}
    call = asyncio.ensure_future(t["research"].ainvoke(args))
    await wait_until(lambda: lab.status()[0]["tasks"], what="the task listed")
    await wait_until(
        lambda: "reading sources" in lab.status()[0]["tasks"][0]["message"], what="its status"
    )
    assert lab.status()[0]["tasks"][0]["tool"] == "research"
    call.cancel()  # what Stop does to the running tool
    await asyncio.gather(call, return_exceptions=True)
    await wait_until(lambda: marker.read_text() == "cancelled", what="tasks/cancel on the server")
    assert lab.status()[0]["tasks"] == [] and lab.status()[0]["state"] == "connected"
    assert await t["read_note"].ainvoke({}) == "study C"  # the same session, its state kept


async def test_the_time_limit_cancels_the_task_and_status_extends_it(monkeypatch, tmp_path):
    monkeypatch.setenv("BRAINCHAT_MCP_MAX_CALL_SECONDS", "3")
    marker = tmp_path / "research.txt"
    hub = McpHub([task_config(timeout=1)])
    await hub.start()
    try:
        t = tools(hub)
        assert await t["note"].ainvoke({"value": "study D"}) == "kept"
        # a status message every 0.3 s keeps it past the 1 s idle limit, up to the 3 s maximum
        args = {"topic": "delta", "steps": 100, "seconds": 0.3, "path": str(marker)}
        with pytest.raises(ToolException, match=r"was cancelled after .*hard maximum of 3 s"):
            await t["research"].ainvoke(args)
        await wait_until(lambda: marker.read_text() == "cancelled", what="tasks/cancel")
        assert hub.status()[0]["state"] == "connected" and hub.status()[0]["tasks"] == []
        assert await t["read_note"].ainvoke({}) == "study D"
    finally:
        await hub.close()


async def test_a_plugged_servers_task_required_tool_runs_as_a_task_too():
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from brainchat.tools.mcp_tools import tools_from_session

    params = StdioServerParameters(command=sys.executable, args=[str(TASK_LAB)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found = {t.name: t for t in await tools_from_session("mine", session, timeout=5.0)}
        assert await found["research"].ainvoke({"topic": "theta"}) == "report on theta: 3 steps"


async def test_a_task_whose_cancel_fails_is_listed_and_cancelled_before_the_next_turn(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("BRAINCHAT_MCP_MAX_CALL_SECONDS", "2")
    marker = tmp_path / "research.txt"
    hub = McpHub([task_config(timeout=1)])
    await hub.start()
    try:
        args = {"topic": "eta", "steps": 100, "seconds": 0.3, "path": str(marker)}
        args["refuse_cancel"] = True
        with pytest.raises(ToolException, match=r"Still open on the server: research \(task "):
            await tools(hub)["research"].ainvoke(args)
        [row] = hub.status()[0]["tasks"]
        assert row["tool"] == "research" and "cancel failed" in row["message"]
        assert marker.read_text() == "started"  # still running on the server
        await hub.reconnect_failed()  # what the app does before each turn
        await wait_until(lambda: marker.read_text() == "cancelled", what="the second cancel")
        assert hub.status()[0]["tasks"] == []
    finally:
        await hub.close()
