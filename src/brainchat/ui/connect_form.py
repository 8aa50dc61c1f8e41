"""The "Add a model connection" form: a small form of its own, not fields in the settings panel.

`public/elements/ConnectionForm.jsx`, sent with `cl.AskElementMessage`, asks for a provider name,
the server's base URL and its API key (a password box). Its answer is the reply to that question,
over the socket; Chainlit neither stores nor sends it back. The key is taken out of it at once,
remembered for masking, and handed to `connect.add`, which probes the server and keeps the
connection (key encrypted). A failed try says why (`connect.add`'s message) and opens the form
again with the name and the URL, never the key.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

import chainlit as cl

from brainchat import i18n, redact
from brainchat.redact import get_logger, mask
from brainchat.ui import connect, panel
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.ui.state import Conversation

log = get_logger("brainchat.ui")
FORM = "ConnectionForm"  # public/elements/ConnectionForm.jsx
ASK_TIMEOUT = 900  # seconds; an unanswered form is closed, nothing changes


def button() -> cl.Action:
    """The "Add a model connection" button under a welcome message (it calls `start`)."""
    label = i18n.t("connect.button")
    return cl.Action(name="add_connection", payload={}, label=label, icon="plug")


async def ask(conv: Conversation) -> None:
    """Open the form (once at a time) until a connection is added or the user cancels."""
    if conv.connecting:
        await cl.Message(content=i18n.t("connect.already_open"), author=AUTHOR).send()
        return
    conv.connecting = True
    try:
        await _until_connected(conv)
    finally:
        conv.connecting = False


def start(conv: Conversation) -> None:
    """Open the form from a button: in a task of its own, so the button's request ends at once."""
    conv.connect_task = asyncio.create_task(_from_button(conv))


async def _from_button(conv: Conversation) -> None:
    try:
        await ask(conv)
    except Exception as exc:  # noqa: BLE001 - a failed form never takes the chat down
        log.warning("connection form failed: %s: %s", type(exc).__name__, mask(str(exc)))
    finally:
        await cl.context.emitter.task_end()  # Chainlit restarts "the task" after each answer


async def _until_connected(conv: Conversation) -> None:
    name, url, intro = "", "", i18n.t("connect.intro")
    while True:
        reply = await _ask_once(intro, name, url)
        if reply is None:
            return
        name = str(reply.get("name") or "").strip()[:200]
        url = str(reply.get("base_url") or "").strip()[:2000]
        key = str(reply.pop("api_key", None) or "").strip()
        redact.remember(
            key, connect._user()
        )  # masked in logs and this user's output, even if it fails
        note = await cl.Message(
            content=i18n.t(
                "connect.asking", name=redact.show(name or i18n.t("connect.the_server"), 40)
            ),
            author=AUTHOR,
        ).send()
        added = await connect.add(conv.session, {connect.NAME: name, connect.URL: url}, key or None)
        await note.remove()
        if added:
            await panel.send_panel(conv.session, conv.custom_ids)  # its models in the pickers
            return
        # never a credential back into the page: no user info or query, nothing key-shaped
        name = "" if redact.looks_secret(name) else redact.mask(name)
        url, intro = redact.mask_url(url, drop_query=True), i18n.t("connect.again")


async def _ask_once(intro: str, name: str, url: str) -> dict[str, Any] | None:
    """One showing of the form: its answer, or None when cancelled or left unanswered."""
    element = cl.CustomElement(name=FORM, props={"name": name, "base_url": url}, display="inline")
    question = cl.AskElementMessage(
        content=intro, element=element, author=AUTHOR, timeout=ASK_TIMEOUT
    )
    reply = cast("dict[str, Any] | None", await question.send())
    if reply and reply.get("submitted"):
        answer = dict(reply)
        reply.clear()  # the key lives in one place only: the caller's
        await question.remove()  # the outcome follows as its own message
        return answer
    question.content = i18n.t("connect.cancelled" if reply else "connect.closed")
    await question.update()
    return None
