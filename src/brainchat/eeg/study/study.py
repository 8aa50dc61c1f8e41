"""The headless EEG study of one chat session: its data, stage and results, changed atomically."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.report import changes, summary
from brainchat.eeg.core.state import Op, StudyState
from brainchat.events import (
    StudyChanged,
    StudyRestored,
    ToolProgress,
    current_tool_call,
    emit,
    silence_after,
)

UPLOADS_SHOWN = 10  # uploaded files named in the agent's context (the latest)

# Study operations run on their own few threads, not on asyncio's default pool: that pool is what
# every session's new connections (getaddrinfo), password checks and uploads wait for, and long
# studies (or many at once) must never starve it. More studies than workers queue here.
STUDY_WORKERS = 4
_EXECUTOR = concurrent.futures.ThreadPoolExecutor(STUDY_WORKERS, thread_name_prefix="study")

# what a tool call says while a stopped step still finishes in its thread (the study is locked)
FINISHING = "waiting for the stopped step to finish (it ends at its next stop check)"

# `turn`: taken on the event loop before the op's thread starts; returns the function that gives
# the turn back, which is called when the thread ends (see seeded.take_turn)
Turn = Callable[[], Awaitable[Callable[[], None]]]


class Study:
    """One per chat session. Operations run one at a time, in a worker thread, and commit at the
    end: a failed or cancelled operation leaves the state exactly as it was."""

    def __init__(self, data_dir: Path | str, max_operation_mb: int | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.max_operation_mb = max_operation_mb  # memory one operation may need (study/memory.py)
        self.state = StudyState()
        self._lock = asyncio.Lock()
        self.log: list[dict[str, Any]] = []  # replayable record of the committed operations
        self.pending: list[dict[str, Any]] | None = None  # a saved log, replayed on first use
        self.model_dir: Path | None = None  # where trained models are saved (None: not saved)
        self.key = b""  # signs saved models that can only be pickled
        self.uploads: list[str] = []  # files uploaded in this conversation, one line each
        self.emptied: str | None = None  # why a failed undo emptied the study (not yet told)
        # the model and agent settings an export reports (names only, never keys); set by the session
        self.settings_info: Callable[[], dict[str, Any]] | None = None
        self._finishing: asyncio.Future | None = None  # a stopped step still in its thread

    @property
    def stage(self) -> str:
        """The stage, or while a saved log waits for its replay, the stage it will restore."""
        if self.pending:
            from brainchat.eeg.study.replay import planned

            return str(planned(self.pending)["stage"])
        return self.state.stage

    def facts(self) -> dict[str, Any]:
        """What plan checks and evals read: the stage, the preprocessing steps, the trained
        models, whether an ICA is fitted and the files (of the saved log while it waits)."""
        if self.pending:
            from brainchat.eeg.study.replay import planned

            return planned(self.pending)
        state = self.state
        return {
            "stage": state.stage,
            "steps": [  # values only: an applied ICA's fitted object stays with the study
                {"op": s.op, "params": {k: v for k, v in s.params.items() if k != "ica"}}
                for s in state.history
            ],
            "models": sorted(state.models),
            "ica": state.ica is not None,
            "files": [r.name for r in state.recordings],
        }

    def summary(self) -> str:
        if self.pending:
            from brainchat.eeg.study.replay import summary as pending_summary

            return pending_summary(self.pending)
        from brainchat.eeg.core.analyses import ANALYSES

        done = dict.fromkeys(ANALYSES[e["op"]].about for e in self.log if e["op"] in ANALYSES)
        shown = f"\nanalyses done: {', '.join(done)}." if done else ""
        return summary(self.state) + shown

    def context(self) -> str:
        """What the agent is told each round: the summary, and the files uploaded so far.

        Reading it changes nothing (size checks read it too); a pending note stays until a
        request that carried it was answered (`told`)."""
        return context_text(self.summary(), self.emptied, self.uploads)

    def told(self, sent: str) -> None:
        """A model request carrying `sent` (a `context()` text) was answered: its note is said."""
        if self.emptied and f"Note for the user: {self.emptied}" in sent:
            self.emptied = None

    async def restore(self) -> None:
        """Replay a saved log (once, before any other operation), telling the UI what it did."""
        await self._locked()
        try:
            await self._restore_locked()
        finally:
            if self._finishing is None:
                self._lock.release()

    async def _restore_locked(self) -> None:
        if not self.pending:
            self.pending = None
            return
        from brainchat.eeg.study.replay import label, replay

        # `pending` stays until the replay commits: a Stop or an error mid-replay must leave the
        # saved log to be saved again with the conversation (and replayed later), never lose it
        log = self.pending
        started = time.perf_counter()
        done = await self._in_thread(
            lambda _s, stop: replay(log, self.data_dir, self.key, stop), None, threading.Event()
        )
        self.state, self.log, self.pending = done.state, done.done, None
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
        self,
        op: Op,
        *,
        mutates_data: bool = False,
        record: dict[str, Any] | None = None,
        turn: Turn | None = None,
        report: bool = False,
    ) -> str:
        """Run `op(state, stop_flag)` off the event loop and commit the state it returns.

        `mutates_data`: the op changes the loaded recordings in place (preprocessing, to keep
        memory at one copy); on failure or cancellation they are rebuilt from the files and
        the history replayed. `record`: the log entry of this operation, kept on commit.
        `turn`: a process-wide turn to wait for on the event loop (never in a worker thread).
        `report`: the op changes nothing, but `record` (an analysis with its result) is logged.
        """
        await self._locked()
        try:
            await self._restore_locked()
            before = self.state
            release = await turn() if turn is not None else None
            stop = threading.Event()
            try:
                after, text = await self._in_thread(op, before, stop, release, mutates_data)
            except ToolException:
                raise  # raised by the checks, before any change
            except asyncio.CancelledError:
                raise  # _in_thread handed the lock to the step still finishing
            except BaseException:
                if mutates_data:
                    await self._undo(before)
                raise
            if report and record is not None and after is before:
                from brainchat.eeg.study.replay import compact

                self.log = compact(self.log, record)
            if after is not before:
                self.state = after
                if record is not None:
                    from brainchat.eeg.study.replay import compact

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
        finally:
            if self._finishing is None:
                self._lock.release()

    async def _locked(self) -> None:
        """Take the study's lock, saying so when a stopped step still holds it (it may take a
        while: a library call in its thread ends only at the step's next stop check)."""
        if self._finishing is not None:
            call_id, name = current_tool_call()
            emit(ToolProgress(call_id=call_id, name=name, message=FINISHING))
        await self._lock.acquire()

    async def _undo(self, before: StudyState) -> None:
        """The recordings were changed in place by a step that did not commit: rebuild them from
        the files and replay the history. The result is always assigned, even when this is
        cancelled (shielded); if the rebuild fails the study is emptied, and the user told why,
        rather than kept with recordings that no longer match its history."""
        from brainchat.eeg.preprocessing.preprocessing import rebuild

        work = asyncio.ensure_future(self._in_thread(lambda s, _: rebuild(s), before, None))
        cancelled = False
        while not work.done():
            try:
                await asyncio.wait({work})
            except asyncio.CancelledError:
                cancelled = True  # a second Stop: the rebuild still ends and is assigned
        exc = work.exception()
        if exc is None:
            self.state = work.result()
        else:
            self._broken(exc)
        if cancelled:
            raise asyncio.CancelledError()

    def _broken(self, exc: BaseException) -> None:
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        self.state, self.log = StudyState(), []
        change = (
            f"the study was emptied: its recordings could not be rebuilt after a failed "
            f"step ({type(exc).__name__}: {first}). Load the data again"
        )
        self.emptied = change  # told to the agent next round, when a stopped run missed the event
        call_id, _ = current_tool_call()
        emit(
            StudyChanged(
                stage=self.state.stage, summary=self.summary(), change=change, call_id=call_id
            )
        )

    async def _in_thread(
        self,
        fn: Callable[[Any, threading.Event], Any],
        arg: Any,
        stop: threading.Event | None,
        release: Callable[[], None] | None = None,
        mutates_data: bool = False,
    ) -> Any:
        """Run fn on the study threads. If cancelled: set `stop` and re-raise at once, so Stop
        returns to the user promptly; the study stays locked until the thread ends (then, for
        `mutates_data`, the recordings are rebuilt). `release` is called when the thread ends."""
        stop = stop if stop is not None else threading.Event()
        cfut = _EXECUTOR.submit(contextvars.copy_context().run, _gated, fn, arg, stop)
        if release is not None:
            cfut.add_done_callback(lambda _: release())
        fut = asyncio.wrap_future(cfut)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            stop.set()
            if self._lock.locked() and self._finishing is None:
                self._finishing = asyncio.ensure_future(self._finish(fut, arg, mutates_data))
            raise

    async def _finish(self, fut: asyncio.Future, before: Any, mutates_data: bool) -> None:
        """After a Stop: wait for the step's thread, undo its in-place changes, free the study."""
        try:
            while not fut.done():
                try:
                    await asyncio.wait({fut})
                except asyncio.CancelledError:
                    continue
            if not fut.cancelled():
                fut.exception()  # retrieved, so asyncio does not log it
            if mutates_data and isinstance(before, StudyState):
                await self._undo(before)
        finally:
            self._finishing = None
            self._lock.release()

    async def release(self) -> None:
        """Free the study's data (its browser tab has gone): the operation log becomes pending,
        so the next use, if the tab comes back, replays it from the files. Waits for a running
        operation to end first."""
        async with self._lock:
            if self.pending is None and self.log:
                self.pending = self.log
            if self.pending is not None:  # else nothing could rebuild it: it stays
                self.state, self.log = StudyState(), []
        from brainchat.eeg.study.memory import give_back

        await asyncio.to_thread(give_back)

    async def settled(self) -> None:
        """Wait until a stopped step has finished and the study is free again."""
        async with self._lock:
            pass

    async def save_new_models(self, before: set[str]) -> str:
        """Save the models trained since `before` and note their files in the log's last entry.

        Returns a note for the tool result when a model could not be saved (it then lives only
        until the app stops).
        """
        new = [m for name, m in self.state.models.items() if name not in before]
        if not new or self.model_dir is None or not self.log or self.log[-1]["op"] != "train":
            return ""
        from brainchat.eeg.study.saved import save_model

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


def context_text(summary: str, emptied: str | None, uploads: list[str]) -> str:
    """The study's summary, a note not yet told (the UI may have missed the event: a Stop had
    ended the run), and the latest uploads of this conversation, oldest first."""
    text = summary
    if emptied:
        text += f"\nNote for the user: {emptied}"
    if uploads:
        shown = uploads[-UPLOADS_SHOWN:]
        more = len(uploads) - len(shown)
        text += "\nUploaded this conversation (paths relative to the data folder): " + "; ".join(
            shown
        )
        text += f" (+{more} earlier)" if more else ""
        if len(shown) > 1:  # "the file I just uploaded" is the last one
            text += f"; the latest: {shown[-1].rsplit(' (', 1)[0]}"
    return text


def _gated(fn: Callable[[Any, threading.Event], Any], arg: Any, stop: threading.Event) -> Any:
    """fn(arg, stop) with the run's events silenced once stopped: the tool call has ended for the
    user, and a step still finishing must not add progress under it."""
    silence_after(stop)
    return fn(arg, stop)
