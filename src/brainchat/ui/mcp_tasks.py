"""MCP server tasks that outlive their turn (a cancel the server did not confirm): listed with
`/tasks`, and after a turn that leaves one, each with a Cancel button.

A task belongs to the user whose run started it (tools/mcp_tasks.py `owned_by`, bound around
the turn here); the list and the Cancel button reach that user's tasks only, whatever a button's
payload says (`cancel_owned` checks the owner), so with accounts no one sees or cancels another's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.redact import get_logger, mask
from brainchat.tools.mcp_tasks import OpenTask, cancel_owned, open_tasks, owned_by
from brainchat.ui.render import AUTHOR

COMMAND = {
    "id": "tasks",
    "description": "MCP server tasks still running: status, Cancel",
    "icon": "list-checks",
    "button": False,
    "persistent": False,
}
ACTION = "mcp_task_cancel"
log = get_logger("brainchat.ui")  # masks secrets in records
BUTTONS = 20  # Cancel buttons in one list (the table names every task)


def owner() -> str:
    """The signed-in user's identifier ("" without accounts: the one user)."""
    user = getattr(cl.context.session, "user", None)
    return str(user.identifier) if user is not None else ""


def owning() -> Any:
    """Around a turn: the tasks its calls start are this user's."""
    return owned_by(owner())


def _cell(text: str, limit: int = 80) -> str:
    return text.replace("|", "/").replace("\n", " ")[:limit]


def _rows(found: list[tuple[str, OpenTask]]) -> Iterator[str]:
    now = time.monotonic()
    for server, task in found:
        age = f"{round(now - task.started)} s"
        shown = task.task_id if len(task.task_id) <= 14 else task.task_id[:12] + "…"
        yield (
            f"| {_cell(server, 40)} | {_cell(task.tool, 40)} | `{_cell(shown)}` "
            f"| {_cell(task.status, 20)} | {_cell(mask(task.message), 48) or '-'} | {age} |"
        )


def table(found: list[tuple[str, OpenTask]], heading: str) -> str:
    head = "| {} | {} | {} | {} | {} | {} |\n|---|---|---|---|---|---:|".format(
        *(i18n.t(f"mcp_tasks.col_{c}") for c in ("server", "tool", "task", "status", "note", "age"))
    )
    return f"{heading}\n\n{head}\n" + "\n".join(_rows(found))


def _buttons(found: list[tuple[str, OpenTask]]) -> list[cl.Action]:
    return [
        cl.Action(
            name=ACTION,
            payload={"server": server, "task": task.task_id},
            label=i18n.t("mcp_tasks.cancel_button", tool=task.tool),
            icon="square",
        )
        for server, task in found[:BUTTONS]
    ]


async def command() -> None:
    """/tasks: the user's open tasks, refreshed, each with Cancel."""
    found = await open_tasks(owner())
    if not found:
        await cl.Message(content=i18n.t("mcp_tasks.none"), author=AUTHOR).send()
        return
    text = table(found, i18n.t("mcp_tasks.title", n=len(found)))
    await cl.Message(content=text, actions=_buttons(found), author=AUTHOR).send()


async def after_turn() -> None:
    """After a turn: the tasks it (or an earlier stopped one) left running, if any. Never
    raises: it also runs while a stopped turn unwinds, whose cancellation must go on."""
    try:
        found = await open_tasks(owner())
        if found:
            text = table(found, i18n.t("mcp_tasks.left_running", n=len(found)))
            await cl.Message(content=text, actions=_buttons(found), author=AUTHOR).send()
    except Exception:  # noqa: BLE001 - a page gone, a server gone: /tasks lists them later
        log.info("the tasks left running could not be listed")


async def on_cancel(payload: Any) -> None:
    """A Cancel button: tasks/cancel for this user's task, and what came of it."""
    payload = payload if isinstance(payload, dict) else {}
    server, task = str(payload.get("server", "")), str(payload.get("task", ""))
    why = await cancel_owned(owner(), server, task)
    key = "mcp_tasks.cancelled" if why is None else "mcp_tasks.not_cancelled"
    shown = task if len(task) <= 14 else task[:12] + "…"
    text = i18n.t(key, task=_cell(shown), server=_cell(server, 40), why=why or "")
    await cl.Message(content=text, author=AUTHOR).send()
