"""ui/runtime.py: after chainlit's nest_asyncio, the app gets C tasks back and nesting still works;
the GC freezes the imported heap. Run in a child process: both change the interpreter for good."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import asyncio, gc, sys
import nest_asyncio
nest_asyncio.apply()                      # what `chainlit run` does before importing the app
import _asyncio
assert asyncio.Task is not _asyncio.Task  # pure-Python tasks, as chainlit leaves them
from brainchat.ui import runtime
runtime.install()
assert asyncio.Task is _asyncio.Task and asyncio.Future is _asyncio.Future
assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] >= runtime.GEN0_THRESHOLD
frozen = gc.get_freeze_count()
runtime.settle()
assert gc.get_freeze_count() == frozen or "langgraph" in sys.modules

async def inner():
    await asyncio.sleep(0.01)
    return 42

async def nested():  # a re-entrant run, the reason chainlit applies nest_asyncio
    return asyncio.get_event_loop().run_until_complete(inner())

async def main():
    task = asyncio.create_task(nested())
    assert type(task) is _asyncio.Task
    results = await asyncio.gather(task, *(inner() for _ in range(20)))
    assert results == [42] * 21
    return "ok"

print(asyncio.run(main()))
import langgraph  # noqa: F401 - what the first agent turn imports
runtime.settle()
more = gc.get_freeze_count()
runtime.settle()
assert gc.get_freeze_count() == more  # frozen once, not after every turn
"""


def test_c_tasks_come_back_and_nested_loops_still_run() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
