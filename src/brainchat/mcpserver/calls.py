"""One MCP tool call on the session's study: progress notifications, figures as images, and
every failure as an isError result with the tool's own message (never a traceback)."""

from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from mcp import types
from pydantic import ValidationError

from brainchat import redact
from brainchat.agent.toolrun import validation_text
from brainchat.events import EventQueue, ToolImage, ToolProgress, set_tool_call, unbind

log = redact.get_logger(__name__)


class Progress:
    """Progress notifications for one request's progressToken. The specification wants each
    notification's value above the last; steps that say no fraction (waiting, finishing) still
    get one, a hair above the last (and none once the step reported it was done)."""

    def __init__(self, send: Callable[[float, float, str], Awaitable[None]]) -> None:
        self._send = send
        self.last = -1.0

    async def report(self, fraction: float | None, message: str) -> None:
        value = min(max(fraction, 0.0), 1.0) if fraction is not None else self.last
        if value <= self.last:
            if self.last >= 1.0:
                return  # all done already: nothing above it to report
            value = math.nextafter(self.last, math.inf) if self.last >= 0 else 0.0
        self.last = value
        await self._send(value, 1.0, message)


def error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


async def run_call(
    tool: BaseTool,
    arguments: dict[str, Any],
    *,
    call_id: str,
    limit: float,
    progress: Progress | None = None,
) -> types.CallToolResult:
    """Run `tool` with the events its study emits turned into MCP: ToolProgress into progress
    notifications (with a progressToken), ToolImage into image content beside the text."""
    events = EventQueue()
    figures: list[ToolImage] = []
    forward = asyncio.create_task(_forward(events.queue, figures, progress))
    sink, call = events.bind(), set_tool_call(call_id, tool.name)
    finished = False
    try:
        events.put(ToolProgress(call_id=call_id, name=tool.name, message="started", fraction=0.0))
        result = await _invoke(tool, arguments, limit)
        if not result.isError:
            events.put(
                ToolProgress(call_id=call_id, name=tool.name, message="finished", fraction=1.0)
            )
        events.put(None)
        finished = True
        await forward  # every notification is sent before the result
    finally:
        unbind(sink)
        from brainchat.events import _tool_call

        _tool_call.reset(call)
        if not finished:  # cancelled by the client: a stopped step may still emit; nobody listens
            forward.cancel()
    images = [
        types.ImageContent(
            type="image", data=base64.b64encode(f.png).decode("ascii"), mimeType="image/png"
        )
        for f in figures
    ]
    return types.CallToolResult(
        content=[*result.content, *images],
        structuredContent=result.structuredContent,
        isError=result.isError,
    )


async def _forward(
    queue: asyncio.Queue[Any], figures: list[ToolImage], progress: Progress | None
) -> None:
    while (event := await queue.get()) is not None:
        if isinstance(event, ToolImage):
            figures.append(event)
        elif isinstance(event, ToolProgress) and progress is not None:
            try:
                await progress.report(event.fraction, f"{event.name}: {event.message}")
            except Exception:  # noqa: BLE001 - a client gone mid-call must not fail the call
                log.debug("progress notification not sent", exc_info=True)


async def _invoke(tool: BaseTool, arguments: dict[str, Any], limit: float) -> types.CallToolResult:
    name = tool.name
    try:
        text, structured = await asyncio.wait_for(_ainvoke(tool, arguments), limit)
    except ToolException as exc:
        return error(redact.mask(str(exc)))
    except ValidationError as exc:
        return error(f"invalid arguments for {name}: {validation_text(exc)}")
    except TimeoutError:
        return error(f"{name} did not finish within {limit:.0f} s and was stopped")
    except Exception as exc:  # noqa: BLE001 - a tool failure is a result, never a crash
        log.warning("%s failed", name, exc_info=True)  # the operator's log (stderr)
        first = str(exc).splitlines()[0][:300] if str(exc) else ""
        return error(redact.mask(f"{name} failed: {type(exc).__name__}: {first}".rstrip(": ")))
    content = text if isinstance(text, str) else str(text)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=content)], structuredContent=structured
    )


async def _ainvoke(tool: BaseTool, arguments: dict[str, Any]) -> tuple[Any, dict | None]:
    """The tool's text, and its structured content when it returns one (an analysis's result:
    the same figures as the text, as JSON a client can read without parsing the table)."""
    if tool.response_format != "content_and_artifact":
        return await tool.ainvoke(arguments), None
    message = await tool.ainvoke(
        {"name": tool.name, "args": arguments, "id": "mcp", "type": "tool_call"}
    )
    artifact = getattr(message, "artifact", None)
    structured = artifact.get("structured") if isinstance(artifact, dict) else None
    return message.content, structured if isinstance(structured, dict) else None
