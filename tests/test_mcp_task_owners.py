"""A task whose cancel the server did not confirm outlives its turn (#43): it is listed, with its
status read again from the server, for the user whose run started it only, and only that user
can cancel it (tools/mcp_tasks.py `owned_by`, `open_tasks`, `cancel_owned`)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_tasks import cancel_owned, open_tasks, owned_by
from test_mcp_tasks import task_config, tools

from support import wait_until


async def _leave_open(hub: McpHub, marker, owner: str) -> None:
    """Ana's call times out and its first tasks/cancel is refused: the task goes on running."""
    args = {"topic": "eta", "steps": 200, "seconds": 0.3, "path": str(marker)}
    with owned_by(owner), pytest.raises(ToolException, match="Still open on the server"):
        await tools(hub)["research"].ainvoke({**args, "refuse_cancel": True})


async def test_an_open_task_is_its_owners_alone_to_see_and_cancel(monkeypatch, tmp_path):
    monkeypatch.setenv("BRAINCHAT_MCP_MAX_CALL_SECONDS", "2")
    marker = tmp_path / "research.txt"
    hub = McpHub([task_config(timeout=1)])
    await hub.start()
    try:
        await _leave_open(hub, marker, "ana")
        assert await open_tasks("bob") == []  # another user never sees it
        [(server, task)] = await open_tasks("ana")
        assert (server, task.tool, task.status) == ("tasks", "research", "working")
        assert task.message.startswith("step ")  # read again from the server (tasks/get)
        why = await cancel_owned("bob", "tasks", task.task_id)  # a forged Cancel of Bob's
        assert why is not None and "no longer running" in why
        assert marker.read_text() == "started"  # Bob's try reached nothing
        assert await cancel_owned("ana", "tasks", task.task_id) is None
        await wait_until(lambda: marker.read_text() == "cancelled", what="the server's cancel")
        assert await open_tasks("ana") == []
    finally:
        await hub.close()


async def test_a_task_that_ended_on_the_server_leaves_the_list(monkeypatch, tmp_path):
    monkeypatch.setenv("BRAINCHAT_MCP_MAX_CALL_SECONDS", "2")
    marker = tmp_path / "research.txt"
    hub = McpHub([task_config(timeout=1)])
    await hub.start()
    try:
        args = {"topic": "eta", "steps": 12, "seconds": 0.3, "path": str(marker)}
        with owned_by(""), pytest.raises(ToolException, match="Still open on the server"):
            await tools(hub)["research"].ainvoke({**args, "refuse_cancel": True})
        assert len(await open_tasks("")) == 1
        # it finishes its 12 steps on the server (about 4 s): the next listing drops it
        for _ in range(100):
            if not await open_tasks(""):
                break
            await asyncio.sleep(0.2)
        assert await open_tasks("") == []
    finally:
        await hub.close()
