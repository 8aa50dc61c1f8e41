"""Thread titles: unique among a user's threads, and written by the chat model when asked
(BRAINCHAT_THREAD_TITLES=model).

By default a thread is titled by its first question (the data layer does it, no model call).
With `model`, one short call after the first answered turn renames it; it runs in the
background, so the input is free at once, and a failure keeps the question as the title.
Either way a title another thread of the same user has already gets " (2)", " (3)"...
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import chainlit as cl

from brainchat.redact import get_logger, mask
from brainchat.ui import persistence, thread_names

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from brainchat.settings import ModelSpec, Settings

log = get_logger("brainchat.ui")
TITLE_TIMEOUT = 30.0
TITLE_REPLY = 32  # tokens: the title call's max_tokens
TITLE_INPUT = 500  # tokens of the question at most: its head names the topic
_running: set[asyncio.Task[None]] = set()


def title_once(settings: Settings, question: str) -> bool:
    """Start the title call for a thread's first answered turn, if configured; whether it started
    (the caller then never starts another for the thread, even if this call fails)."""
    p = persistence.active()
    spec = settings.model_for("chat")
    if p is None or p.config.titles != "model" or spec is None:
        return False
    if not cl.context.session.has_first_interaction:
        return False
    task = asyncio.create_task(_write_title(spec, cl.context.session.thread_id, question))
    _running.add(task)
    task.add_done_callback(_running.discard)
    return True


def title_messages(spec: ModelSpec, system: BaseMessage, question: str) -> list[BaseMessage]:
    """The title request: the question's head cut by tokens (not characters: one CJK character
    or emoji is up to three tokens) to fit the title model's window beside prompt and reply."""
    from langchain_core.messages import HumanMessage

    from brainchat.usage import count_message_tokens, first_tokens

    room = spec.context_window - TITLE_REPLY - count_message_tokens([system]) - 3
    return [system, HumanMessage(first_tokens(question, max(min(TITLE_INPUT, room), 0)))]


async def _write_title(spec: ModelSpec, thread_id: str, question: str) -> None:
    from chainlit.data import get_data_layer
    from langchain_core.messages import SystemMessage

    from brainchat.llm import make_chat_model
    from brainchat.modelclient import ModelClient, Streamed
    from brainchat.prompts import load_prompt

    try:
        model = make_chat_model(spec, "title", max_tokens=TITLE_REPLY)
        messages = title_messages(spec, SystemMessage(load_prompt("title")), question)
        reply = Streamed()  # the one model client makes the call
        await asyncio.wait_for(
            ModelClient(model, spec, spec.name).text(messages, [], reply), TITLE_TIMEOUT
        )
        title = reply.text.strip().strip("\"'“”").strip()
        layer = get_data_layer()
        if title and layer is not None:
            store = getattr(layer, "store", None)  # brainchat's data layer: a unique name
            if store is not None:
                title = await thread_names.unique_title(store.engine, thread_id, title)
            await layer.update_thread(thread_id, name=title)
    except Exception as exc:  # noqa: BLE001 - the question stays the title
        log.warning("thread title not written: %s: %s", type(exc).__name__, mask(str(exc)))
