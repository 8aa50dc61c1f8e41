"""The headless EEG study of one chat session: its data, stage and results, changed atomically."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.preprocessing import rebuild
from brainchat.eeg.report import changes, summary
from brainchat.eeg.state import Op, StudyState
from brainchat.events import StudyChanged, StudyRestored, current_tool_call, emit

UPLOADS_SHOWN = 10  # uploaded files named in the agent's context (the latest)


class Study:
    """One per chat session. Operations run one at a time, in a worker thread, and commit at the
    end: a failed or cancelled operation leaves the state exactly as it was."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.state = StudyState()
        self._lock = asyncio.Lock()
        self.log: list[dict[str, Any]] = []  # replayable record of the committed operations
        self.pending: list[dict[str, Any]] | None = None  # a saved log, replayed on first use
        self.model_dir: Path | None = None  # where trained models are saved (None: not saved)
        self.key = b""  # signs saved models that can only be pickled
        self.uploads: list[str] = []  # files uploaded in this conversation, one line each
        # the model and agent settings an export reports (names only, never keys); set by the session
        self.settings_info: Callable[[], dict[str, Any]] | None = None

    @property
    def stage(self) -> str:
        return self.state.stage

    def summary(self) -> str:
        if self.pending:
            from brainchat.eeg.replay import summary as pending_summary

            return pending_summary(self.pending)
        return summary(self.state)

    def context(self) -> str:
        """What the agent is told each round: the summary, and the files uploaded so far."""
        text = self.summary()
        if self.uploads:
            shown = self.uploads[-UPLOADS_SHOWN:]
            more = len(self.uploads) - len(shown)
            text += (
                "\nUploaded this conversation (paths relative to the data folder): "
                + "; ".join(shown)
            )
            text += f" (+{more} earlier)" if more else ""
        return text

    async def restore(self) -> None:
        """Replay a saved log (once, before any other operation), telling the UI what it did."""
        async with self._lock:
            await self._restore_locked()

    async def _restore_locked(self) -> None:
        if not self.pending:
            self.pending = None
            return
        from brainchat.eeg.replay import label, replay

        log, self.pending = self.pending, None
        started = time.perf_counter()
        done = await _in_thread(
            lambda _s, stop: replay(log, self.data_dir, self.key, stop), None, threading.Event()
        )
        self.state, self.log = done.state, done.done
        emit(
            StudyRestored(
                replayed=[label(e) for e in done.done],
                problem=done.problem,
                skipped=[label(e) for e in log[len(done.done) :]],
                stage=self.state.stage,
                seconds=time.perf_counter() - started,
            )
        )

    async def run(
        self, op: Op, *, mutates_data: bool = False, record: dict[str, Any] | None = None
    ) -> str:
        """Run `op(state, stop_flag)` off the event loop and commit the state it returns.

        `mutates_data`: the op changes the loaded recordings in place (preprocessing, to keep
        memory at one copy); on failure or cancellation they are rebuilt from the files and
        the history replayed. `record`: the log entry of this operation, kept on commit.
        """
        async with self._lock:
            await self._restore_locked()
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
                if record is not None:
                    from brainchat.eeg.replay import compact

                    self.log = compact(self.log, record)
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

    async def save_new_models(self, before: set[str]) -> str:
        """Save the models trained since `before` and note their files in the log's last entry.

        Returns a note for the tool result when a model could not be saved (it then lives only
        until the app stops).
        """
        new = [m for name, m in self.state.models.items() if name not in before]
        if not new or self.model_dir is None or not self.log or self.log[-1]["op"] != "train":
            return ""
        from brainchat.eeg.saved import save_model

        model, folder = new[-1], self.model_dir
        try:
            path = await asyncio.to_thread(save_model, model, folder, self.key)
            rel = path.resolve().relative_to(self.data_dir.resolve()).as_posix()
        except (OSError, RuntimeError, ValueError, TypeError) as exc:
            return (
                f"\nnote: the model could not be saved ({type(exc).__name__}: {exc}); "
                "it is lost when the app restarts"
            )
        self.log[-1] = {**self.log[-1], "name": model.name, "file": rel}
        return ""


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
