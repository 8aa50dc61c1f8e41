"""A server's resources: listed and read by the agent through two read-only tools (#25).

Real FastMCP server (tests/mcp_servers/study_notes.py) over stdio and streamable HTTP.
"""

from __future__ import annotations

import pytest
from langchain_core.tools import ToolException

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import parse_mcp_config
from brainchat.tools.registry import flags_of
from mcp_servers.helpers import http_notes, lab_config, notes_config
from mcp_servers.study_notes import PROTOCOL

from support import collect, of, spec


async def _exercise(hub: McpHub) -> None:
    tools = {t.name: t for t in hub.toolset().tools}
    listing, read = tools["mcp_list_resources"], tools["mcp_read_resource"]
    assert flags_of(read).read_only and not flags_of(read).ask_first
    listed = await listing.ainvoke({"server": "notes"})
    assert "notes://protocol" in listed and "notes://subject/{subject}" in listed
    assert await read.ainvoke({"server": "notes", "uri": "notes://protocol"}) == PROTOCOL
    note = await read.ainvoke({"server": "notes", "uri": "notes://subject/S02"})
    assert note.startswith("Subject S02: good signal")
    logo = await read.ainvoke({"server": "notes", "uri": "notes://logo.png"})
    assert logo == "[binary resource notes://logo.png (image/png, 72 bytes)]"
    big = await read.ainvoke({"server": "notes", "uri": "notes://big"})
    assert big.startswith("BIG-START") and "BIG-END" not in big
    assert "[truncated:" in big and len(big) < 17_000
    for uri in ("file:///etc/passwd", "notes://subject/S01/../../secret", "http://127.0.0.1/"):
        with pytest.raises(ToolException, match="does not offer the resource"):
            await read.ainvoke({"server": "notes", "uri": uri})
    with pytest.raises(ToolException, match="servers with resources: notes"):
        await listing.ainvoke({"server": "nope"})


async def test_resources_over_stdio_through_the_agent_tools():
    hub = McpHub([notes_config(), lab_config()])
    await hub.start()
    try:
        await _exercise(hub)
        assert (await hub.resources("notes"))[0].uri == "notes://protocol"
    finally:
        await hub.close()


async def test_resources_over_streamable_http():
    with http_notes() as url:
        hub = McpHub(parse_mcp_config({"mcpServers": {"notes": {"url": url}}})[0])
        await hub.start()
        try:
            assert hub.status()[0]["state"] == "connected", hub.status()
            await _exercise(hub)
        finally:
            await hub.close()


async def test_a_hub_without_resource_servers_offers_no_resource_tools():
    hub = McpHub([lab_config()])
    await hub.start()
    try:
        names = {t.name for t in hub.toolset().tools}
        assert "add" in names and not names & {"mcp_list_resources", "mcp_read_resource"}
    finally:
        await hub.close()


async def test_the_agent_reads_a_resource_and_the_model_sees_its_text(scripted_server):
    s = scripted_server
    hub = McpHub([notes_config()])
    await hub.start()
    try:
        fc, ans = spec(s, "fc"), spec(s, "ans")
        agent = build_agent(
            make_chat_model(fc, "function_call"),
            make_chat_model(ans, "answer"),
            hub.toolset().tools,
            specs={"function_call": fc, "answer": ans},
        )
        s.queue(
            "fc",
            ToolCalls([Call("mcp_read_resource", {"server": "notes", "uri": "notes://protocol"})]),
            Text("Enough."),
        )
        s.queue("ans", Text("A 4 s cue."))
        events = await collect(agent.run("What is the protocol?"))
    finally:
        await hub.close()
    finished = of(events, "tool_finished")
    assert [e.status for e in finished] == ["success"]
    tool_messages = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"]
    assert PROTOCOL in tool_messages[0]["content"]
