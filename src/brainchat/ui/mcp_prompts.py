"""MCP servers' prompts as slash commands in the chat.

The configured servers' prompts, and those of servers connected with the plug button, join brainchat's commands as `/mcp.SERVER.PROMPT`; choosing one
and typing its arguments as `key=value` (or typing the whole line) renders the prompt on its
server, shows what it rendered, and sends that as the user's turn. Missing or unknown arguments
get the command's usage back, and nothing is sent.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.redact import get_logger, mask
from brainchat.tools import mcp_prompts as prompts
from brainchat.tools.mcp_prompts import PREFIX
from brainchat.ui import mcp_resources
from brainchat.ui.render import AUTHOR

log = get_logger("brainchat.ui")
SENT_KEY = "mcp_prompt_commands_sent"  # the prompt commands the page's menu has


def commands(session: Any) -> list[dict[str, Any]]:
    """The prompts of the session's reachable servers as Chainlit commands."""
    try:
        found = session.mcp_prompt_commands()
    except Exception:  # noqa: BLE001 - the chat's own commands still work
        log.exception("MCP prompts not listed")
        return []
    cl.user_session.set(SENT_KEY, [c.id for c in found])
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


def stale(session: Any) -> bool:
    """Whether the servers' prompts changed (prompts/list_changed) since the page was sent them."""
    try:
        now = [c.id for c in session.mcp_prompt_commands()]
    except Exception:  # noqa: BLE001 - listed again with the next menu
        return False
    return now != cl.user_session.get(SENT_KEY)


def match(command: str | None, text: str) -> tuple[str, str] | None:
    """(command id, argument text) of a prompt command, chosen from the menu or typed."""
    if command and command.startswith(PREFIX):
        return command, text
    word, _, rest = text.strip().partition(" ")
    if word.startswith("/" + PREFIX):
        return word[1:], rest
    return None


async def render(session: Any, command_id: str, args: str) -> str | None:
    """The prompt rendered by its server and shown, or None (the reason is shown instead, or the
    server's values for a required argument left out, as choices)."""
    if await offer_choices(session, command_id, args):
        return None
    try:
        turn = str(await session.render_mcp_prompt(command_id, args))
    except Exception as exc:  # noqa: BLE001 - bad arguments or a server error: said, not raised
        await cl.Message(content=f"⚠️ `/{mask(command_id)}`: {mask(str(exc))}", author=AUTHOR).send()
        return None
    quoted = "\n".join(f"> {line}" for line in mask(turn).splitlines())
    said = i18n.t("mcp.prompt_sent", command=command_id, quoted=quoted)
    await cl.Message(content=said, author=AUTHOR).send()
    return turn


CHOICE = "mcp_prompt_choice"  # the action of a value the server suggested
MAX_BUTTONS = 20
RunTurn = Callable[[Any, str, str | None, str], Awaitable[None]]


async def offer_choices(session: Any, command_id: str, args: str) -> bool:
    """A prompt command without one of its required arguments: its server's completions
    (completion/complete) of the first one, as buttons (True); False when all are given, or the
    server suggests nothing (the usage is said as before)."""
    found = {c.id: c for c in session.mcp_prompt_commands()}
    command = found.get(command_id)
    server = session.mcp_servers().get(command.server) if command else None
    if command is None or server is None:
        return False
    try:
        given = prompts.parse_given(command, args)
        missing = prompts.missing_arguments(command, given)
        if not missing:
            return False
        values = await prompts.complete(server, command, missing[0], "", given)
    except Exception:  # noqa: BLE001 - the render says what is wrong
        return False
    if not values:
        return False
    actions = [
        cl.Action(
            name=CHOICE,
            payload={"command": command_id, "args": args, "argument": missing[0], "value": v},
            label=v[:60],
        )
        for v in values[:MAX_BUTTONS]
    ]
    shown = ", ".join(f"`{mask(v)}`" for v in values[:MAX_BUTTONS])
    text = i18n.t("mcp_client.choices", argument=missing[0], command=command_id, values=shown)
    await cl.Message(content=text, actions=actions, author=AUTHOR).send()
    return True


async def choose(conv: Any, payload: dict[str, Any], run_turn: RunTurn) -> None:
    """A suggested value clicked: it joins the arguments; the next missing one is offered, or
    the prompt is rendered and sent as the user's turn."""
    command_id, argument = str(payload.get("command")), str(payload.get("argument"))
    args = f"{payload.get('args') or ''} {argument}={shlex.quote(str(payload.get('value')))}"
    turn = await render(conv.session, command_id, args.strip())
    if turn is not None:
        await run_turn(conv, turn, None, mcp_resources.take_attached())
