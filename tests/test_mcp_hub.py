"""Real MCP servers over stdio through McpHub: tools, kept sessions, schemas, names, results."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest

from brainchat import events
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_call_limit import max_call_seconds
from brainchat.tools.mcp_config import ToolOverride
from brainchat.tools.mcp_tools import TIMEOUT_GRACE
from brainchat.tools.registry import flags_of
from brainchat.ui.format import toolset_text
from mcp_servers.helpers import lab_config, time_config


@pytest.fixture
async def hub():
    """The FastMCP test server and mcp-server-time, started together."""
    hub = McpHub(
        [
            lab_config(
                read_only=True, tools={"crash": ToolOverride(read_only=False, destructive=True)}
            ),
            time_config(),
        ]
    )
    await hub.start()
    yield hub
    await hub.close()


def by_name(toolset):
    return {t.name: t for t in toolset.tools}


async def test_lists_tools_of_both_servers_with_their_schemas_and_flags(hub):
    assert [(r["server"], r["state"]) for r in hub.status()] == [
        ("lab", "connected"),
        ("time", "connected"),
    ]
    toolset = hub.toolset()
    tools = by_name(toolset)
    assert {"add", "echo", "pid", "slow", "crash", "fail", "structured_weather"} <= set(tools)
    assert {"get_current_time", "convert_time"} <= set(tools)
    assert toolset.failures == []
    add = tools["add"]
    assert add.args_schema["properties"].keys() == {"a", "b"}
    assert set(add.args_schema["required"]) == {"a", "b"}
    assert (
        flags_of(add).source == "mcp:lab"
        and flags_of(add).read_only
        # the longest progress may extend a call (#43; 30 s idle is the MCP default), then the
        # agent's grace
        and flags_of(add).timeout == max(30.0, max_call_seconds()) + TIMEOUT_GRACE
    )
    assert flags_of(tools["crash"]).destructive and not flags_of(tools["crash"]).read_only
    assert flags_of(tools["get_current_time"]).source == "mcp:time"
    described = {row["name"]: row for row in toolset.describe()}
    assert described["add"]["args_schema"]["properties"]["a"]["type"] == "integer"


async def test_one_process_serves_many_calls(hub):
    tools = by_name(hub.toolset())
    pids = {await tools["pid"].ainvoke({}) for _ in range(5)}
    sums = await asyncio.gather(*(tools["add"].ainvoke({"a": i, "b": 1}) for i in range(10)))
    pids.add(await tools["pid"].ainvoke({}))
    assert len(pids) == 1 and sums == [str(i + 1) for i in range(10)]


async def test_third_party_time_server(hub):
    tools = by_name(hub.toolset())
    text = await tools["get_current_time"].ainvoke({"timezone": "UTC"})
    data = json.loads(text)
    assert data["timezone"] == "UTC"
    assert (
        abs(
            (datetime.fromisoformat(data["datetime"]) - datetime.now().astimezone()).total_seconds()
        )
        < 120
    )
    converted = json.loads(
        await tools["convert_time"].ainvoke(
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
    )
    assert converted["target"]["datetime"].endswith("21:00:00+09:00")


async def test_structured_content_is_compact_text_for_the_model_and_an_artifact_for_the_ui(hub):
    tool = by_name(hub.toolset())["structured_weather"]
    message = await tool.ainvoke(
        {"type": "tool_call", "id": "c1", "name": tool.name, "args": {"city": "Oslo"}}
    )
    assert message.content == '{"city":"Oslo","temperature_c":21.5,"conditions":"sunny"}'
    assert message.artifact["structured"] == {
        "city": "Oslo",
        "temperature_c": 21.5,
        "conditions": "sunny",
    }
    assert message.artifact["server"] == "lab" and message.artifact["tool"] == "structured_weather"


async def test_image_content_is_noted_for_the_model_and_sent_as_a_tool_image(hub):
    tool = by_name(hub.toolset())["red_dot"]
    queue = events.EventQueue()
    token, call = queue.bind(), events.set_tool_call("call-7", "red_dot")
    try:
        text = await tool.ainvoke({})
    finally:
        events.unbind(token)
    assert text.startswith("[image image/png")
    image = queue.queue.get_nowait()
    assert isinstance(image, events.ToolImage) and image.call_id == "call-7"
    assert image.png.startswith(b"\x89PNG")
    del call


async def test_name_clashes_with_local_tools_and_between_servers_get_a_server_prefix():
    hub = McpHub([lab_config("lab"), lab_config("lab2")])
    await hub.start()
    try:
        names = hub.toolset(reserved_names={"web_search", "echo"}).names()
        assert "lab__add" in names and "lab2__add" in names and "add" not in names
        assert "lab__echo" in names and "echo" not in names
        lone = McpHub([lab_config("solo")])
        lone.servers["solo"].tools = hub.servers["lab"].tools
        assert (
            "solo__echo" in lone.toolset({"echo"}).names()
            and "add" in lone.toolset({"echo"}).names()
        )
        tools = by_name(hub.toolset())
        assert await tools["lab2__add"].ainvoke({"a": 1, "b": 2}) == "3"
        assert "MCP server 'lab2'" in tools["lab2__add"].description
    finally:
        await hub.close()


async def test_error_result_is_a_tool_exception_and_the_server_stays_healthy(hub):
    from langchain_core.tools import ToolException

    tools = by_name(hub.toolset())
    with pytest.raises(
        ToolException, match="MCP server 'lab', tool 'fail' returned an error: .*boom"
    ):
        await tools["fail"].ainvoke({"message": "boom"})
    assert hub.status()[0]["state"] == "connected"
    assert await tools["echo"].ainvoke({"text": "still here"}) == "still here"


async def test_status_markdown_lists_servers_tools_and_failures(hub):
    text = toolset_text(hub.toolset())  # what /tools shows
    assert "MCP server `lab`" in text and "`get_current_time`" in text


async def test_first_use_connects_a_server_that_was_never_started():
    hub = McpHub([lab_config()])
    try:
        conn = hub.servers["lab"]
        result = await conn.call("add", {"a": 2, "b": 2}, 10)
        assert result.content[0].text == "4" and conn.state == "connected"
    finally:
        await hub.close()
