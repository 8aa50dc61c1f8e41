"""MCP servers' prompts as slash commands in the chat.

The configured servers' prompts, and those of servers connected with the plug button, join brainchat's commands as `/mcp.SERVER.PROMPT`; choosing one
and typing its arguments as `key=value` (or typing the whole line) renders the prompt on its
server, shows what it rendered, and sends that as the user's turn. Missing or unknown arguments
get the command's usage back, and nothing is sent.
"""

from __future__ import annotations

from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.redact import get_logger, mask
from brainchat.tools.mcp_prompts import PREFIX
from brainchat.ui.render import AUTHOR

log = get_logger("brainchat.ui")


def commands(session: Any) -> list[dict[str, Any]]:
    """The prompts of the session's reachable servers as Chainlit commands."""
    try:
        found = session.mcp_prompt_commands()
    except Exception:  # noqa: BLE001 - the chat's own commands still work
        log.exception("MCP prompts not listed")
        return []
    return [
        {
            "id": c.id,
            "description": c.description(),
            "icon": "message-square",
            "button": False,
            "persistent": False,
        }
        for c in found
    ]


def match(command: str | None, text: str) -> tuple[str, str] | None:
    """(command id, argument text) of a prompt command, chosen from the menu or typed."""
    if command and command.startswith(PREFIX):
        return command, text
    word, _, rest = text.strip().partition(" ")
    if word.startswith("/" + PREFIX):
        return word[1:], rest
    return None


async def render(session: Any, command_id: str, args: str) -> str | None:
    """The prompt rendered by its server and shown, or None (the reason is shown instead)."""
    try:
        turn = str(await session.render_mcp_prompt(command_id, args))
    except Exception as exc:  # noqa: BLE001 - bad arguments or a server error: said, not raised
        await cl.Message(content=f"⚠️ `/{mask(command_id)}`: {mask(str(exc))}", author=AUTHOR).send()
        return None
    quoted = "\n".join(f"> {line}" for line in mask(turn).splitlines())
    said = i18n.t("mcp.prompt_sent", command=command_id, quoted=quoted)
    await cl.Message(content=said, author=AUTHOR).send()
    return turn
