"""The approval dialog for destructive tools: Approve / Reject buttons; Reject or timeout -> False."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl

from brainchat.ui import format as fmt


def make_confirm(timeout: float) -> Callable[[str, dict[str, Any]], Awaitable[bool]]:
    """A `confirm(tool_name, args)` callback for `Session.ask` that asks the user in the chat."""

    async def confirm(name: str, args: dict[str, Any]) -> bool:
        ask = cl.AskActionMessage(
            content=(
                f"⚠️ The agent wants to run **{name}**, which changes or discards data.\n\n"
                f"```json\n{fmt.args_text(args)}\n```\nApprove it?"
            ),
            actions=[
                cl.Action(name="approve", payload={"ok": True}, label="Approve", icon="check"),
                cl.Action(name="reject", payload={"ok": False}, label="Reject", icon="x"),
            ],
            author="brainchat",
            timeout=int(max(1, timeout)),
        )
        reply = await ask.send()
        approved = bool(reply and reply.get("name") == "approve")
        ask.content = (
            f"{'✅ Approved' if approved else '🚫 Rejected'}: **{name}** `{fmt.dumps(args)}`"
        )
        await ask.update()
        return approved

    return confirm
