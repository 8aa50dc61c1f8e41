"""The chat's slash commands: brainchat's own and the reachable MCP servers' prompts."""

from __future__ import annotations

from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.ui import knowledge, mcp_prompts, mcp_resources, mcp_tasks, recordings

COMMANDS = [
    {
        "id": "tools",
        "description": "List the agent's tools, MCP servers and what failed to load",
        "icon": "wrench",
        "button": False,
        "persistent": False,
    },
    {
        "id": "connect",
        "description": "Add a model connection: a server's base URL and API key",
        "icon": "plug",
        "button": False,
        "persistent": False,
    },
    recordings.COMMAND,  # /files: one's recordings, with Remove
    knowledge.COMMAND,  # /knowledge: one's documents, with Remove (#41)
    mcp_resources.COMMAND,  # /resource
    mcp_tasks.COMMAND,  # /tasks: MCP server tasks still running, with Cancel (#43)
]


def _localized(command: dict[str, Any]) -> dict[str, Any]:
    """A command of brainchat's own with its description in the user's language."""
    key = f"commands.{command['id']}"
    if key in i18n.table():
        return {**command, "description": i18n.t(key)}
    return command


async def send(session: Any) -> None:
    """The command menu, sent at the start and again when a plug-button server connects or
    leaves (its prompts come and go with it)."""
    own = [_localized(c) for c in COMMANDS]
    commands = own + mcp_prompts.commands(session)
    await cl.context.emitter.set_commands(commands)  # type: ignore[arg-type]
