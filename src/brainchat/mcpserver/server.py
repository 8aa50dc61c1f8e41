"""The MCP server: one EEG study per MCP session (the server's lifespan runs once per session),
its tools listed with their hints and called through `calls.run_call`."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.context import RequestContext

from brainchat import redact
from brainchat.mcpserver.calls import Progress, error, run_call
from brainchat.mcpserver.catalog import mcp_tool
from brainchat.mcpserver.handles import HandleTable, handle_folder, handle_settings, owner_of
from brainchat.mcpserver.structured import mismatch, structured
from brainchat.settings import Settings
from brainchat.tools.registry import flags_of

log = redact.get_logger(__name__)

INSTRUCTIONS = (
    "EEG analysis on one study per session (MNE-Python, PyTorch): list_data_files, load_data "
    "(paths relative to the data folder; nothing outside it can be read), then preprocessing, "
    "epoch_data, split_dataset, train_model, evaluate_model and the plots. get_study_state shows "
    "where the study stands. Figures come back as PNG images. load_data returns a study handle: "
    "a client that opens a new session per call passes it as `study` to every later call."
)


@dataclass
class SessionStudy:
    """What one MCP session owns: its study, the tools bound to it, and its handle once
    load_data gave it one (then sessions holding the handle share it)."""

    study: Any
    tools: dict[str, BaseTool]
    listed: list[types.Tool]
    handle: str | None = None


def build_server(settings: Settings) -> Server[SessionStudy, Any]:
    counter = itertools.count(1)

    def new_study() -> SessionStudy:
        from brainchat.eeg.kernel import make_study, study_tools

        study = make_study(settings.data_dir, settings.max_operation_mb)
        tools = study_tools(study)
        return SessionStudy(study, {t.name: t for t in tools}, [mcp_tool(t) for t in tools])

    handles = HandleTable(*handle_settings(), folder=handle_folder(), make=new_study)

    @asynccontextmanager
    async def one_study(_: Server[SessionStudy, Any]) -> AsyncIterator[SessionStudy]:
        entry = new_study()
        try:
            yield entry
        finally:  # the session has ended: its study's memory goes with it, unless a handle
            if entry.handle is None:  # keeps it (then its kernel ends when idle or it expires)
                await entry.study.release()

    server: Server[SessionStudy, Any] = Server(
        "brainchat", version=version(), instructions=INSTRUCTIONS, lifespan=one_study
    )

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return server.request_context.lifespan_context.listed

    async def study_of(arguments: dict[str, Any], owner: str) -> SessionStudy | None:
        """The study a call runs on: its `study` handle's (None: refused), else the session's."""
        own: SessionStudy = server.request_context.lifespan_context
        handle = arguments.pop("study", None)
        if handle is None and own.handle is not None:
            await handles.find(own.handle, owner)  # in use: its handle stays alive
        return own if handle is None else await handles.find(str(handle), owner)

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        ctx = server.request_context
        arguments, owner = dict(arguments), owner_of(ctx.request)
        handle = arguments.get("study")
        if (entry := await study_of(arguments, owner)) is None:
            return error(handles.refusal(str(handle)))
        tool = entry.tools.get(name)
        if tool is None:
            return error(f"unknown tool {name!r}; list the tools to see their names")
        flags = flags_of(tool)
        if flags.destructive and not await _confirmed(ctx, tool):
            return error(f"the user did not approve running {name}; nothing was changed")
        result = await run_call(
            tool,
            arguments,
            call_id=f"mcp-{next(counter)}",
            limit=flags.timeout or settings.limits.tool_timeout,
            progress=_progress(ctx),
        )
        return result if result.isError else await _finish(name, result, entry, handles, owner)

    return server


async def _finish(
    name: str, result: types.CallToolResult, entry: SessionStudy, handles: HandleTable, owner: str
) -> types.CallToolResult:
    """A successful call's result: load_data's with the study's handle (text and structured),
    every tool's with its structured content (structured.py)."""
    if name == "load_data":
        issued = await handles.issue(entry, owner)
        said = f"study handle: {issued} (pass study={issued!r} to continue this study from "
        said = said + "any session)" if issued else handles.no_handle()
        result.content.insert(1, types.TextContent(type="text", text=said))
    handles.save(entry)  # a handle's study as it is now, for a later process
    result.structuredContent = structured(name, entry.study, entry.handle, result.structuredContent)
    if why := mismatch(name, result.structuredContent):  # a bug here: say so, keep the text
        log.warning("%s: structured content does not fit its outputSchema: %s", name, why)
        note = f"brainchat could not give this result as structured content ({why}); the text "
        note += "above is the result. Please report it"
        result.content.append(types.TextContent(type="text", text=note))
        result.structuredContent, result.isError = None, True
    return result


def version() -> str:
    """brainchat's installed version (serverInfo.version; the SDK's own otherwise)."""
    from importlib import metadata

    try:
        return metadata.version("brainchat")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        import brainchat

        return brainchat.__version__


def _progress(ctx: RequestContext[Any, Any, Any]) -> Progress | None:
    """Progress notifications when the client asked for them (a progressToken)."""
    token = ctx.meta.progressToken if ctx.meta is not None else None
    if token is None:
        return None

    async def send(progress: float, total: float, message: str) -> None:
        await ctx.session.send_progress_notification(
            token, progress, total, message, related_request_id=str(ctx.request_id)
        )

    return Progress(send)


ELICIT = types.ClientCapabilities(elicitation=types.ElicitationCapability())


async def _confirmed(ctx: RequestContext[Any, Any, Any], tool: BaseTool) -> bool:
    """Ask the user through the client (elicitation) before a destructive tool, where the client
    can; other clients ask on their own for a tool marked destructiveHint (README)."""
    if not ctx.session.check_client_capability(ELICIT):
        return True
    answer = await ctx.session.elicit_form(
        f"brainchat: run {tool.name}? {tool.description}",
        {
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": f"Run {tool.name}", "default": False}
            },
            "required": ["confirm"],
        },
        related_request_id=ctx.request_id,
    )
    return answer.action == "accept" and bool((answer.content or {}).get("confirm"))
