"""The test server over streamable HTTP and SSE, started by the test on a free port."""

from __future__ import annotations

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import parse_mcp_config
from mcp_servers.helpers import http_lab


@pytest.mark.parametrize("mode", ["--http", "--sse"])
async def test_http_server_tools_through_a_kept_session(mode):
    with http_lab(mode) as url:
        configs, failures = parse_mcp_config({"mcpServers": {"remote": {"url": url, "timeout": 2}}})
        assert failures == [] and configs[0].transport == (
            "sse" if mode == "--sse" else "streamable_http"
        )
        hub = McpHub(configs)
        await hub.start()
        try:
            assert hub.status()[0]["state"] == "connected", hub.status()
            tools = {t.name: t for t in hub.toolset().tools}
            assert await tools["add"].ainvoke({"a": 20, "b": 22}) == "42"
            message = await tools["structured_weather"].ainvoke(
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "structured_weather",
                    "args": {"city": "Paris"},
                }
            )
            assert message.artifact["structured"]["city"] == "Paris"
            pids = {await tools["pid"].ainvoke({}) for _ in range(3)}
            assert len(pids) == 1
            with pytest.raises(ToolException, match="was cancelled after .*still connected"):
                await tools["slow"].ainvoke({"seconds": 10})
            assert await tools["echo"].ainvoke({"text": "back"}) == "back"  # the session kept
            assert hub.status()[0]["restarts"] == 0  # #43: a timeout no longer restarts it
        finally:
            await hub.close()


async def test_http_server_that_goes_away_fails_calls_then_comes_back():
    with http_lab() as url:
        hub = McpHub(parse_mcp_config({"mcpServers": {"remote": {"url": url, "timeout": 5}}})[0])
        await hub.start()
        add = {t.name: t for t in hub.toolset().tools}["add"]
        assert await add.ainvoke({"a": 1, "b": 1}) == "2"
    try:
        with pytest.raises(ToolException, match="MCP server 'remote'"):
            await add.ainvoke({"a": 1, "b": 1})
        assert hub.status()[0]["state"] in ("unhealthy", "failed")
    finally:
        await hub.close()
