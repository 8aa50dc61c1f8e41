"""User-connected servers (a session opened elsewhere, as Chainlit does) and the shared hub."""

from __future__ import annotations

import json
import sys

import pytest
from langchain_core.tools import ToolException
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from brainchat.tools import mcp as mcp_module
from brainchat.tools.mcp import SessionMcpServers, close_shared_hub, format_status, shared_hub
from brainchat.tools.registry import flags_of
from mcp_servers.helpers import EEG_LAB


async def test_tools_of_a_session_opened_by_someone_else():
    params = StdioServerParameters(command=sys.executable, args=[str(EEG_LAB)])
    user = SessionMcpServers()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await user.add("mine", session, reserved_names={"echo"}, read_only=True, timeout=1.0)
        tools = {t.name: t for t in user.tools()}
        assert "mine__echo" in tools and "add" in tools
        assert flags_of(tools["add"]).source == "mcp:mine" and flags_of(tools["add"]).read_only
        assert await tools["add"].ainvoke({"a": 2, "b": 5}) == "7"
        message = await tools["structured_weather"].ainvoke(
            {"type": "tool_call", "id": "1", "name": "structured_weather", "args": {"city": "Rome"}}
        )
        assert message.artifact["structured"]["city"] == "Rome"
        with pytest.raises(ToolException, match="did not answer within 1 s"):
            await tools["slow"].ainvoke({"seconds": 5})
        with pytest.raises(ToolException, match="returned an error: .*bad"):
            await tools["fail"].ainvoke({"message": "bad"})
        text = format_status(user.status())
        assert "**mine** (connected, user)" in text and "`mine__echo`" in text
    with pytest.raises(ToolException, match="MCP server 'mine'"):
        await tools["add"].ainvoke({"a": 1, "b": 1})  # the owner closed the session
    user.remove("mine")
    assert user.tools() == [] and user.status() == []


async def test_a_session_that_cannot_list_tools_is_a_failed_row():
    class Broken:
        async def list_tools(self, **_):
            raise RuntimeError("server said no")

    user = SessionMcpServers()
    await user.add("broken", Broken())
    assert user.tools() == []
    assert user.status()[0]["state"] == "failed" and "server said no" in user.status()[0]["error"]


async def test_shared_hub_reads_mcp_config_once(tmp_path, monkeypatch):
    path = tmp_path / "servers.json"
    entry = {"command": sys.executable, "args": [str(EEG_LAB)]}
    path.write_text(json.dumps({"mcpServers": {"lab": entry, "bad": {"url": "nope"}}}))
    monkeypatch.setenv("MCP_CONFIG", str(path))
    monkeypatch.setattr(mcp_module, "_shared", None)
    try:
        hub = await shared_hub()
        assert await shared_hub() is hub
        assert hub.status()[0]["state"] == "connected"
        assert [f.source for f in hub.failures()] == ["mcp:bad"]
        assert "'url' must be an http(s) URL" in format_status(hub.status(), hub.failures())
    finally:
        await close_shared_hub()
