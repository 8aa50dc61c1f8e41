"""Streamed tokens to the socket in batches: at most one send per interval per stream, none lost.

A model streams a token every few milliseconds; sending each one costs a socket.io packet, a
JSON encoding and a browser re-render. `TokenBatcher` sends the first token at once (the user
sees the stream start without delay), then joins what arrives within `interval` into one send;
a timer sends a batch that would otherwise wait for a next token, and `flush()` (step end, stop)
sends the rest. Sends go out in order, one at a time. No Chainlit import: the sink is any
`async (text) -> None`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

INTERVAL = 0.05  # seconds between two sends of one stream


class TokenBatcher:
    """Join streamed tokens and hand them to `sink` at most once per `interval` seconds."""

    def __init__(self, sink: Callable[[str], Awaitable[None]], interval: float = INTERVAL) -> None:
        self.sink = sink
        self.interval = interval
        self.sends = 0  # how many times the sink was called (tests and benches read it)
        self._pending: list[str] = []
        self._last = float("-inf")  # when the latest send started
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    async def add(self, text: str) -> None:
        """Queue a token; send now when the interval has passed, else arm the timer once."""
        if not text:
            return
        self._pending.append(text)
        wait = self._last + self.interval - time.monotonic()
        if wait <= 0:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a failed send is the stream's end, not a crash

    async def flush(self) -> None:
        """Send everything queued (in order, after any send in progress)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        async with self._lock:
            if not self._pending:
                return
            text = "".join(self._pending)
            self._pending.clear()
            self._last = time.monotonic()
            self.sends += 1
            await self.sink(text)

    async def close(self) -> None:
        """Flush, and wait for a timer's send still in flight."""
        await self.flush()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
