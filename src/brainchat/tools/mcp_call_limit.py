"""A tool call's time limit: an idle limit that each progress notification resets, bounded by a
hard maximum (BRAINCHAT_MCP_MAX_CALL_SECONDS). Past it the call is cancelled (the session tells
the server, notifications/cancelled); the session itself is kept, since only a dead transport
ends one (what the MCP specification's timeouts section and VS Code do)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable
from typing import Any

from mcp.shared.session import ProgressFnT as ProgressFn

from brainchat.settings.declared import AppVars
from brainchat.settings.errors import ConfigError
from brainchat.settings.fields import check, default, env_name

MAX_ENV = env_name(AppVars, "mcp_max_call_seconds")


def max_call_seconds() -> float:
    """The hard maximum from the environment (read at each call); a bad value keeps the default
    (the settings check names it at start-up)."""
    raw = os.environ.get(MAX_ENV, "").strip()
    if raw:
        with contextlib.suppress(ConfigError):
            return float(check(AppVars, "mcp_max_call_seconds", raw))
    return float(default(AppVars, "mcp_max_call_seconds"))


class CallLimit:
    """`idle` seconds without progress, and never more than `hard` in all (at least `idle`)."""

    def __init__(self, idle: float, hard: float | None = None) -> None:
        self.idle = idle
        self.hard = max(idle, max_call_seconds() if hard is None else hard)
        self.started = self.last = time.monotonic()
        self.progressed = False

    def start(self) -> None:
        """The request goes out now (after any reconnect, which has its own limit)."""
        self.started = self.last = time.monotonic()

    def touch(self) -> None:
        """A progress notification came: the idle limit starts again."""
        self.last = time.monotonic()
        self.progressed = True

    def forward(self, then: ProgressFn | None) -> ProgressFn:
        """A progress callback that restarts the idle limit, then passes the news on."""

        async def report(progress: float, total: float | None, message: str | None) -> None:
            self.touch()
            if then is not None:
                await then(progress, total, message)

        return report

    def remaining(self) -> float:
        now = time.monotonic()
        return min(self.last + self.idle, self.started + self.hard) - now

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def why(self) -> str:
        """Which limit ended the call, for the model and the user."""
        if self.hard <= self.idle:  # no room for progress to extend it
            return f"its limit of {self.idle:g} s"
        if self.last + self.idle < self.started + self.hard:
            return f"no progress for {self.idle:g} s"
        return f"it reached the hard maximum of {self.hard:g} s ({MAX_ENV})"

    def cancelled(self, what: str) -> str:
        """The error text once the call is cancelled: the session is still there."""
        return (
            f"{what} was cancelled after {self.elapsed():.0f} s ({self.why()}); the server is "
            "still connected, so its state is kept and other calls work. Call it again with "
            "less work, or go on without it."
        )


async def within(call: Awaitable[Any], gone: asyncio.Event, limit: CallLimit) -> Any:
    """Await `call` until it ends, `gone` is set (raises Gone) or `limit` runs out (raises
    TimeoutError); the call is cancelled in both cases, which the session tells the server."""
    task = asyncio.ensure_future(call)
    waiter = asyncio.ensure_future(gone.wait())
    try:
        while True:
            left = limit.remaining()
            if left <= 0:
                raise TimeoutError()
            done, _ = await asyncio.wait(
                {task, waiter}, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:
                return task.result()
            if waiter in done:
                raise Gone()
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def answers_ping(session: Any, gone: asyncio.Event, wait: float) -> bool:
    """After a call timed out: is the server still there? (A server whose event loop is
    blocked answers nothing: it is restarted, as a dead transport is.)"""
    try:
        await within(session.send_ping(), gone, CallLimit(wait, wait))
    except Exception:
        return False
    return True


class Gone(Exception):
    """The session's owner task left its contexts while a call was waiting."""
