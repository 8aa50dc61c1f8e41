"""One browser conversation's live state, and what of it is kept with the thread.

`cl.user_session` holds the live `Conversation` under "brainchat" and, under "brainchat_state",
the JSON state that Chainlit stores as thread metadata when a data layer exists, so a resume
(ui/resume.py) can restore it: the session's `Snapshot.saved()` part (mode, panel overrides, the
EEG study's log, uploads) and the UI's own (typed model ids, usage, whether the title was written).

This module imports no other brainchat.ui module that works on a conversation: the helpers
(modes, connect_form) take a `Conversation` from here, and ui/conversation.py wires them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import chainlit as cl

from brainchat.redact import get_logger, mask
from brainchat.session import Session
from brainchat.store.history import ThreadUsage
from brainchat.ui.language import CHOICE
from brainchat.ui.render import RunRenderer

log = get_logger("brainchat.ui")
KEY, SNAPSHOT_KEY = "brainchat", "brainchat_state"


@dataclass
class Conversation:
    session: Session
    custom_ids: dict[str, str] = field(default_factory=dict)  # typed model ids per role
    renderer: RunRenderer | None = None
    usage: ThreadUsage = field(default_factory=ThreadUsage)  # every turn of the thread
    titled: bool = False  # the model wrote the thread's title (BRAINCHAT_THREAD_TITLES=model)
    asking: bool = False  # the switch-to-Agent question is open
    connecting: bool = False  # the connection form is open
    connect_task: asyncio.Task[None] | None = None  # the form opened by a button

    async def save(self) -> None:
        """The state in the session and, once the thread exists, in the database."""
        await save(self)

    def keep(self) -> None:
        """The state in the session only (the turn under way saves it to the database)."""
        keep(self)


def current() -> Conversation | None:
    return cl.user_session.get(KEY)  # type: ignore[no-any-return]


def thread_state(conv: Conversation) -> dict[str, Any]:
    """What is kept with the thread (JSON): the session's saved part and the UI's own."""
    return {
        **conv.session.snapshot().saved(),
        "custom_ids": dict(conv.custom_ids),
        "usage": conv.usage.to_dict(),
        "titled": conv.titled,
        CHOICE: cl.user_session.get(CHOICE) or "auto",  # the panel's Interface language
    }


def restore_ui(conv: Conversation, state: dict[str, Any]) -> None:
    """The UI's own part of a stored thread's state (the session's is `Session.restore`'s)."""
    custom = state.get("custom_ids")
    if isinstance(custom, dict):
        conv.custom_ids.update({str(k): str(v) for k, v in custom.items()})
    conv.usage = ThreadUsage.from_dict(state.get("usage"))
    conv.titled = bool(state.get("titled"))
    if isinstance(language := state.get(CHOICE), str):
        cl.user_session.set(CHOICE, language)


def keep(conv: Conversation) -> None:
    cl.user_session.set(SNAPSHOT_KEY, thread_state(conv))


async def save(conv: Conversation) -> None:
    """Keep the state in the session and write it to the thread now (once the thread exists):
    a crash keeps it."""
    from chainlit.data import get_data_layer

    keep(conv)
    session = cl.context.session
    layer = get_data_layer()
    if layer is None or not session.has_first_interaction:
        return
    try:
        await layer.update_thread(session.thread_id, metadata={SNAPSHOT_KEY: thread_state(conv)})
    except Exception as exc:  # noqa: BLE001 - saving never breaks the chat
        log.warning("conversation state not saved: %s", mask(str(exc)))
