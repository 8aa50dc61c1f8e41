"""An MCP server asks to use the user's model (sampling): the approval dialog, per server.

As VS Code asks: Allow once, Always allow this server (for the rest of this conversation), or
Deny. The dialog shows the server, the tool being run, the token limit, the server's
instructions and its messages (masked, as text); no answer before the call's time runs out is
a denial. What was chosen then stays in the chat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.events import current_tool_call
from brainchat.redact import mask
from brainchat.tools.mcp_sampling import Approver, Decision, Request
from brainchat.ui.mcp_elicit import plain, quoted
from brainchat.ui.run_end import AUTHOR

Waiting = Callable[[str, bool], Awaitable[None]]  # (call_id, waiting) -> the tool step says so
ALWAYS_KEY = "mcp_sampling_always"  # the servers this conversation always allows
_CHOICES: dict[Decision, tuple[str, str, str]] = {
    "once": ("mcp_client.allow_once", "check", "mcp_client.allowed_once"),
    "always": ("mcp_client.allow_always", "check-check", "mcp_client.allowed_always"),
    "deny": ("mcp_client.deny", "x", "mcp_client.denied"),
}


def make_approver(waiting: Waiting | None = None) -> Approver:
    """The `Approver` of one chat turn: the dialog in this conversation; `waiting(call_id, on)`
    makes the calling tool's step say it waits for the user meanwhile."""

    async def approve(request: Request) -> Decision:
        always: list[str] = cl.user_session.get(ALWAYS_KEY) or []
        if request.server in always:
            return "always"
        call_id, _ = current_tool_call()  # the calling tool's (the request runs in its context)
        if waiting is not None:
            await waiting(call_id, True)
        try:
            return await _ask(request, always)
        finally:
            if waiting is not None:
                await waiting(call_id, False)

    return approve


async def _ask(request: Request, always: list[str]) -> Decision:
    """The dialog; what was chosen stays in the chat."""
    dialog = cl.AskActionMessage(
        content=question(request),
        actions=[
            cl.Action(name=d, payload={"decision": d}, label=i18n.t(key), icon=icon)
            for d, (key, icon, _) in _CHOICES.items()
        ],
        author=AUTHOR,
        timeout=int(max(1, request.timeout)),
    )
    reply: Any = await dialog.send()
    chosen = reply.get("name") if reply else None
    decision: Decision = chosen if chosen in _CHOICES else "deny"  # type: ignore[assignment]
    if decision == "always":
        cl.user_session.set(ALWAYS_KEY, [*always, request.server])
    dialog.content = i18n.t(_CHOICES[decision][2], server=plain(request.server))
    await dialog.update()
    return decision


def question(request: Request) -> str:
    """What the dialog says: who asks, for what, with which words."""
    parts = [
        i18n.t(
            "mcp_client.sampling_asks",
            server=plain(request.server),
            tool=plain(request.tool),
            max_tokens=request.max_tokens,
        )
    ]
    if request.system:
        parts.append(i18n.t("mcp_client.sampling_system") + "\n" + quoted(mask(request.system)))
    parts.append(i18n.t("mcp_client.sampling_messages") + "\n" + quoted(mask(request.preview())))
    parts.append(i18n.t("mcp_client.sampling_question"))
    return "\n\n".join(parts)
