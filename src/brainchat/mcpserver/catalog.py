"""The EEG tools as MCP tool definitions: input schemas from their own argument schemas, hints
(annotations) from the project's tool flags."""

from __future__ import annotations

from langchain_core.tools import BaseTool
from mcp import types

from brainchat.mcpserver.structured import output_schema
from brainchat.tools.registry import flags_of
from brainchat.tools.schemas import args_json_schema

# Calling these again with the same arguments leaves the study as the first call left it (the
# spec's idempotentHint); every other state-changing tool adds a step, a model or a file.
IDEMPOTENT = frozenset(
    {
        "load_data",
        "clear_study",
        "reset_preprocessing",
        "set_montage",
        "resample_data",
        "epoch_data",
        "split_dataset",
        "ica_fit",
    }
)


def hints(tool: BaseTool) -> types.ToolAnnotations:
    """readOnlyHint / destructiveHint from the flags; an EEG tool works only in the data folder
    (closed world) unless it downloads (fetch_dataset: open world). The spec's defaults
    (destructive, open world) are stated explicitly."""
    flags = flags_of(tool)
    return types.ToolAnnotations(
        title=tool.name.replace("_", " ").capitalize(),
        readOnlyHint=flags.read_only,
        destructiveHint=None if flags.read_only else flags.destructive,
        idempotentHint=True if flags.read_only else tool.name in IDEMPOTENT,
        openWorldHint=flags.network or flags.web,
    )


STUDY_ARG = {
    "type": "string",
    "description": "a study handle from load_data: run this on that study (a client that opens "
    "a new session per call continues its analysis so); without it, this session's own study",
}


def input_schema(tool: BaseTool) -> dict:
    """The tool's pydantic schema as JSON schema (an MCP input schema is always an object), with
    the optional study handle every tool accepts (the server takes it out before the call)."""
    schema = args_json_schema(tool) or {}
    schema.pop("title", None)  # the pydantic class name (NoArgs, LoadArgs) says nothing here
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if "study" in schema["properties"]:
        raise ValueError(f"{tool.name} has an argument named 'study', the handle's name")
    schema["properties"]["study"] = STUDY_ARG
    return schema


def mcp_tool(tool: BaseTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        inputSchema=input_schema(tool),
        outputSchema=output_schema(tool.name),
        annotations=hints(tool),
    )
