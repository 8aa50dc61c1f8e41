"""Regenerate the last answer: the same question, over the same conversation, answered again.

What it does, and why (the issue left it open):
- The new answer comes below the old one, which stays on the page (as ChatGPT keeps "1/2"):
  what was read is not taken away. The models' history keeps only the newest: the question's turn
  is rewound as for an edited message, so the rerun sees exactly the conversation the first run
  saw, and a reopened thread keeps the later answer (store/history.answered_turns).
- Only the last answer offers it (its button moves to each new answer): regenerating an older
  one would silently drop the turns after it.
- In Agent mode the question runs as a new agent turn. Every step that needs approval asks
  again (the run's own approval flow; nothing is replayed behind it), and a first answer whose
  steps changed the study says that the study keeps what they did (it is not rolled back).
- It runs as a message does: the Stop button (and Esc) stop it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl
from chainlit.context import get_context

from brainchat import i18n
from brainchat.ui.render import AUTHOR

ACTION = "regenerate"
KEY = "brainchat_regenerate"  # the session's Regenerate button now shown (under the last answer)
RunTurn = Callable[[Any, str, str | None], Awaitable[None]]


def button(message_id: str) -> cl.Action:
    return cl.Action(
        name=ACTION,
        payload={"message_id": message_id},
        label=i18n.t("progress.regenerate"),
        icon="refresh-cw",
        tooltip=i18n.t("progress.regenerate_tip"),
    )


async def offer(renderer: Any, message_id: str | None) -> None:
    """Put Regenerate under this run's answer, taking it from the answer before."""
    answer = getattr(renderer, "answer", None)
    if answer is None or not message_id or not renderer.answer_text.strip():
        return
    before: cl.Action | None = cl.user_session.get(KEY)
    if before is not None:
        try:
            await before.remove()
        except Exception:  # noqa: BLE001 - a page gone: the new button is what matters
            pass
    action = button(message_id)
    answer.actions = [*answer.actions, action]
    await action.send(for_id=answer.id)  # the button alone: the answer and its elements stay
    cl.user_session.set(KEY, action)


async def again(conv: Any, payload: dict[str, Any], run_turn: RunTurn) -> None:
    """The button was pressed: the question runs again as a turn the Stop button stops."""
    message_id = str(payload.get("message_id") or "")
    session = conv.session
    if conv.renderer is not None and not conv.renderer.finished:
        await cl.Message(content=i18n.t("progress.regenerate_busy"), author=AUTHOR).send()
        return
    turns = session.transcript.turns
    if (
        not turns
        or turns[-1].message_id != message_id
        or turns[-1].history_len >= len(session.history)
    ):  # not the last question, or one that has no answer to do again
        await cl.Message(content=i18n.t("progress.regenerate_stale"), author=AUTHOR).send()
        return
    question = str(session.history[turns[-1].history_len].content)  # as the models got it
    removed = session.rewind(message_id)
    context = get_context()
    task = asyncio.ensure_future(_run(conv, question, message_id, run_turn, removed))
    context.session.current_task = task  # the Stop button stops it, as a message's turn


async def _run(conv: Any, question: str, message_id: str, run_turn: RunTurn, removed: Any) -> None:
    emitter = cl.context.emitter
    await emitter.task_start()
    try:
        if any(t.changed_study for t in removed):
            await cl.Message(content=i18n.t("progress.regenerate_study"), author=AUTHOR).send()
        await run_turn(conv, question, message_id)
    except asyncio.CancelledError:
        pass  # stopped: run_turn has shown what was done
    finally:
        await cl.context.emitter.task_end()
