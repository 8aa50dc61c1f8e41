"""The app's kernels: how many may run, whose turn it is, and which idle one ends to make room.

At most `max_kernels` kernels live at once and `per_user` of one user (a user is the data folder
a study reads). A study that needs a kernel when there is no room ends the least recently used
idle kernel (its study goes back to its log, replayed at its next use); when every kernel is
busy it waits in a queue, first come first served, its place shown in the step's title. A
kernel idle for `idle_s` ends too: an idle study holds no memory.
"""

from __future__ import annotations

import asyncio
import atexit
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from brainchat.eeg.kernel.connection import KernelConnection
from brainchat.eeg.kernel.launcher import Launcher, LocalLauncher
from brainchat.events import ToolProgress, current_tool_call, emit

POLL = 0.1  # seconds between looks at the queue while waiting for room


@dataclass
class _Live:
    conn: KernelConnection
    evict: Callable[[], None]  # gives the study back to its log, then the kernel ends


class KernelPool:
    def __init__(
        self,
        launcher: Launcher | None = None,
        *,
        max_kernels: int = 8,
        per_user: int = 2,
        memory_mb: int = 0,
        idle_s: float = 900.0,
    ) -> None:
        self.launcher = launcher or LocalLauncher()
        self.max_kernels, self.per_user = max_kernels, per_user
        self.memory_mb, self.idle_s = memory_mb, idle_s
        self.live: list[_Live] = []
        self.queue: list[tuple[object, str]] = []  # waiting studies: (turn, owner), in order
        atexit.register(self.end_all)

    async def open(self, owner: str, evict: Callable[[], None]) -> KernelConnection:
        """A new kernel for a study of `owner`, once there is room; `evict` is how the pool
        takes it back later (to make room, or when it has been idle too long)."""
        turn = object()
        self.queue.append((turn, owner))
        told = -1
        try:
            while not self._may_start(turn, owner):
                place = [t for t, _ in self.queue].index(turn)
                if place != told:
                    told = place
                    _waiting(place, len(self._alive()))
                await asyncio.sleep(POLL)
        finally:
            self.queue = [(t, o) for t, o in self.queue if t is not turn]
        starting = asyncio.ensure_future(asyncio.to_thread(self.launcher.start, self.memory_mb))
        try:
            process = await asyncio.shield(starting)
        except asyncio.CancelledError:  # stopped while it started: it must not live on unowned
            starting.add_done_callback(_kill_started)
            raise
        conn = KernelConnection(process, owner)
        self.live.append(_Live(conn, evict))
        return conn

    def forget(self, conn: KernelConnection) -> None:
        """The study ended its kernel itself (released, stopped, lost)."""
        self.live = [live for live in self.live if live.conn is not conn]

    def end_all(self) -> None:
        """The app is ending: every kernel with it."""
        for live in list(self.live):
            live.conn.end()
        self.live = []

    def _alive(self) -> list[_Live]:
        self.live = [live for live in self.live if not live.conn.ended]
        return self.live

    def _may_start(self, turn: object, owner: str) -> bool:
        """Room for `owner` now (ending an idle kernel if that makes it), and no one before in
        the queue who could use it."""
        self._reap()
        for earlier, who in self.queue:
            if earlier is turn:
                break
            if self._room(who) or self._victim(who) is not None:
                return False  # their turn first
        if self._room(owner):
            return True
        victim = self._victim(owner)
        if victim is None:
            return False
        self._end(victim)
        return self._room(owner)

    def _room(self, owner: str) -> bool:
        alive = self._alive()
        mine = sum(live.conn.owner == owner for live in alive)
        return len(alive) < self.max_kernels and mine < self.per_user

    def _victim(self, owner: str) -> _Live | None:
        """The least recently used idle kernel whose end makes room for `owner`."""
        alive = self._alive()
        mine = [live for live in alive if live.conn.owner == owner]
        pool = mine if len(mine) >= self.per_user else alive
        idle = [live for live in pool if not live.conn.busy]
        return min(idle, key=lambda live: live.conn.last_used, default=None)

    def _reap(self) -> None:
        now = time.monotonic()
        for live in self._alive():
            if not live.conn.busy and now - live.conn.last_used > self.idle_s:
                self._end(live)

    def _end(self, live: _Live) -> None:
        live.evict()
        live.conn.end()
        self.forget(live.conn)


def _kill_started(starting: asyncio.Future[Any]) -> None:
    if not starting.cancelled() and starting.exception() is None:
        starting.result().kill()


def _waiting(place: int, running: int) -> None:
    call_id, name = current_tool_call()
    ahead = f"{place} ahead in the queue" if place else "next in the queue"
    emit(
        ToolProgress(
            call_id=call_id,
            name=name,
            message=f"waiting for a study process ({running} running, {ahead})",
            phase="waiting",
        )
    )
