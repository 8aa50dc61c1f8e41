"""The app's side of one kernel: its process, the calls in flight and their messages.

A reader thread takes each message off the connection and hands it to the call it answers, on
the event loop; when the connection ends (the kernel exited, crashed or was killed) every call
in flight gets `Gone` with the reason.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from dataclasses import dataclass
from typing import Any

from brainchat.eeg.kernel.launcher import KernelProcess


@dataclass(frozen=True)
class Gone:
    """The kernel ended while the call was in flight; `why` in words."""

    why: str


class KernelConnection:
    def __init__(self, process: KernelProcess, owner: str) -> None:
        self.process = process
        self.owner = owner  # whose kernel it is (the pool's per-user count)
        self.calls: dict[int, asyncio.Queue[Any]] = {}
        self.last_used = time.monotonic()
        self.ended = False
        self._ids = itertools.count(1)
        self._loop = asyncio.get_running_loop()
        self._send_lock = threading.Lock()
        threading.Thread(target=self._read, name="kernel-reader", daemon=True).start()

    @property
    def busy(self) -> bool:
        return bool(self.calls)

    def open_call(self) -> tuple[int, asyncio.Queue[Any]]:
        call_id, queue = next(self._ids), asyncio.Queue[Any]()
        self.calls[call_id] = queue
        self.last_used = time.monotonic()
        return call_id, queue

    def close_call(self, call_id: int) -> None:
        self.calls.pop(call_id, None)
        self.last_used = time.monotonic()

    def send(self, message: Any) -> bool:
        """Send a message; False when the kernel has gone."""
        try:
            with self._send_lock:
                self.process.conn.send(message)
        except (OSError, ValueError, BrokenPipeError):
            return False
        return True

    def end(self) -> None:
        """End the process now (its calls get `Gone`)."""
        self.ended = True
        self.process.kill()

    def _read(self) -> None:
        while True:
            try:
                message = self.process.conn.recv()
            except (EOFError, OSError, ValueError):
                break
            except Exception:  # noqa: BLE001 - a message that cannot be unpickled: the kernel is unusable
                break
            self._loop.call_soon_threadsafe(self._deliver, message)
        deadline = time.monotonic() + 2  # the process ends just after its connection does
        while self.process.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if self.process.alive():
            self.process.kill()
        try:
            self._loop.call_soon_threadsafe(self._gone)
        except RuntimeError:
            pass  # the app's loop has closed: nobody is waiting

    def _deliver(self, message: Any) -> None:
        queue = self.calls.get(getattr(message, "id", -1))
        if queue is not None:
            queue.put_nowait(message)

    def _gone(self) -> None:
        self.ended = True
        why = self.process.ended() or "its connection closed"
        for queue in self.calls.values():
            queue.put_nowait(Gone(why))
