"""MCP tools as LangChain tools: schemas, names without clashes, results flattened to text."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import re
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from mcp import ClientSession, McpError, types
from mcp.shared.session import ProgressFnT

from brainchat import events
from brainchat.redact import mask
from brainchat.tools.mcp_call_limit import CallLimit, answers_ping, max_call_seconds, within
from brainchat.tools.mcp_content import MAX_RESULT_CHARS as MAX_RESULT_CHARS  # mcp_resources
from brainchat.tools.mcp_content import model_content, scrub
from brainchat.tools.mcp_tasks import Tasks, runs_as_task
from brainchat.tools.registry import set_flags

# How long a hung server's session may take to close before its task is cancelled
# (mcp_connection): a call that timed out waits for this before its error is raised.
SHUTDOWN_WAIT = 5.0
# How long a server whose call timed out has to answer a ping: one that does keeps its session.
PING_WAIT = 5.0
# Seconds the agent's own tool timeout adds to the MCP call's hard maximum: enough for the MCP
# layer to ping the server, shut a hung one's session down (bounded by SHUTDOWN_WAIT) and report
# its own timeout. With 2 s,
# a shutdown slowed by a busy machine was cut by the agent's limit: the step said '... did not
# finish within 3 s' instead of naming the MCP server's timeout.
TIMEOUT_GRACE = PING_WAIT + SHUTDOWN_WAIT + 2.0
# Tool name for the model: OpenAI allows ^[a-zA-Z0-9_-]{1,64}$.
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
PREFIX_SEP = "__"

# call(tool, args, timeout, progress): progress(done, total, message) for the server's
# progress notifications (None: none asked for)
CallFn = Callable[..., Awaitable[types.CallToolResult]]
ProgressFn = ProgressFnT  # async (progress, total, message) -> None


def safe_name(name: str) -> str:
    """A tool name the OpenAI API accepts; long names keep a hash so they stay distinct."""
    clean = _BAD_CHARS.sub("_", name) or "tool"
    if len(clean) > 64:
        clean = clean[:55] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return clean


def assign_names(
    server_tools: dict[str, list[str]], reserved: Iterable[str] = ()
) -> dict[tuple[str, str], str]:
    """(server, tool) -> exposed name; a name offered twice, or reserved, gets `server__tool`."""
    reserved = set(reserved)
    counts: dict[str, int] = {}
    for tools in server_tools.values():
        for tool in set(tools):
            counts[safe_name(tool)] = counts.get(safe_name(tool), 0) + 1
    names: dict[tuple[str, str], str] = {}
    taken = set(reserved)
    for server in sorted(server_tools):
        for tool in server_tools[server]:
            plain = safe_name(tool)
            name = plain
            if counts[plain] > 1 or plain in reserved:
                name = safe_name(f"{server}{PREFIX_SEP}{tool}")
            base, n = name, 2
            while name in taken:  # only for pathological names
                name, n = safe_name(f"{base}_{n}"), n + 1
            taken.add(name)
            names[(server, tool)] = name
    return names


def input_schema(tool: types.Tool) -> dict[str, Any]:
    """The server's JSON schema, made acceptable to OpenAI-style function calling."""
    schema = dict(tool.inputSchema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def error_text(result: types.CallToolResult) -> str:
    parts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    return mask("\n".join(parts).strip()) or "no message"


def make_tool(
    server: str,
    mcp_tool: types.Tool,
    call: CallFn,
    *,
    name: str,
    read_only: bool,
    destructive: bool,
    timeout: float,
    ask_first: bool = False,
    configured: bool = False,
) -> StructuredTool:
    """One MCP tool as a LangChain tool returning (text, artifact); artifact = rich data for the UI."""
    tool_name = mcp_tool.name
    schema = input_schema(mcp_tool)
    required = set(schema.get("required", []))

    async def run(**kwargs: Any) -> tuple[str, dict[str, Any]]:
        # Models often send null for optional arguments; strict servers reject it.
        args = {k: v for k, v in kwargs.items() if v is not None or k in required}
        result = await call(tool_name, args, timeout, progress_reporter(tool_name))
        if result.isError:
            raise ToolException(
                f"MCP server '{server}', tool '{tool_name}' returned an error: {error_text(result)}"
            )
        # an agent run's tool call streams its events to a page (or the CLI); a bare call, nobody
        given = model_content(result, can_show=bool(events.current_tool_call()[0]))
        _emit_images(tool_name, given.images)
        artifact = {
            "server": server,
            "tool": tool_name,
            "structured": scrub(result.structuredContent),
            "content": [_block_for_ui(b) for b in result.content],
        }
        return given.text, artifact

    tool = StructuredTool(
        name=name,
        description=(mcp_tool.description or mcp_tool.title or f"Tool '{tool_name}'")
        + ("" if name == tool_name else f" (tool '{tool_name}' of MCP server '{server}')"),
        args_schema=schema,
        coroutine=run,
        response_format="content_and_artifact",
        metadata={
            "mcp_server": server,
            "mcp_tool": tool_name,
            "mcp_annotations": hints_of(mcp_tool),
            "mcp_configured": configured,  # from mcp_servers.json, not the user's plug button
        },
    )
    return set_flags(  # type: ignore[return-value]
        tool,
        source=f"mcp:{server}",
        read_only=read_only,
        destructive=destructive,
        ask_first=ask_first,
        # The agent's outer limit waits a little longer than the longest the MCP layer lets
        # progress extend a call, so the MCP layer reports its own timeout first.
        timeout=max(timeout, max_call_seconds()) + TIMEOUT_GRACE,
    )


def progress_reporter(tool_name: str) -> ProgressFn:
    """The server's progress notifications as ToolProgress events of the running call (the step's
    title shows them). The SDK calls this from the session's reader task, which is not the run's
    context: the run's event sink and tool call are captured here and used there."""
    context = contextvars.copy_context()
    call_id, name = events.current_tool_call()

    async def report(progress: float, total: float | None, message: str | None) -> None:
        done = progress
        fraction = done / total if total else None
        text = mask(message or "") or (f"{done:g} of {total:g}" if total else f"{done:g} done")
        event = events.ToolProgress(
            call_id=call_id, name=name or tool_name, message=text[:200], fraction=fraction
        )
        context.run(events.emit, event)

    return report


def hints_of(mcp_tool: types.Tool) -> dict[str, Any]:
    """The server's own ToolAnnotations that it set (readOnlyHint, destructiveHint, ...)."""
    annotations = mcp_tool.annotations
    return annotations.model_dump(exclude_none=True) if annotations else {}


def _emit_images(tool_name: str, images: list[tuple[str, bytes, str]]) -> None:
    call_id, name = events.current_tool_call()
    for i, (_mime, raw, label) in enumerate(images):  # the UI reads the type from the bytes
        title = f"{tool_name} image {i + 1}" + (f" ({label.rsplit('/', 1)[-1]})" if label else "")
        events.emit(events.ToolImage(call_id=call_id, name=name or tool_name, title=title, png=raw))


def _block_for_ui(block: types.ContentBlock) -> dict[str, Any]:
    """A content block for the step's artifact: binary data replaced by a note of its size."""
    data = block.model_dump(mode="json", exclude_none=True)
    binary = data if "data" in data else data.get("resource", {})
    for key in ("data", "blob"):
        if isinstance(binary.get(key), str):
            binary[key] = f"<{len(binary[key])} base64 characters, not shown>"
    return scrub(data)  # type: ignore[no-any-return]


async def list_all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool of a session, following pagination."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    return tools


async def tools_from_session(
    server_name: str,
    session: ClientSession,
    *,
    read_only: bool = False,
    destructive: bool = False,
    timeout: float = 30.0,  # noqa: ASYNC109 (the per-call limit each tool applies)
    reserved_names: Iterable[str] = (),
) -> list[BaseTool]:
    """Wrap an open session owned by someone else (Chainlit's `on_mcp_connect`) as tools.

    A tool with `destructiveHint: true` asks every time; one without `readOnlyHint: true` asks
    before its first use in a conversation; the hints never make a tool read-only (parallel).
    """
    mcp_tools = await list_all_tools(session)
    names = assign_names({server_name: [t.name for t in mcp_tools]}, reserved_names)
    call = _plugged_call(session, server_name, {t.name: t for t in mcp_tools})

    return [
        make_tool(
            server_name,
            t,
            call,
            name=names[(server_name, t.name)],
            timeout=timeout,
            **_user_flags(t, read_only, destructive),
        )
        for t in mcp_tools
    ]


def _plugged_call(
    session: ClientSession, server_name: str, listed: dict[str, types.Tool]
) -> CallFn:
    """`call(tool, args, seconds, progress)` on a session someone else owns: progress extends
    the limit, a timeout cancels the call (the session stays theirs), a task-required tool runs
    as a task, errors become messages."""
    asking, tasks = _question_route(session, server_name), Tasks(server_name)

    def start(tool: str, args: dict[str, Any], limit: CallLimit, progress: Any) -> Any:
        if runs_as_task(listed.get(tool)):
            return tasks.call(session, tool, args, limit, limit.forward(progress))
        return session.call_tool(
            tool,
            args,
            read_timeout_seconds=timedelta(seconds=limit.hard + SHUTDOWN_WAIT),
            progress_callback=limit.forward(progress),
        )

    async def call(
        tool: str, args: dict[str, Any], seconds: float, progress: ProgressFn | None = None
    ) -> types.CallToolResult:
        limit, open_ = CallLimit(seconds), asyncio.Event()  # progress extends the limit
        try:
            with asking(tool, seconds):  # who answers the server's question now
                return await within(  # type: ignore[no-any-return]
                    start(tool, args, limit, progress), open_, limit
                )
        except TimeoutError:
            if await answers_ping(session, open_, PING_WAIT):
                raise ToolException(
                    f"MCP server '{server_name}': " + limit.cancelled(f"tool '{tool}'")
                ) from None
            raise ToolException(
                f"MCP server '{server_name}', tool '{tool}' did not answer within "
                f"{limit.elapsed():.0f} s, nor a ping after it; reconnect it from the MCP button"
            ) from None
        except McpError as exc:
            raise ToolException(
                f"MCP server '{server_name}', tool '{tool}' failed: {describe_error(exc)}"
            ) from None
        except ToolException:
            raise  # a failed task
        except Exception as exc:  # transport gone: closed stream, HTTP error...
            if schema_error := output_schema_error(exc):
                raise ToolException(
                    f"MCP server '{server_name}', tool '{tool}' {schema_error}"
                ) from None
            raise ToolException(
                f"MCP server '{server_name}' is unreachable ({describe_error(exc)}); "
                "reconnect it from the MCP button in the chat bar"
            ) from None

    return call


def _question_route(session: ClientSession, server_name: str) -> Callable[[str, float], Any]:
    """`calling(tool, seconds)`: the run whose call is open answers the server's questions
    (a plugged session, mcp_client_session.PluggedSession, routes them; another asks nobody)."""
    route = getattr(session, "elicitations", None)
    if route is None:
        return lambda tool, seconds: contextlib.nullcontext()
    route.server = server_name
    return route.calling  # type: ignore[no-any-return]


def _user_flags(mcp_tool: types.Tool, read_only: bool, destructive: bool) -> dict[str, bool]:
    """Flags of a user-connected server's tool, from its own hints (which never make it parallel)."""
    hints = hints_of(mcp_tool)
    marked = destructive or hints.get("destructiveHint") is True
    asks = hints.get("readOnlyHint") is not True
    return {"read_only": read_only and not marked, "destructive": marked, "ask_first": asks}


def output_schema_error(exc: BaseException) -> str | None:
    """The SDK's check of structuredContent against the tool's outputSchema failed: what to say
    (the result is wrong, the session is fine), else None. It raises a bare RuntimeError."""
    text = str(exc)
    if not isinstance(exc, RuntimeError) or not (
        text.startswith(("Invalid structured content", "Invalid schema for tool"))
        or "has an output schema but did not return structured content" in text
    ):
        return None
    first = text.split(": ", 1)[-1].splitlines()[0] if ": " in text else text
    return f"returned structured content that does not match its outputSchema: {mask(first)}"


def describe_error(exc: BaseException) -> str:
    """One line for an exception, unwrapping the exception groups anyio raises; secrets masked."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = mask(str(exc).strip())
    if isinstance(exc, McpError):
        return text or "MCP error"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
