"""The approval dialog: why the tool asks, then Approve (once / for this conversation) or Reject."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl

from brainchat.agent.approval import Answer, Ask
from brainchat.events import current_tool_call
from brainchat.ui import format as fmt

# answer -> (button label, icon, what the dialog says afterwards)
_CHOICES: dict[Answer, tuple[str, str, str]] = {
    "once": ("Approve once", "check", "✅ Approved once"),
    "always": ("Approve for this conversation", "check-check", "✅ Approved for this conversation"),
    "reject": ("Reject", "x", "🚫 Rejected"),
}


Waiting = Callable[[str, bool], Awaitable[None]]  # (call_id, waiting) -> the tool step says so


def make_confirm(
    timeout: float, waiting: Waiting | None = None
) -> Callable[[str, dict[str, Any], Ask], Awaitable[Answer]]:
    """A `confirm(tool_name, args, ask)` callback for `Session.ask` that asks the user in the chat."""

    async def confirm(name: str, args: dict[str, Any], ask: Ask) -> Answer:
        call_id, _ = current_tool_call()  # set by the tool runner around this call
        if waiting is not None:
            await waiting(call_id, True)
        try:
            return await _ask(name, args, ask)
        finally:
            if waiting is not None:
                await waiting(call_id, False)

    async def _ask(name: str, args: dict[str, Any], ask: Ask) -> Answer:
        offered: list[Answer] = (
            ["once", "always", "reject"] if ask.allow_always else ["once", "reject"]
        )
        icon = "🔌" if ask.reason == "first_use" else "⚠️"
        dialog = cl.AskActionMessage(
            content=(
                f"{icon} The agent wants to run **{name}**. It asks first because {ask.why(name)}.\n\n"
                + (f"```json\n{fmt.args_text(args)}\n```\n" if args else "")
                + "Approve it?"
            ),
            actions=[_action(a, ask) for a in offered],
            author="brainchat",
            timeout=int(max(1, timeout)),
        )
        reply = await dialog.send()
        chosen = reply.get("name") if reply else None
        answer: Answer = chosen if chosen in offered else "reject"  # type: ignore[assignment]
        done = _CHOICES[answer][2] if ask.allow_always or answer == "reject" else "✅ Approved"
        dialog.content = f"{done}: **{name}** `{fmt.dumps(args)}`"
        await dialog.update()
        return answer

    return confirm


def _action(answer: Answer, ask: Ask) -> cl.Action:
    label, icon, _ = _CHOICES[answer]
    if answer == "once" and not ask.allow_always:
        label = "Approve"  # a destructive tool asks every time: "once" says nothing more
    return cl.Action(name=answer, payload={"answer": answer}, label=label, icon=icon)
