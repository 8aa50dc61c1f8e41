"""A conversation that outlives the process: what is saved with the thread, and the resume.

Saved in the thread's metadata under "brainchat_state": the mode, the panel's overrides, the
usage totals and the EEG study's operation log. Chainlit stores the steps (messages, tool calls,
results, plots). On resume the model history is rebuilt from the steps, the study is replayed
on its first use, and a note (shown, not stored) says what was restored.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import chainlit as cl
from chainlit.utils import utc_now

from brainchat.redact import get_logger, mask
from brainchat.store.history import ThreadUsage, rebuild, turn_mark
from brainchat.ui import persistence
from brainchat.usage import reply_reserve

if TYPE_CHECKING:
    from brainchat.events import RunFinished
    from brainchat.ui.conversation import Conversation

log = get_logger("brainchat.ui")


def thread_state(thread: dict[str, Any], key: str) -> dict[str, Any]:
    metadata = thread.get("metadata") or {}
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError:
            metadata = {}
    state = metadata.get(key) if isinstance(metadata, dict) else None
    return state if isinstance(state, dict) else {}


def attach(conv: Conversation) -> None:
    """Give the session its user's data folder, and the study where to save trained models."""
    p = persistence.active()
    user = cl.context.session.user
    if p is None or user is None:
        return
    s = conv.session
    try:
        folder = p.data_dir(user.identifier)
        folder.mkdir(parents=True, exist_ok=True)
        s.base_settings = replace(s.base_settings, data_dir=folder)
        s.settings = replace(s.settings, data_dir=folder)
        s.study.model_dir = p.models_dir(user.identifier, cl.context.session.thread_id)
        s.study.key = p.key
    except (OSError, ValueError) as exc:
        log.warning("user data folder not set: %s", mask(str(exc)))


def restore(conv: Conversation, thread: dict[str, Any], state: dict[str, Any]) -> None:
    """Rebuild the model history from the steps, and queue the study's replay."""
    s = conv.session
    windows = [m.context_window - reply_reserve(m) for m in s.settings.models.values()]
    history, turns = rebuild(list(thread.get("steps") or []), max(windows, default=8192))
    from brainchat.session import Turn

    s.history = history
    s.turns = [Turn(qid, n) for qid, n in turns]
    conv.usage = ThreadUsage.from_dict(state.get("usage"))
    study = state.get("study")
    if isinstance(study, list) and study and all(isinstance(e, dict) and "op" in e for e in study):
        s.study.pending = list(study)
    conv.titled = bool(state.get("titled"))
    uploads = state.get("uploads")
    if isinstance(uploads, list):
        s.study.uploads = [str(u) for u in uploads]
    thread.setdefault("steps", []).append(_note_step(conv, thread, len(history) // 2))


def _note_step(conv: Conversation, thread: dict[str, Any], turns: int) -> dict[str, Any]:
    """A message shown on resume only (added to what Chainlit sends, never stored)."""
    from brainchat.ui.render import AUTHOR

    s = conv.session
    lines = [
        f"↩️ **Conversation resumed** in **{s.mode.capitalize()} mode**; the models see the "
        f"last {turns} answered turn(s).",
        f"Usage so far: {conv.usage.text()}.",
    ]
    if s.study.pending:
        from brainchat.eeg.replay import label

        steps = "; ".join(label(e) for e in s.study.pending)
        lines.append(f"EEG study ({steps}): restored at the first EEG tool call.")
    now = utc_now()
    return {
        "id": str(uuid.uuid4()),
        "threadId": thread.get("id"),
        "parentId": None,
        "type": "assistant_message",
        "name": AUTHOR,
        "output": "\n\n".join(lines),
        "createdAt": now,
        "start": now,
        "end": now,
        "metadata": {},
        "streaming": False,
        "isError": False,
        "waitForAnswer": False,
    }


def mark_answer(renderer: Any, event: RunFinished, question_id: str | None) -> None:
    """Mark the answer message of a recorded turn, so a resume can rebuild the history."""
    if not event.answer or event.reason == "error" or not question_id or renderer.answer is None:
        return
    metadata = dict(renderer.answer.metadata or {})
    from brainchat.store.history import TURN_MARK

    # against the text the message will store (citations linked), not the streamed one
    metadata[TURN_MARK] = turn_mark(question_id, event.answer, renderer.shown_answer())
    renderer.answer.metadata = metadata


def snapshot(conv: Conversation) -> dict[str, Any]:
    s = conv.session
    out: dict[str, Any] = {
        "mode": s.mode,
        "overrides": dict(s.overrides),
        "custom_ids": dict(conv.custom_ids),
        "usage": conv.usage.to_dict(),
        "titled": conv.titled,
    }
    study = s.study
    out["study"] = list(study.pending) if study.pending else list(study.log)
    out["uploads"] = list(study.uploads)
    return out


async def save(conv: Conversation, key: str) -> None:
    """Write the snapshot to the thread now (once the thread exists): a crash keeps it."""
    from chainlit.data import get_data_layer

    session = cl.context.session
    layer = get_data_layer()
    if layer is None or not session.has_first_interaction:
        return
    try:
        await layer.update_thread(session.thread_id, metadata={key: snapshot(conv)})
    except Exception as exc:  # noqa: BLE001 - saving never breaks the chat
        log.warning("conversation state not saved: %s", mask(str(exc)))
