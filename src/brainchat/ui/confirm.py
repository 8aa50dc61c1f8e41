"""The approval dialog: why the tool asks, then Approve (once / for this conversation) or Reject."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.agent.approval import Answer, Ask
from brainchat.events import current_tool_call
from brainchat.ui import format as fmt
from brainchat.ui.run_end import AUTHOR

# answer -> (button label's key, icon, the key of what the dialog says afterwards)
_CHOICES: dict[Answer, tuple[str, str, str]] = {
    "once": ("confirm.approve_once", "check", "confirm.approved_once"),
    "always": ("confirm.approve_always", "check-check", "confirm.approved_always"),
    "reject": ("confirm.reject", "x", "confirm.rejected"),
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
                i18n.t("confirm.asks", icon=icon, name=name, why=ask.why(name))
                + "\n\n"
                + (f"```json\n{fmt.args_text(args)}\n```\n" if args else "")
                + i18n.t("confirm.question")
            ),
            actions=[_action(a, ask) for a in offered],
            author="brainchat",
            timeout=int(max(1, timeout)),
        )
        reply = await dialog.send()
        chosen = reply.get("name") if reply else None
        answer: Answer = chosen if chosen in offered else "reject"  # type: ignore[assignment]
        done = i18n.t(
            _CHOICES[answer][2] if ask.allow_always or answer == "reject" else "confirm.approved"
        )
        dialog.content = f"{done}: **{name}** `{fmt.dumps(args)}`"
        await dialog.update()
        return answer

    return confirm


def _action(answer: Answer, ask: Ask) -> cl.Action:
    key, icon, _ = _CHOICES[answer]
    if answer == "once" and not ask.allow_always:
        key = "confirm.approve"  # a destructive tool asks every time: "once" says nothing more
    label = i18n.t(key)
    return cl.Action(name=answer, payload={"answer": answer}, label=label, icon=icon)


async def ask_remove(question: str, keep_label: str, wait_s: int) -> bool:
    """Ask before removing something of the user's (a recording, a document): True only for an
    explicit Remove; Keep, no answer in `wait_s` or anything else keeps it."""
    dialog = cl.AskActionMessage(
        content=question,
        actions=[
            cl.Action(name="remove", payload={}, label=i18n.t("common.remove"), icon="trash-2"),
            cl.Action(name="keep", payload={}, label=keep_label, icon="x"),
        ],
        author=AUTHOR,
        timeout=wait_s,
    )
    reply: Any = await dialog.send()
    return bool(reply) and reply.get("name") == "remove"
