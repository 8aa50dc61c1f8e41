"""Shared plumbing of the EEG tools: running a study op, and making a flagged LangChain tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from brainchat.eeg.state import Op, Step
from brainchat.eeg.study import Study
from brainchat.events import current_tool_call
from brainchat.tools.registry import set_flags

READ_ONLY = {"read_only": True}
DESTRUCTIVE = {"destructive": True}


async def run_op(study: Study, op: Op, mutates_data: bool = False) -> str:
    """Run an op; unexpected library errors become a clear ToolException (the study is unchanged)."""
    try:
        return await study.run(op, mutates_data=mutates_data)
    except ToolException:
        raise
    except (ValueError, RuntimeError, TypeError, KeyError, OSError, MemoryError) as exc:
        name = current_tool_call()[1] or "the operation"
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise ToolException(f"{name} failed: {first}. The study is unchanged") from None


def step(op: str, params: dict[str, Any], label: str) -> Callable[[], Op]:
    def make() -> Op:
        from brainchat.eeg.preprocessing import step_op

        return step_op(Step(op, params, label))

    return make


def make_tool(
    fn: Callable[..., Awaitable[str]], name: str, description: str, schema: type, **flags: Any
) -> BaseTool:
    tool = StructuredTool.from_function(
        coroutine=fn, name=name, description=description, args_schema=schema
    )
    return set_flags(tool, source="local", **flags)
