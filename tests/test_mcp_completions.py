"""Prompt arguments complete from the server (MCP completion/complete, #43): the server's values
for what is typed, with the arguments already given as context; a prompt command missing a
required argument offers the server's values as choices, and a choice goes on to the next one
or sends the prompt. Against tests/mcp_servers/changing_lab.py (FastMCP, stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from brainchat.tools import mcp_prompts
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig
from mcp_servers.helpers import notes_config

LAB = Path(__file__).parent / "mcp_servers" / "changing_lab.py"


def lab() -> McpServerConfig:
    return McpServerConfig(name="changing", command=sys.executable, args=[str(LAB)])


async def test_the_server_completes_an_argument_from_what_is_typed_and_the_others_given():
    async with McpHub([lab()]) as hub:
        conn = hub.servers["changing"]
        command = {c.prompt.name: c for c in hub.prompt_commands()}["analyse"]
        bands = await mcp_prompts.complete(conn, command, "band", "", {})
        m = await mcp_prompts.complete(conn, command, "band", "m", {})
        channels = await mcp_prompts.complete(conn, command, "channel", "", {"band": "mu"})
        c4 = await mcp_prompts.complete(conn, command, "channel", "C4", {"band": "mu"})
    assert bands == ["alpha", "beta", "delta", "gamma", "mu", "theta"]
    assert m == ["mu"]
    assert channels == ["C3", "C4", "Cz"] and c4 == ["C4"]


async def test_a_server_without_completions_offers_none():
    async with McpHub([notes_config()]) as hub:  # FastMCP with prompts, no completion handler
        conn = hub.servers["notes"]
        commands = hub.prompt_commands()
        found = [await mcp_prompts.complete(conn, c, a.name, "", {})
                 for c in commands for a in c.prompt.arguments or []]  # fmt: skip
    assert found and all(f == [] for f in found)


def test_missing_arguments_are_named_in_the_prompts_order_and_still_refused_whole():
    from mcp import types

    prompt = types.Prompt(
        name="analyse",
        arguments=[
            types.PromptArgument(name="band", required=True),
            types.PromptArgument(name="channel", required=True),
            types.PromptArgument(name="note", required=False),
        ],
    )
    command = mcp_prompts.PromptCommand("changing", prompt)
    given = mcp_prompts.parse_given(command, "channel=C4")
    assert given == {"channel": "C4"}
    assert mcp_prompts.missing_arguments(command, given) == ["band"]
    with pytest.raises(ValueError, match="missing band"):
        mcp_prompts.parse_arguments(command, "channel=C4")
