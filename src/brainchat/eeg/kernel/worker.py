"""The kernel process: one Study and its EEG tools, driven over one connection by the app.

Started by a launcher as `python -m brainchat.eeg.kernel.worker FD MEMORY_MB`: FD is its end of
a socket pair, MEMORY_MB the address space the operating system lets it map (0: no limit). It
serves until the app closes the connection (or dies), then exits: a kernel never outlives its app.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import pickle
import signal
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.kernel.protocol import EXPORT, Call, Done, Emitted, Mirror, Settled, Start, Stop

MB = 2**20
NICE = 10  # a kernel's scheduling priority below the app's (0), as a job scheduler's batch queue


def limit_memory(mb: int) -> None:
    """Let the OS refuse this process more than `mb` MB of data (MemoryError then).

    RLIMIT_DATA counts what the process writes to: its heap and anonymous maps (numpy's and
    torch's arrays), not address space it only reserves (a CUDA runtime reserves tens of GB,
    which RLIMIT_AS would refuse at its first use of the GPU)."""
    if mb > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (mb * MB, mb * MB))


def mirror(study: Any) -> Mirror:
    """The study as the app keeps it; the note of an emptied study goes once."""
    emptied, study.emptied = study.emptied, None
    return Mirror(
        stage=study.stage,
        summary=study.summary(),
        facts=study.facts(),
        log=list(study.log),
        pending=list(study.pending) if study.pending else None,
        emptied=emptied,
    )


class Kernel:
    """The study, its tools and the calls under way."""

    def __init__(self, conn: Connection, start: Start) -> None:
        from brainchat.eeg.study.study import Study
        from brainchat.eeg.tools.tools import build_eeg_tools

        self.conn = conn
        self.study = Study(start.data_dir, start.max_operation_mb)
        self.study.pending = start.pending
        self.study.model_dir = Path(start.model_dir) if start.model_dir else None
        self.study.key = start.key
        self.tools = {t.name: t for t in build_eeg_tools(self.study)}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._send_lock = threading.Lock()

    def send(self, message: Any) -> None:
        """Send from any thread (events come from the study's threads too)."""
        with self._send_lock:
            self.conn.send(message)

    def emit(self, number: int, event: Any) -> None:
        """An event of call `number`; one that cannot be sent is dropped, never failing the step
        (the app gone: the kernel ends when its inbox sees it)."""
        try:
            self.send(Emitted(number, event))
        except (OSError, TypeError, AttributeError, pickle.PicklingError):
            pass

    def finish(self, number: int, ok: bool, value: Any, name: str) -> None:
        """The call's answer; a value that cannot be sent becomes an error the app can show."""
        try:
            self.send(Done(number, ok, value, mirror(self.study)))
        except (TypeError, AttributeError, pickle.PicklingError) as exc:
            text = f"{name} failed: its result could not be sent back ({type(exc).__name__})"
            self.send(Done(number, False, text, mirror(self.study)))

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[Any] = asyncio.Queue()

        def read() -> None:
            while True:
                try:
                    message = self.conn.recv()
                except (EOFError, OSError):
                    loop.call_soon_threadsafe(inbox.put_nowait, None)
                    return
                loop.call_soon_threadsafe(inbox.put_nowait, message)

        threading.Thread(target=read, name="kernel-inbox", daemon=True).start()
        while (message := await inbox.get()) is not None:
            if isinstance(message, Stop):
                if (task := self.tasks.get(message.id)) is not None:
                    task.cancel()
            elif isinstance(message, Call):
                context = contextvars.copy_context()
                task = asyncio.create_task(self.run(message), context=context)
                self.tasks[message.id] = task
                task.add_done_callback(functools.partial(self._forget, message.id))

    def _forget(self, number: int, _: object) -> None:
        self.tasks.pop(number, None)

    async def run(self, call: Call) -> None:
        events.set_tool_call(call.call_id, call.name)
        events._sink.set(functools.partial(self.emit, call.id))
        self.study.settings_info = lambda: dict(call.info)
        try:
            if call.tool == EXPORT:
                from brainchat.eeg.tools.toolkit import export_study

                value: Any = await export_study(self.study)
            else:
                tool = self.tools[call.tool]
                value = await tool.coroutine(**call.args)  # type: ignore[attr-defined]
        except asyncio.CancelledError:
            self.send(Done(call.id, False, None, mirror(self.study), cancelled=True))
            await self.study.settled()  # the step's thread has ended: the study is free
            self.send(Settled(call.id, mirror(self.study)))
            return
        except ToolException as exc:
            self.finish(call.id, False, _portable(exc), call.name)
            return
        except Exception as exc:  # noqa: BLE001 - any failure is the tool's, told as text
            first = str(exc).splitlines()[0][:300] if str(exc) else ""
            self.finish(call.id, False, f"{call.name} failed: {type(exc).__name__}: {first}",
                        call.name)  # fmt: skip
            return
        self.finish(call.id, True, value, call.name)


def _portable(exc: ToolException) -> Any:
    """The exception itself when it survives pickling (a ToolError keeps its next call)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - an exception carrying something unpicklable: its text
        return str(exc)
    return exc


def main(argv: list[str]) -> None:
    fd, memory_mb = int(argv[0]), int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C in a terminal is the app's to handle
    os.nice(NICE)  # batch work yields the cores to the app's pages and chats
    limit_memory(memory_mb)
    conn = Connection(fd)
    start = conn.recv()
    assert isinstance(start, Start)
    asyncio.run(Kernel(conn, start).serve())
    os._exit(0)  # the app has gone: end now, a study thread still running included


if __name__ == "__main__":
    main(sys.argv[1:])
