"""An MCP server (the SDK's low-level Server with its experimental task support) with a tool
whose `execution.taskSupport` is `required`, like server-everything's simulate-research-query:
called without the task parameter it answers -32601; called as a task it works in steps,
updating the task's status message, and stops when the client cancels the task (tasks/cancel),
writing 'cancelled' to `path`. `note`/`read_note` keep a value in the process."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.experimental.tasks.helpers import cancel_task

warnings.simplefilter("ignore", DeprecationWarning)  # the SDK marks its task API experimental
server = Server("task-lab")
support = server.experimental.enable_tasks()
_cancelled: set[str] = set()
_refuse_once: set[str] = set()  # tasks whose first tasks/cancel fails
_kept: dict[str, str] = {}

RESEARCH = types.Tool(
    name="research",
    description="Research a topic in `steps` steps of `seconds` each (runs as a task).",
    inputSchema={
        "type": "object",
        "properties": {
            "topic": {"type": "string"},
            "steps": {"type": "integer", "default": 3},
            "seconds": {"type": "number", "default": 0.2},
            "path": {"type": "string", "default": ""},
            "fail": {"type": "string", "default": ""},
            "refuse_cancel": {"type": "boolean", "default": False},
            "ask": {"type": "string", "default": ""},
        },
        "required": ["topic"],
    },
    execution=types.ToolExecution(taskSupport="required"),
)
NOTE = types.Tool(
    name="note",
    description="Keep a value in this process.",
    inputSchema={"type": "object", "properties": {"value": {"type": "string"}}},
)
READ_NOTE = types.Tool(
    name="read_note", description="The kept value.", inputSchema={"type": "object"}
)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [RESEARCH, NOTE, READ_NOTE]


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


@server.call_tool()
async def call_tool(name: str, args: dict[str, Any]) -> Any:
    if name == "note":
        _kept["value"] = str(args.get("value", ""))
        return _text("kept")
    if name == "read_note":
        return _text(_kept.get("value", "(nothing)"))
    ctx = server.request_context
    ctx.experimental.validate_for_tool(RESEARCH)  # -32601 unless called as a task

    async def work(task: ServerTaskContext) -> types.CallToolResult:
        steps, path = int(args.get("steps", 3)), str(args.get("path", ""))
        if path:
            Path(path).write_text("started")  # noqa: ASYNC240 - a test server
        if args.get("refuse_cancel"):
            _refuse_once.add(task.task_id)
        if args.get("ask"):  # input_required: the question goes out with tasks/result
            schema = {"type": "object", "properties": {"depth": {"type": "integer"}}}
            answer = await task.elicit(str(args["ask"]), schema)
            return _text(f"asked: {answer.action}")
        if args.get("fail"):
            raise RuntimeError(str(args["fail"]))  # the SDK marks the task failed with this
        for i in range(steps):
            try:
                if task.task_id in _cancelled:
                    raise ValueError("cancelled")
                await task.update_status(f"step {i + 1} of {steps}: reading sources")
            except ValueError:  # cancelled (tasks/cancel), perhaps between check and update
                if path:
                    Path(path).write_text("cancelled")  # noqa: ASYNC240 - a test server
                # the SDK completes or fails a task whose local copy is not terminal, which
                # raises for a cancelled one: refresh the copy from the store
                task._ctx._task = await support.store.get_task(task.task_id)  # type: ignore
                return _text("cancelled")
            await anyio.sleep(float(args.get("seconds", 0.2)))
        return _text(f"report on {args['topic']}: {steps} steps")

    return await ctx.experimental.run_task(work)


@server.experimental.cancel_task()
async def on_cancel(request: types.CancelTaskRequest) -> types.CancelTaskResult:
    if request.params.taskId in _refuse_once:
        _refuse_once.discard(request.params.taskId)
        raise RuntimeError("busy, try again")
    _cancelled.add(request.params.taskId)
    return await cancel_task(support.store, request.params.taskId)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
