"""A conversation that outlives the process: what is saved with the thread, and the resume.

Saved in the thread's metadata under "brainchat_state" (ui/state.py writes it): the mode, the
panel's overrides, the usage totals and the EEG study's operation log. Chainlit stores the steps
(messages, tool calls, results, plots). On resume the model history is rebuilt from the steps and
handed to the session with the rest as one `Snapshot`, the study is replayed on its first use,
and a note (shown, not stored) says what was restored. Every function here takes the session,
never the conversation.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING, Any

import chainlit as cl
from chainlit.utils import utc_now

from brainchat import i18n
from brainchat.redact import get_logger, mask
from brainchat.session import Session, Snapshot, Turn
from brainchat.store.history import ThreadUsage, rebuild, turn_mark
from brainchat.ui import persistence
from brainchat.usage import reply_reserve

if TYPE_CHECKING:
    from brainchat.events import RunFinished

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


def attach(session: Session) -> None:
    """Give the session its user's data folder, and the study where to save trained models."""
    p = persistence.active()
    user = cl.context.session.user
    if p is None or user is None:
        return
    try:
        folder = p.data_dir(user.identifier)
        folder.mkdir(parents=True, exist_ok=True)
        models = p.models_dir(user.identifier, cl.context.session.thread_id)
        session.use_data_folder(folder, models, p.key)
    except (OSError, ValueError) as exc:
        log.warning("user data folder not set: %s", mask(str(exc)))


def restore(session: Session, thread: dict[str, Any], state: dict[str, Any]) -> None:
    """Rebuild the model history from the steps and restore the session with it and the saved
    state (the study's replay is queued); a saved value that no longer fits is logged."""
    windows = [m.context_window - reply_reserve(m) for m in session.settings.models.values()]
    history, turns = rebuild(list(thread.get("steps") or []), max(windows, default=8192))
    marks = [Turn(qid, n) for qid, n in turns]
    for problem in session.restore(Snapshot.from_saved(state, history, marks)):
        log.warning("%s", problem)


def add_note(session: Session, usage: ThreadUsage, thread: dict[str, Any]) -> str:
    """A message shown on resume only (added to what Chainlit sends, never stored); returns its
    id."""
    from brainchat.ui.render import AUTHOR

    mode = i18n.t(f"welcome.mode.{session.mode}")
    lines = [
        i18n.t("session.resumed.one", mode=mode, n=len(session.history) // 2),
        i18n.t("session.usage_so_far", usage=usage.text()),
    ]
    pending = session.study.pending
    if pending:
        from brainchat.eeg.study.replay import label

        steps = "; ".join(label(e) for e in pending)
        lines.append(i18n.t("session.study_pending", steps=steps))
    now = utc_now()
    note_id = str(uuid.uuid4())
    thread.setdefault("steps", []).append(
        {
            "id": note_id,
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
    )
    return note_id


_offers: set[asyncio.Future[None]] = set()  # kept until sent (asyncio holds tasks weakly)
OFFER_AFTER = 0.5  # seconds: after Chainlit has sent the page the thread it resumes


def offer_export(session: Session, note_id: str) -> None:
    """Under the resume note, the Export button, when the thread has a study to export: a
    page's buttons are not stored with the thread, and the button under the answer that changed
    the study is gone after a reload. Sent once Chainlit has sent the thread (the note exists)."""
    if not (session.study.pending or session.study.log):
        return

    async def send() -> None:
        from brainchat.ui.render import export_button

        await asyncio.sleep(OFFER_AFTER)
        try:
            await export_button().send(for_id=note_id)
        except Exception:  # noqa: BLE001 - the page went again: nothing to offer it
            log.info("the export button could not be offered on resume")

    task = asyncio.ensure_future(send())
    _offers.add(task)
    task.add_done_callback(_offers.discard)


def mark_answer(renderer: Any, event: RunFinished, question_id: str | None) -> None:
    """Mark the answer message of a recorded turn, so a resume can rebuild the history."""
    if not event.answer or event.reason == "error" or not question_id or renderer.answer is None:
        return
    metadata = dict(renderer.answer.metadata or {})
    from brainchat.store.history import TURN_MARK

    # against the text the message will store (citations linked), not the streamed one
    metadata[TURN_MARK] = turn_mark(question_id, event.answer, renderer.shown_answer())
    renderer.answer.metadata = metadata
