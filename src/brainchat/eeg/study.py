"""The headless EEG study of one chat session: its data, stage and results, changed atomically."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.preprocessing import rebuild
from brainchat.eeg.report import changes, summary
from brainchat.eeg.state import Op, StudyState
from brainchat.events import StudyChanged, current_tool_call, emit


class Study:
    """One per chat session. Operations run one at a time, in a worker thread, and commit at the
    end: a failed or cancelled operation leaves the state exactly as it was."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.state = StudyState()
        self._lock = asyncio.Lock()

    @property
    def stage(self) -> str:
        return self.state.stage

    def summary(self) -> str:
        return summary(self.state)

    async def run(self, op: Op, *, mutates_data: bool = False) -> str:
        """Run `op(state, stop_flag)` off the event loop and commit the state it returns.

        `mutates_data`: the op changes the loaded recordings in place (preprocessing, to keep
        memory at one copy); on failure or cancellation they are rebuilt from the files and
        the history replayed.
        """
        async with self._lock:
            before = self.state
            stop = threading.Event()
            try:
                after, text = await _in_thread(op, before, stop)
            except BaseException as exc:
                # a ToolException is raised by the checks, before any change
                if mutates_data and not isinstance(exc, ToolException):
                    self.state = await _in_thread(lambda s, _: rebuild(s), before, stop)
                raise
            if after is not before:
                self.state = after
                call_id, _ = current_tool_call()
                emit(
                    StudyChanged(
                        stage=after.stage,
                        summary=self.summary(),
                        change=changes(before, after),
                        call_id=call_id,
                    )
                )
            return text


async def _in_thread(fn: Callable[[Any, threading.Event], Any], arg: Any, stop: threading.Event):
    """Run fn in a thread; if cancelled, set `stop`, wait for the thread to end, then re-raise."""
    fut = asyncio.ensure_future(asyncio.to_thread(fn, arg, stop))
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        stop.set()
        while not fut.done():
            try:
                await asyncio.wait({fut})
            except asyncio.CancelledError:
                continue
        if not fut.cancelled():
            fut.exception()  # retrieved, so asyncio does not log it
        raise
