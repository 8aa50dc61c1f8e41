"""User-connected servers (a session opened elsewhere, as Chainlit does) and the shared hub."""

from __future__ import annotations

import sys

import pytest
from langchain_core.tools import ToolException
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from brainchat.tools.mcp_tools import tools_from_session
from brainchat.tools.registry import flags_of
from mcp_servers.helpers import EEG_LAB


async def test_tools_of_a_session_opened_by_someone_else():
    params = StdioServerParameters(command=sys.executable, args=[str(EEG_LAB)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found = await tools_from_session(
            "mine", session, reserved_names={"echo"}, read_only=True, timeout=1.0
        )
        tools = {t.name: t for t in found}
        assert "mine__echo" in tools and "add" in tools
        assert flags_of(tools["add"]).source == "mcp:mine" and flags_of(tools["add"]).read_only
        assert await tools["add"].ainvoke({"a": 2, "b": 5}) == "7"
        message = await tools["structured_weather"].ainvoke(
            {"type": "tool_call", "id": "1", "name": "structured_weather", "args": {"city": "Rome"}}
        )
        assert message.artifact["structured"]["city"] == "Rome"
        with pytest.raises(ToolException, match="was cancelled after .*still connected"):
            await tools["slow"].ainvoke({"seconds": 5})
        with pytest.raises(ToolException, match="returned an error: .*bad"):
            await tools["fail"].ainvoke({"message": "bad"})
    with pytest.raises(ToolException, match="MCP server 'mine'"):
        await tools["add"].ainvoke({"a": 1, "b": 1})  # the owner closed the session


async def test_a_session_that_cannot_list_tools_fails_clearly():
    class Broken:
        async def list_tools(self, **_):
            raise RuntimeError("server said no")

    with pytest.raises(Exception, match="server said no"):
        await tools_from_session("broken", Broken())
