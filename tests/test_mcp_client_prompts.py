"""A server's prompts as slash commands: listed with their arguments, rendered by the server (#25).

Real FastMCP server (tests/mcp_servers/study_notes.py) over stdio and streamable HTTP.
"""

from __future__ import annotations

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import parse_mcp_config
from mcp_servers.helpers import http_notes, lab_config, notes_config


async def _exercise(hub: McpHub) -> None:
    commands = {c.id: c for c in hub.prompt_commands()}
    assert set(commands) == {"mcp.notes.summarise", "mcp.notes.compare"}
    assert commands["mcp.notes.summarise"].usage() == "/mcp.notes.summarise subject=… [style=…]"
    assert "summary of one subject" in commands["mcp.notes.summarise"].description()
    turn = await hub.render_prompt("mcp.notes.summarise", "subject=S02 style='very short'")
    assert turn == "Summarise subject S02 in a very short style, citing notes://subject/S02."
    turn = await hub.render_prompt("mcp.notes.compare", "first=S01 second=S03")
    assert turn.splitlines()[0] == "[user] Compare subjects S01 and S03."
    assert "[assistant] Which measure should I compare?" in turn
    assert turn.endswith("[user] Band power in the mu band.")
    with pytest.raises(ValueError, match=r"missing subject; usage: /mcp.notes.summarise"):
        await hub.render_prompt("mcp.notes.summarise", "style=long")
    with pytest.raises(ValueError, match="has no argument 'colour'"):
        await hub.render_prompt("mcp.notes.compare", "first=S01 second=S02 colour=red")
    with pytest.raises(ToolException, match="no MCP prompt '/mcp.notes.nope'"):
        await hub.render_prompt("mcp.notes.nope", "")


async def test_prompts_over_stdio():
    hub = McpHub([notes_config(), lab_config()])  # the lab server has no prompts
    await hub.start()
    try:
        await _exercise(hub)
    finally:
        await hub.close()


async def test_prompts_over_streamable_http():
    with http_notes() as url:
        hub = McpHub(parse_mcp_config({"mcpServers": {"notes": {"url": url}}})[0])
        await hub.start()
        try:
            await _exercise(hub)
        finally:
            await hub.close()
