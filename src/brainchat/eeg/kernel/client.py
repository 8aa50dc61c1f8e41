"""A study that lives in a kernel: what the app holds of it, and its tools as calls to the kernel.

`KernelStudy` answers what the app and the agent read of a study (stage, summary, context,
facts, log, uploads) from what each call brought back, and runs every EEG tool in its kernel.
The kernel starts at the study's first call, with its saved log to replay. Stop (a cancelled
call: the user's Stop, a tool time limit, an MCP cancellation) interrupts the step at once; if
the kernel has not freed the study within STOP_GRACE seconds it is ended, and the study comes
back from its log at the next call. A kernel that dies (a crash in a library, the memory limit)
ends that one call with a message naming the step; the app goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from brainchat.eeg.kernel.connection import Gone, KernelConnection
from brainchat.eeg.kernel.pool import KernelPool
from brainchat.eeg.kernel.protocol import EXPORT, Call, Done, Emitted, Mirror, Settled, Start, Stop
from brainchat.eeg.study.replay import planned
from brainchat.eeg.study.replay import summary as pending_summary
from brainchat.eeg.study.study import FINISHING, context_text
from brainchat.events import ToolProgress, current_tool_call, emit
from brainchat.tools.registry import flags_of, set_flags

STOP_GRACE = 2.0  # seconds a stopped step has to free the study before its kernel is ended
STARTING = "starting the study's process"
RESTORING = "rebuilding the study from its saved steps"


class KernelStudy:
    """The app's side of a study in a kernel (the API of `Study` that the app uses)."""

    def __init__(self, data_dir: Path | str, max_operation_mb: int | None, pool: KernelPool):
        self.data_dir = Path(data_dir)
        self.max_operation_mb = max_operation_mb
        self.pool = pool
        self.uploads: list[str] = []
        self.model_dir: Path | None = None
        self.key = b""
        self.settings_info: Callable[[], dict[str, Any]] | None = None
        self.log: list[dict[str, Any]] = []
        self.emptied: str | None = None
        self._pending: list[dict[str, Any]] | None = None
        self._mirror = Mirror()
        self._conn: KernelConnection | None = None
        self._opening = asyncio.Lock()
        self._settling: set[asyncio.Future[None]] = set()  # stopped calls not yet settled
        self._release_when_idle = False  # the page went while a step ran

    # -- what the app reads --------------------------------------------------------------
    @property
    def pending(self) -> list[dict[str, Any]] | None:
        return self._pending

    @pending.setter
    def pending(self, log: list[dict[str, Any]] | None) -> None:
        """A saved log to restore: a kernel holding another study ends first."""
        self._end_kernel()
        self._pending, self.log = log, []

    @property
    def stage(self) -> str:
        return str(self.facts()["stage"])

    def facts(self) -> dict[str, Any]:
        return planned(self._pending) if self._pending else dict(self._mirror.facts or planned([]))

    def summary(self) -> str:
        return pending_summary(self._pending) if self._pending else self._mirror.summary

    def context(self) -> str:
        return context_text(self.summary(), self.emptied, self.uploads)

    def told(self, sent: str) -> None:
        if self.emptied and f"Note for the user: {self.emptied}" in sent:
            self.emptied = None

    @property
    def running(self) -> bool:
        """Whether a kernel holds the study now."""
        return self._conn is not None and not self._conn.ended

    # -- calls ---------------------------------------------------------------------------
    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        """Run a tool (or EXPORT) in the kernel: its events are emitted here, its text returned,
        its error raised as the tool raised it."""
        call_id, name = current_tool_call()
        if not self.running:  # a process to start (a second or two) before the step begins
            emit(ToolProgress(call_id=call_id, name=name, message=STARTING, phase="starting"))
        conn = await self._ready()
        if self._pending:  # the kernel replays the saved steps before this one
            steps = len(self._pending)
            emit(ToolProgress(call_id=call_id, name=name, message=f"{RESTORING} ({steps} steps)",
                              data={"steps": steps}, phase="restoring"))  # fmt: skip
        number, queue = conn.open_call()
        info = self.settings_info() if self.settings_info is not None else {}
        call = Call(number, tool, args, call_id, name or tool, info)
        stopped = False
        try:
            if not conn.send(call):
                queue.put_nowait(Gone(conn.process.ended() or "its connection closed"))
            while True:
                message = await queue.get()
                if isinstance(message, Emitted):
                    emit(message.event)
                elif isinstance(message, Done):
                    self._take(message.mirror)
                    if message.ok:
                        return message.value
                    value = message.value
                    raise value if isinstance(value, ToolException) else ToolException(str(value))
                elif isinstance(message, Gone):
                    self._lost(conn)
                    raise ToolException(
                        f"{name or tool} failed: the study's process ended while it ran "
                        f"({message.why}). The study is rebuilt from its log, up to the step "
                        "before this one, at the next EEG step"
                    )
        except asyncio.CancelledError:
            stopped = True  # the call stays open until the kernel has settled it
            conn.send(Stop(number))
            settling = asyncio.ensure_future(self._settle(conn, number, queue))
            self._settling.add(settling)
            settling.add_done_callback(self._settling.discard)
            raise
        finally:
            if not stopped:
                conn.close_call(number)
            if self._release_when_idle and not conn.busy and self._conn is conn:
                self._end_kernel()

    async def export(self) -> Any:
        return await self.call(EXPORT, {})

    async def settled(self) -> None:
        """Wait until a stopped step has freed the study (or its kernel was ended)."""
        if self._settling:
            await asyncio.shield(asyncio.gather(*self._settling))

    async def release(self) -> None:
        """The page has gone: end the kernel; its study comes back from the log when needed.
        A kernel still running a step (the page was reloaded mid-run) ends when the step does:
        the run goes on without its page."""
        await self.settled()
        if self._conn is not None and self._conn.busy:
            self._release_when_idle = True
            return
        self._end_kernel()

    # -- the kernel ----------------------------------------------------------------------
    async def _ready(self) -> KernelConnection:
        self._release_when_idle = False  # in use again: the idle reaper ends it later
        if self._settling:
            call_id, name = current_tool_call()
            emit(ToolProgress(call_id=call_id, name=name, message=FINISHING, phase="waiting"))
            await self.settled()
        async with self._opening:
            if self._conn is None or self._conn.ended:
                self._conn = None
                conn = await self.pool.open(str(self.data_dir), self._end_kernel)
                start = Start(str(self.data_dir), self.max_operation_mb,
                              str(self.model_dir) if self.model_dir else None, self.key,
                              self._pending)  # fmt: skip
                conn.send(start)
                self._conn = conn
            return self._conn

    async def _settle(self, conn: KernelConnection, number: int, queue: asyncio.Queue) -> None:
        """After a Stop: the kernel's word that the study is free (or that the step had finished
        just before: its result is kept), else the kernel ends."""
        try:
            async with asyncio.timeout(STOP_GRACE):
                while True:
                    message = await queue.get()
                    if isinstance(message, Settled) or (
                        isinstance(message, Done) and not message.cancelled
                    ):
                        self._take(message.mirror)
                        conn.close_call(number)
                        return
                    if isinstance(message, Gone):
                        break
        except TimeoutError:
            pass
        self._lost(conn)
        conn.end()
        conn.close_call(number)

    def _take(self, mirror: Mirror) -> None:
        self._mirror, self.log, self._pending = mirror, list(mirror.log), mirror.pending
        if mirror.emptied:
            self.emptied = mirror.emptied

    def _lost(self, conn: KernelConnection) -> None:
        """The kernel is gone or going: the study is its last committed log, replayed later."""
        if self._conn is conn:
            self._end_kernel(kill=False)

    def _end_kernel(self, kill: bool = True) -> None:
        conn, self._conn = self._conn, None
        self._release_when_idle = False
        if self._pending is None and self.log:
            self._pending = list(self.log)
        self.log = []
        self._mirror = Mirror()
        if conn is not None:
            self.pool.forget(conn)
            if kill:
                with contextlib.suppress(OSError):
                    conn.end()


def kernel_tools(study: KernelStudy) -> list[BaseTool]:
    """The EEG tools, each running in the study's kernel (the same names, schemas and flags)."""
    from brainchat.eeg.study.study import Study
    from brainchat.eeg.tools.tools import build_eeg_tools

    return [_proxy(study, tool) for tool in build_eeg_tools(Study(study.data_dir))]


def _proxy(study: KernelStudy, tool: BaseTool) -> BaseTool:
    async def run(**kwargs: Any) -> Any:
        return await study.call(tool.name, kwargs)

    proxy = StructuredTool.from_function(
        coroutine=run, name=tool.name, description=tool.description,
        args_schema=tool.args_schema,  # type: ignore[arg-type]
        response_format=tool.response_format,  # (text, structured content) comes back whole
    )  # fmt: skip
    flags = flags_of(tool)
    return set_flags(proxy, **{k: getattr(flags, k) for k in flags.__dataclass_fields__})
