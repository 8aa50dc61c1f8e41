"""Tools that run as tasks (MCP 2025-11-25, `execution.taskSupport`).

A tool whose taskSupport is `required` MUST be called as a task (server-everything's
simulate-research-query answers -32601 otherwise): tools/call with the `task` parameter creates
it, tasks/get is polled (each new status message is the step's progress and restarts the call's
idle limit), tasks/result gives the CallToolResult, and Stop or the time limit sends tasks/cancel.
A task whose cancel did not go through stays listed (`open`) until it ends or is cancelled again:
it outlives its turn, so it is kept with its session and its owner (the user whose run started
it, `owned_by`), listed for that user alone (`open_tasks`, refreshed with tasks/get) and
cancelled by that user alone (`cancel_owned`); before each turn the app cancels it again.
`optional` tools are called directly: the specification leaves the choice to the client, and a
direct call streams its progress. The requests are sent as plain requests: the SDK's own
`session.experimental` helpers are deprecated (tasks left the 2026-07-28 revision, to return as
an extension).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import ToolException
from mcp import types

from brainchat.redact import mask
from brainchat.tools.mcp_call_limit import CallLimit, ProgressFn

TERMINAL = ("completed", "failed", "cancelled")
POLL_DEFAULT, POLL_MIN, POLL_MAX = 0.5, 0.1, 5.0  # seconds between tasks/get
CANCEL_WAIT = 5.0  # how long a tasks/cancel may take before the task is left listed
GET_WAIT = 5.0  # how long a tasks/get for a listing may take
_owner: contextvars.ContextVar[str] = contextvars.ContextVar("brainchat_mcp_task_owner", default="")
_every: weakref.WeakSet[Tasks] = weakref.WeakSet()  # each server's Tasks (configured or plugged)


@contextlib.contextmanager
def owned_by(owner: str) -> Iterator[None]:
    """Tasks started in this context (a turn's tool calls) belong to `owner` ("" without
    accounts: the one user)."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


def runs_as_task(tool: types.Tool | None) -> bool:
    """Must this tool be called as a task?"""
    return (
        tool is not None
        and tool.execution is not None
        and (tool.execution.taskSupport == "required")
    )


@dataclass
class OpenTask:
    """A task of this client's on a server: what a status row shows, and what cancel needs."""

    task_id: str
    tool: str
    status: str
    message: str
    started: float
    owner: str = ""
    session: Any = field(default=None, repr=False)  # the session it runs in (cancel, get)

    def row(self) -> dict[str, Any]:
        return {
            "task": self.task_id,
            "tool": self.tool,
            "status": self.status,
            "message": self.message,
            "seconds": round(time.monotonic() - self.started),
        }


class Tasks:
    """One server's tasks: run a task-required tool as a task; those still open; cancel one."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.open: dict[str, OpenTask] = {}
        _every.add(self)

    async def call(
        self,
        session: Any,
        tool: str,
        args: dict[str, Any],
        limit: CallLimit,
        progress: ProgressFn | None = None,
    ) -> types.CallToolResult:
        """Create the task, follow it to its end and return its result; cancelled (tasks/cancel)
        if this call is (Stop, the time limit)."""
        params = types.CallToolRequestParams(
            name=tool, arguments=args, task=types.TaskMetadata(ttl=int(limit.hard * 1000) + 60_000)
        )
        created = await session.send_request(
            types.ClientRequest(types.CallToolRequest(params=params)), types.CreateTaskResult
        )
        task = created.task
        entry = OpenTask(
            task.taskId, tool, task.status, task.statusMessage or "", time.monotonic(),
            owner=_owner.get(), session=session,
        )  # fmt: skip
        self.open[task.taskId] = entry
        try:
            return await self._follow(session, task, entry, progress)
        except BaseException:
            if entry.status not in TERMINAL:
                await self.cancel(session, task.taskId)
            raise
        finally:
            if entry.status in TERMINAL:
                self.open.pop(task.taskId, None)

    async def _follow(
        self, session: Any, task: types.Task, entry: OpenTask, progress: ProgressFn | None
    ) -> types.CallToolResult:
        updates = 0
        while task.status == "working":
            wait = (task.pollInterval or POLL_DEFAULT * 1000) / 1000
            await asyncio.sleep(min(max(wait, POLL_MIN), POLL_MAX))
            task = await session.send_request(
                types.ClientRequest(
                    types.GetTaskRequest(params=types.GetTaskRequestParams(taskId=task.taskId))
                ),
                types.GetTaskResult,
            )
            news = (task.status, task.statusMessage or "") != (entry.status, entry.message)
            entry.status, entry.message = task.status, task.statusMessage or ""
            if news and progress is not None:  # the step's progress; restarts the idle limit
                updates += 1
                await progress(updates, None, entry.message or task.status)
        what = f"MCP server '{self.server}', tool '{entry.tool}' (task {task.taskId})"
        if task.status == "failed":
            entry.status = "failed"
            raise ToolException(f"{what} failed: {mask(task.statusMessage or 'no message')}")
        if task.status == "cancelled":
            raise ToolException(f"{what} was cancelled by the server: {task.statusMessage or ''}")
        # completed, or input_required: tasks/result waits for the end (and carries the server's
        # questions meanwhile, as the specification says)
        result = await session.send_request(
            types.ClientRequest(
                types.GetTaskPayloadRequest(
                    params=types.GetTaskPayloadRequestParams(taskId=task.taskId)
                )
            ),
            types.CallToolResult,
        )
        entry.status = "completed"
        return result  # type: ignore[no-any-return]

    async def cancel(self, session: Any, task_id: str) -> bool:
        """tasks/cancel, bounded and shielded (it runs while the call is being cancelled); a task
        whose cancel fails stays listed with the reason."""
        entry = self.open.get(task_id)
        request = types.ClientRequest(
            types.CancelTaskRequest(params=types.CancelTaskRequestParams(taskId=task_id))
        )
        sent = asyncio.ensure_future(session.send_request(request, types.CancelTaskResult))
        try:
            await asyncio.wait_for(asyncio.shield(sent), CANCEL_WAIT)
        except BaseException as exc:  # noqa: BLE001 - the reason is kept for the status row
            sent.cancel()
            with contextlib.suppress(BaseException):
                await sent
            if entry is not None:
                entry.message = f"cancel failed: {type(exc).__name__} {mask(str(exc))[:200]}"
            return False
        if entry is not None:
            entry.status = "cancelled"
        self.open.pop(task_id, None)
        return True

    def rows(self) -> list[dict[str, Any]]:
        return [t.row() for t in self.open.values()]

    def left_open(self) -> str:
        """For a call's error: the tasks whose cancel did not go through, if any."""
        if not self.open:
            return ""
        names = ", ".join(f"{t.tool} (task {t.task_id}: {t.message})" for t in self.open.values())
        return f" Still open on the server: {names}; cancelled again before the next turn."

    async def cancel_open(self, session: Any) -> None:
        """Cancel again the tasks whose cancel did not go through (before a turn), each in the
        session it runs in (`session` for one that has none)."""
        for task_id, entry in list(self.open.items()):
            await self.cancel(entry.session or session, task_id)

    async def refresh(self, entry: OpenTask) -> None:
        """tasks/get for a listing: the status now; a task that ended, or that its server or
        session no longer knows, leaves the list (its end is the server's to report)."""
        request = types.ClientRequest(
            types.GetTaskRequest(params=types.GetTaskRequestParams(taskId=entry.task_id))
        )
        try:
            async with asyncio.timeout(GET_WAIT):
                task = await entry.session.send_request(request, types.GetTaskResult)
        except TimeoutError:
            entry.message = f"no answer to tasks/get within {GET_WAIT:g} s"
            return
        except Exception:  # noqa: BLE001 - unknown task, closed session: nothing left to cancel
            self.open.pop(entry.task_id, None)
            return
        entry.status, entry.message = task.status, task.statusMessage or entry.message
        if task.status in TERMINAL:
            self.open.pop(entry.task_id, None)


async def open_tasks(owner: str) -> list[tuple[str, OpenTask]]:
    """(server, task) for every task of `owner`'s still open on a server, each refreshed."""
    found = [(t, e) for t in list(_every) for e in list(t.open.values()) if e.owner == owner]
    await asyncio.gather(*(t.refresh(e) for t, e in found))
    return [(t.server, e) for t, e in found if e.task_id in t.open]


async def cancel_owned(owner: str, server: str, task_id: str) -> str | None:
    """Cancel `owner`'s task `task_id` on `server`: None when done, else why not (not theirs,
    already ended, or the server's refusal)."""
    for tasks in list(_every):
        entry = tasks.open.get(task_id)
        if tasks.server != server or entry is None or entry.owner != owner:
            continue
        if await tasks.cancel(entry.session, task_id):
            return None
        return entry.message or "the server did not confirm the cancel"
    return "it is no longer running (it ended, or it was cancelled already)"
