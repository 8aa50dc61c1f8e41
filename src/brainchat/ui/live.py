"""Turns that outlive their page: a reload, a second tab or a reconnect takes a running turn over.

A turn registers here by its thread while it runs. When a page opens that thread again (Chainlit's
on_chat_resume) while the turn still runs, the page takes it over: the turn's Chainlit context
(the page it sends steps and tokens to) is pointed at the new page, the new page's session holds
the live conversation and the turn's task (so its Stop button stops it), and the steps the turn
sent so far come back with the thread from the data layer. The turn itself never notices.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import chainlit as cl
from chainlit.context import get_context

from brainchat import i18n
from brainchat.redact import get_logger

log = get_logger("brainchat.ui")


@dataclass
class LiveTurn:
    conv: Any  # ui/state.py's Conversation
    context: Any  # the Chainlit context the turn sends through
    task: asyncio.Task[Any]


_LIVE: dict[str, LiveTurn] = {}  # thread id -> its turn under way


def begin(conv: Any) -> str | None:
    """Register the turn running in this task under its thread; returns the thread id."""
    task = asyncio.current_task()
    thread_id = getattr(cl.context.session, "thread_id", None)
    if task is None or not thread_id:
        return None
    _LIVE[thread_id] = LiveTurn(conv, get_context(), task)
    return str(thread_id)


def end(thread_id: str | None) -> None:
    if thread_id is not None:
        _LIVE.pop(thread_id, None)


async def take_over(thread_id: str) -> Any | None:
    """If a turn of `thread_id` still runs, this page takes it over; returns its conversation."""
    live = _LIVE.get(thread_id)
    if live is None or live.task.done():
        return None
    context = get_context()  # this page's Chainlit context (its session is Chainlit's)
    if context is live.context:
        return live.conv
    if live.context.session.id != context.session.id:  # a page still open (a second tab) is
        # told where the turn went, and stops showing it as running; a reloaded one is gone
        _announcing.add(asyncio.ensure_future(_left(live.context.emitter)))
    live.context.session = context.session  # the turn's steps and tokens now reach this page
    live.context.emitter = context.emitter
    context.session.current_task = live.task  # this page's Stop stops the turn
    log.info("a page took over the running turn of its thread")
    _announcing.add(asyncio.ensure_future(_announce(context.emitter, live.task)))
    return live.conv


_announcing: set[asyncio.Future[None]] = set()  # kept until done (asyncio holds tasks weakly)
ANNOUNCE_AFTER = 0.5  # seconds: after Chainlit has sent the page the thread it resumes


async def _announce(emitter: Any, task: asyncio.Task[Any]) -> None:
    """Show the page the turn running (its Stop button), once Chainlit has sent it the resumed
    thread: that message resets the page's running state."""
    try:
        await asyncio.sleep(ANNOUNCE_AFTER)
        if not task.done():
            await emitter.task_start()
    except Exception:  # noqa: BLE001 - a page gone again: the turn goes on regardless
        log.info("a page left while taking over a running turn")
    finally:
        _announcing.difference_update({f for f in _announcing if f.done()})


async def _left(emitter: Any) -> None:
    """The page a turn left: its running state ends, and a notice says where the turn went."""
    try:
        await emitter.task_end()
        await emitter.send_toast(i18n.t("live.moved"), "info")
    except Exception:  # noqa: BLE001 - that page is closed: nothing to tell
        log.info("the page a turn left could not be told")
