"""Shared plumbing of the EEG tools: running a study op, and making a flagged LangChain tool."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib
import inspect
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from brainchat.eeg.core.state import Op, Step
from brainchat.eeg.io.paths import without_server_paths
from brainchat.eeg.study.study import Study, Turn
from brainchat.events import current_tool_call
from brainchat.tools.registry import set_flags

if TYPE_CHECKING:
    from brainchat.eeg.export.export import Exported

READ_ONLY = {"read_only": True}
KERNEL_MEMORY_ENV = "BRAINCHAT_KERNEL_MEMORY_MB"
DESTRUCTIVE = {"destructive": True}


# Imported before an EEG tool first runs, in a thread: MNE (and torch, for training) take a second
# or two to import, and an import on the event loop would stall every session meanwhile.
STUDY_MODULES = ("brainchat.eeg.preprocessing.preprocessing",)
TRAINING_MODULES = ("brainchat.eeg.decoding.training",)


async def preload(names: tuple[str, ...]) -> None:
    """Import `names` in a worker thread unless already imported (then it costs nothing)."""
    for name in names:
        if name not in sys.modules:
            await asyncio.to_thread(importlib.import_module, name)


async def run_op(
    study: Study,
    op: Op,
    mutates_data: bool = False,
    record: dict[str, Any] | None = None,
    turn: Turn | None = None,
    report: bool = False,
) -> str:
    """Run an op; unexpected library errors become a clear ToolException (the study is unchanged).

    `record` is the op's entry in the study's log (replayed when the conversation is resumed);
    `report`: the op changes nothing but its entry is logged (an analysis and its result).
    """
    try:
        return await study.run(
            op, mutates_data=mutates_data, record=record, turn=turn, report=report
        )
    except ToolException:
        raise
    except (ValueError, RuntimeError, TypeError, KeyError, OSError, MemoryError) as exc:
        name = current_tool_call()[1] or "the operation"
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        first = without_server_paths(first, study.data_dir)  # a library's error names its files
        first = first.rstrip(" .")  # MNE's own text ends with a period: one, not two
        if isinstance(exc, MemoryError):  # the OS refused the memory (a kernel's limit)
            first = (
                f"out of memory ({first}); ask for less (fewer or shorter files, a lower "
                f"rate, fewer channels), or ask the operator to raise {KERNEL_MEMORY_ENV}"
            )
        raise ToolException(f"{name} failed: {first}. The study is unchanged") from None


async def export_study(study: Study) -> Exported:
    """Export the study as it is now (a saved study is replayed first); a ToolException says why
    not (nothing to export, a step the exporter cannot write, a file that could not be written).
    Here, not in export/: the export runs through `run_op` like every tool's op."""
    from brainchat.eeg.export.export import export_op

    out: list[Exported] = []
    await run_op(study, export_op(study, out))
    return out[0]


def step(op: str, params: dict[str, Any], label: str) -> tuple[Callable[[], Op], dict[str, Any]]:
    """The op factory of a preprocessing step, and its log entry."""

    def make() -> Op:
        from brainchat.eeg.preprocessing.preprocessing import step_op

        return step_op(Step(op, params, label))

    return make, {"op": "step", "step": {"op": op, "params": params, "label": label}}


async def in_thread(fn: Callable[..., str], /, **kwargs: Any) -> str:
    """Run a blocking tool body in a worker thread, so every other session's coroutines go on.

    `fn` gets a `stop` event (keyword) that is set when the caller gives up (the tool's timeout,
    a cancelled run); the body should check it and end early. The thread is not waited for:
    a timed-out tool reports at once and its thread ends at its next check of `stop`.
    """
    stop = threading.Event()
    context = contextvars.copy_context()  # the tool-call id and event sink follow into the thread
    call = functools.partial(context.run, fn, stop=stop, **kwargs)
    try:
        return await asyncio.get_running_loop().run_in_executor(None, call)
    except asyncio.CancelledError:
        stop.set()
        raise


def make_tool(
    fn: Callable[..., Any],
    name: str,
    description: str,
    schema: type,
    structured: bool = False,
    **flags: Any,
) -> BaseTool:
    """A flagged local tool. A plain (blocking) function body runs through `in_thread`; it must
    accept a `stop` keyword; a coroutine function runs on the event loop and must not block.
    `structured`: the body returns (text, {"structured": value}): the value is the tool's
    structured content (the step shows it, the MCP server returns it)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def coroutine(**kwargs: Any) -> str:
            await preload(STUDY_MODULES)
            return await fn(**kwargs)

    else:

        @functools.wraps(fn)
        async def coroutine(**kwargs: Any) -> str:
            return await in_thread(fn, **kwargs)

    tool = StructuredTool.from_function(
        coroutine=coroutine,
        name=name,
        description=description,
        args_schema=schema,
        response_format="content_and_artifact" if structured else "content",
    )
    return set_flags(tool, source="local", **flags)
