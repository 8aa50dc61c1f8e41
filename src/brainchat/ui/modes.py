"""The Chat / Agent switch, confirmed when the user picks a mode, not with the next message.

Chainlit's Mode picker shows a pick at once and sends nothing (the choice rides along with the
next message), so `public/brainchat.js` stops the pick before Chainlit sees it and posts
`{"brainchat": "mode", "mode": ...}` to its own window, which Chainlit forwards to
`on_window_message`. The picker thus keeps showing the mode in force: Chat switches at once, Agent
asks first (an action message; Chainlit keeps the message bar locked until it is answered), and
the server then sets the picker to the mode in force, after the line that says so. A message
whose mode differs from the session's (the script did not run) still switches, with the same
one-line notice.

The mode of a new chat follows the user's last choice: each confirmed switch tells the page
(`{"brainchat": "mode-chosen"}`, a window message), which keeps it in the browser's localStorage;
a new conversation tells the page the mode it shows (`"mode-shown"`), and the page asks back for
the remembered one (`{"brainchat": "mode", "remembered": true}`), which a conversation that has
not had a turn yet takes without the question: the user answered it when choosing. Kept in the
browser, not on the server: it is a preference of the page, like its theme, and needs no write
to the user's data folder (which, for the local user, is the EEG folder the tools list).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import chainlit as cl

from brainchat import i18n
from brainchat.ui import format as fmt

# shape: one AUTHOR for every brainchat message (it was defined here too)
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.session import Session
    from brainchat.ui.state import Conversation

ASK_TIMEOUT = 600  # seconds; unanswered means "stay"


def picked_mode(data: Any) -> str | None:
    """The mode a window message from brainchat.js names, or None for anything else."""
    if isinstance(data, dict) and data.get("brainchat") == "mode":
        mode = data.get("mode")
        return mode if mode in ("chat", "agent") else None
    return None


def remembered(data: Any) -> bool:
    """The page asks for the user's last choice (a new chat), not for a new pick."""
    return isinstance(data, dict) and data.get("remembered") is True


async def send_modes(mode: str, *, chosen: bool = False) -> None:
    """The picker's options, `mode` selected (also how a declined switch is put back); the page
    is told the mode, and whether the user chose it (then new chats start in it)."""
    options = [
        cl.ModeOption(
            id="chat",
            name=i18n.t("modes.chat"),
            icon="message-circle",
            default=mode == "chat",
            description=i18n.t("modes.chat_about"),
        ),
        cl.ModeOption(
            id="agent",
            name=i18n.t("modes.agent"),
            icon="bot",
            default=mode == "agent",
            description=i18n.t("modes.agent_about"),
        ),
    ]
    await cl.context.emitter.set_modes(
        [cl.Mode(id="mode", name=i18n.t("modes.picker"), options=options)]
    )
    kind = "mode-chosen" if chosen else "mode-shown"
    await cl.context.emitter.send_window_message({"brainchat": kind, "mode": mode})


def _roles(session: Session) -> dict[str, str]:
    chat = session.settings.model_for("chat")
    return {**session.roles(), "chat": chat.name if chat else i18n.t("modes.no_model")}


def mode_line(session: Session, mode: str) -> str:
    """One line saying the mode is on: models, and for Agent how many tools (not their list)."""
    roles = _roles(session)
    if mode == "chat":
        return i18n.t("modes.chat_on", model=roles["chat"])
    tools = fmt.tools_count(session.toolset())
    return i18n.t(
        "modes.agent_on", tools=tools, thinker=roles["function_call"], answerer=roles["answer"]
    )


def _show_tools() -> cl.Action:
    return cl.Action(name="show_tools", payload={}, label=i18n.t("modes.show_tools"), icon="wrench")


async def switched(conv: Conversation, mode: str, *, before_turn: bool = False) -> None:
    """Switch now and say so in one line (Agent: with a "Show tools" action).

    `before_turn`: the switch rides on a message whose turn starts next; the turn's own save at
    its end writes the mode to the database, so the turn does not wait for a write of its own.
    """
    conv.session.set_mode(mode)
    if before_turn:
        conv.keep()
    else:
        await conv.save()
    actions = [_show_tools()] if mode == "agent" else []
    await cl.Message(content=mode_line(conv.session, mode), actions=actions, author=AUTHOR).send()
    await send_modes(mode, chosen=True)  # the picker follows the switch, never leads it


async def on_pick(conv: Conversation, mode: str, *, restore: bool = False) -> None:
    """The picker changed: Chat switches at once; Agent asks first. `restore`: the page asks
    for the user's last choice; a conversation without a turn takes it without asking."""
    if mode == conv.session.mode or conv.asking:
        return
    if restore:
        if not conv.session.turns:
            await switched(conv, mode, before_turn=True)  # saved with the first turn
        return
    if mode == "chat":
        await switched(conv, "chat")
        return
    conv.asking = True
    try:
        await _ask_agent(conv)
    finally:
        conv.asking = False


async def _ask_agent(conv: Conversation) -> None:
    roles = _roles(conv.session)
    toolset = conv.session.toolset()
    dialog = cl.AskActionMessage(
        content=i18n.t(
            "modes.ask_agent",
            thinker=roles["function_call"],
            tools=fmt.tools_count(toolset),
            answerer=roles["answer"],
        ),
        actions=[
            cl.Action(
                name="agent",
                payload={"mode": "agent"},
                label=i18n.t("modes.switch_agent"),
                icon="bot",
            ),
            cl.Action(
                name="chat",
                payload={"mode": "chat"},
                label=i18n.t("modes.stay_chat"),
                icon="message-circle",
            ),
        ],
        author=AUTHOR,
        timeout=ASK_TIMEOUT,
    )
    reply = await dialog.send()
    # Chainlit restarts "the task" after an answer, assuming one was running: none is here, and
    # without this the message bar would show a stop button until the next message.
    await cl.context.emitter.task_end()
    if reply and reply.get("name") == "agent":
        conv.session.set_mode("agent")
        await conv.save()
        dialog.content = mode_line(conv.session, "agent")
        await dialog.update()
        await _show_tools().send(for_id=dialog.id)
        await send_modes("agent", chosen=True)
        return
    dialog.content = i18n.t("modes.stayed")
    await dialog.update()
    await send_modes(conv.session.mode)  # the picker shows it (brainchat.js never moved it)
