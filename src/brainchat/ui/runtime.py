"""Process-wide settings that cut the CPU of every turn: C asyncio tasks and a quieter GC.

C tasks. Chainlit's CLI calls `nest_asyncio.apply()` (for re-entrant loops, used only by chat profiles
and `run_sync` from the main thread, neither of which brainchat uses). Besides patching the loop,
that replaces `asyncio.Task` and `asyncio.Future` with their pure-Python versions for the whole
process: every await that crosses a task then runs Python code, ~10% of the CPU of an agent turn
with 50 sessions streaming. The loop patch stays (a nested `run_until_complete` still works with
C tasks, see tests/test_runtime.py); only tasks and futures created from now on are C ones.

GC. The app's heap is ~300k objects after its imports and ~370k once the first agent turn has
loaded langchain_openai and langgraph; each full collection walks all of them (~0.1 s of CPU,
several per minute under load) and young collections ran every 700 allocations. The imported
heap is frozen (never walked again; refcounting still frees it) at start and once more after
the first agent turn, and young collections run every 10,000 allocations.
"""

from __future__ import annotations

import asyncio
import asyncio.futures
import asyncio.tasks
import gc
import sys

GEN0_THRESHOLD = 10_000
_frozen_agent = False


def install() -> None:
    """At import of the app: C tasks, the GC's young threshold, the imported heap frozen."""
    c_tasks()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(max(GEN0_THRESHOLD, gc.get_threshold()[0]), gen1, gen2)
    gc.freeze()


def settle() -> None:
    """After a turn: once the agent's libraries are loaded, freeze what they added, once."""
    global _frozen_agent
    if not _frozen_agent and "langgraph" in sys.modules:
        _frozen_agent = True
        gc.freeze()


def c_tasks() -> bool:
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
