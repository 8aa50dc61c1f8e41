"""The process's seeded-training turn, waited for on the event loop.

PyTorch's default random generator is one per process: a network's initial weights and its
dropout masks draw from it. Two sessions training at once would interleave their draws, and
neither model would be what its seed promises (nor what its exported script reproduces), so
seeded network training takes turns. The wait happens on the event loop, never in a worker
thread: a waiting session must not hold a thread others need.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

# A threading lock, polled from the loop, rather than an asyncio.Lock: the turn is per process
# (sessions may run on different event loops) and is given back by the training's thread.
_SEEDED = threading.Lock()
POLL_SECONDS = 0.05


async def take_turn(waiting: Callable[[], None] | None = None) -> Callable[[], None]:
    """Wait for the turn and return the function that gives it back (callable from any thread).

    `waiting` is called once, when another session holds the turn, so the user sees why nothing
    moves instead of a silent wait. A cancelled wait holds nothing."""
    told = False
    while not _SEEDED.acquire(blocking=False):
        if not told and waiting is not None:
            waiting()
            told = True
        await asyncio.sleep(POLL_SECONDS)
    return _SEEDED.release
