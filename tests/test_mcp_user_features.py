"""A server the user connects with the plug button brings its prompts and resources too (#25).

Chainlit opens the session (streamable HTTP here, as its plug button does) and hands it to
brainchat; the real FastMCP study-notes server offers resources, a template and prompts. The
agent reads the user's server's resources through the same two read-only tools as the
configured servers' (one pair reaching both), and its prompts are slash commands.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from brainchat.tools.registry import flags_of
from mcp_servers.helpers import http_notes, notes_config
from mcp_servers.study_notes import PROTOCOL

from support import collect, of, spec, write_fixture

RESOURCE_TOOLS = {"mcp_list_resources", "mcp_read_resource"}


@asynccontextmanager
async def plugged(url: str) -> AsyncIterator[ClientSession]:
    """The session Chainlit's plug button opens for a streamable-http server."""
    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as c:
        await c.initialize()
        yield c


def agent_session(server: Any, tmp_path: Path) -> Session:
    return Session(
        Settings(
            function_call_model=spec(server, "fc"),
            answer_model=spec(server, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
            search_backend="fixture",
            search_fixture=write_fixture(tmp_path / "fx.json"),
        )
    )


def tool_replies(server: Any) -> list[str]:
    """What the model was told about each tool call of the last run."""
    last = server.requests_for("fc")[-1]
    return [m["content"] for m in last.messages if m["role"] == "tool"]


async def test_a_plugged_servers_prompts_and_resources_reach_the_chat_and_the_agent(
    scripted_server, tmp_path
):
    s, session = scripted_server, agent_session(scripted_server, tmp_path)
    with http_notes() as url:
        async with plugged(url) as client:
            await session.connect_user_server("mine", client)

            commands = {c.id: c for c in session.mcp_prompt_commands()}
            assert set(commands) == {"mcp.mine.summarise", "mcp.mine.compare"}
            turn = await session.render_mcp_prompt("mcp.mine.summarise", "subject=S04")
            assert turn == "Summarise subject S04 in a short style, citing notes://subject/S04."
            with pytest.raises(ValueError, match="missing subject"):
                await session.render_mcp_prompt("mcp.mine.summarise", "")

            tools = {t.name: t for t in session.toolset().tools}
            assert RESOURCE_TOOLS <= set(tools), sorted(tools)
            assert flags_of(tools["mcp_read_resource"]).read_only
            s.queue(
                "fc",
                ToolCalls(
                    [
                        Call("mcp_read_resource", {"server": "mine", "uri": "notes://protocol"}),
                        Call("mcp_read_resource", {"server": "mine", "uri": "file:///etc/passwd"}),
                        Call("mcp_list_resources", {"server": "mine"}),
                    ]
                ),  # fmt: skip
                Text("enough"),
            )
            s.queue("ans", Text("The protocol is read."))
            events = await collect(session.ask("What is the recording protocol?"))
            replies = tool_replies(s)
            assert replies[0] == PROTOCOL
            assert "does not offer the resource" in replies[1]  # only what the server lists
            assert "notes://subject/{subject}" in replies[2]
            statuses = sorted(e.status for e in of(events, "tool_finished"))  # parallel reads
            assert statuses == ["error", "success", "success"], statuses

            session.remove_user_tools("mine")  # the plug button's disconnect
            assert session.mcp_prompt_commands() == []
            assert not RESOURCE_TOOLS & set(session.toolset().names())
            with pytest.raises(ToolException, match="no MCP prompt"):
                await session.render_mcp_prompt("mcp.mine.summarise", "subject=S04")


async def test_one_pair_of_resource_tools_reaches_configured_and_plugged_servers(
    scripted_server, tmp_path
):
    session = agent_session(scripted_server, tmp_path)
    hub = McpHub([notes_config()])  # a configured server with resources, over stdio
    await hub.start()
    try:
        session.use_configured_servers(lambda: hub.servers)
        session.use_configured_tools(hub.toolset(reserved_names=set(session.toolset().names())))
        with http_notes() as url:
            async with plugged(url) as client:
                await session.connect_user_server("mine", client)
                names = session.toolset().names()
                assert sorted(n for n in names if "resource" in n) == sorted(RESOURCE_TOOLS)
                read = {t.name: t for t in session.toolset().tools}["mcp_read_resource"]
                for server in ("notes", "mine"):
                    got = await read.ainvoke({"server": server, "uri": "notes://subject/S01"})
                    assert got.startswith("Subject S01: good signal"), (server, got)
                with pytest.raises(ToolException, match="servers with resources: mine, notes"):
                    await read.ainvoke({"server": "other", "uri": "notes://protocol"})
                prompts = {c.id for c in session.mcp_prompt_commands()}
                assert {"mcp.notes.summarise", "mcp.mine.summarise"} <= prompts
                session.remove_user_tools("mine")
                read = {t.name: t for t in session.toolset().tools}["mcp_read_resource"]
                with pytest.raises(ToolException, match="servers with resources: notes$"):
                    await read.ainvoke({"server": "mine", "uri": "notes://protocol"})
    finally:
        await hub.close()
