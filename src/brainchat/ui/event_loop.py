"""Give the app back asyncio's C tasks and futures, which `chainlit run` swaps for pure Python.

Chainlit's CLI calls `nest_asyncio.apply()` (for re-entrant loops, used only by chat profiles
and `run_sync` from the main thread, neither of which brainchat uses). Besides patching the loop,
that replaces `asyncio.Task` and `asyncio.Future` with their pure-Python versions for the whole
process: every await that crosses a task then runs Python code, ~10% of the CPU of an agent turn
with 50 sessions streaming. The loop patch stays (a nested `run_until_complete` still works with
C tasks, see tests/test_event_loop.py); only tasks and futures created from now on are C ones.
"""

from __future__ import annotations

import asyncio
import asyncio.futures
import asyncio.tasks


def install() -> bool:
    """Use the C Task and Future again if nest_asyncio replaced them; True when it did."""
    try:
        import _asyncio
    except ImportError:  # an interpreter without the C accelerator: nothing to restore
        return False
    if asyncio.tasks.Task is _asyncio.Task:
        return False
    asyncio.Task = asyncio.tasks.Task = _asyncio.Task  # type: ignore[misc]
    asyncio.tasks._CTask = _asyncio.Task  # type: ignore[attr-defined]
    asyncio.Future = asyncio.futures.Future = _asyncio.Future  # type: ignore[misc]
    asyncio.futures._CFuture = _asyncio.Future  # type: ignore[attr-defined]
    return True
