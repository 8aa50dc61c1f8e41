"""Tool flags (read-only, destructive, ask-first, long-running, source) and the registry of loaded tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool

from brainchat.redact import mask
from brainchat.tools.schemas import args_json_schema


@dataclass(frozen=True)
class ToolFlags:
    """What the agent must know about a tool to run it safely."""

    read_only: bool = False
    destructive: bool = False  # asks every time
    ask_first: bool = False  # asks before its first use in a conversation (MCP, not read-only)
    long_running: bool = False
    source: str = "local"  # "local" or "mcp:<server>"
    web: bool = False  # it reaches the web (a request's record says whether one is asked)
    network: bool = False  # it downloads from hosts outside the machine (a public data set)
    timeout: float | None = None  # seconds; None = the agent's default


def set_flags(tool: BaseTool, **flags: Any) -> BaseTool:
    """Record flags in the tool's LangChain metadata (the one place they live)."""
    known = ToolFlags.__dataclass_fields__
    unknown = set(flags) - set(known)
    if unknown:
        raise ValueError(f"unknown tool flags {sorted(unknown)}; allowed: {sorted(known)}")
    tool.metadata = {**(tool.metadata or {}), **flags}
    return tool


def flags_of(tool: BaseTool) -> ToolFlags:
    meta = tool.metadata or {}
    return ToolFlags(**{k: meta[k] for k in ToolFlags.__dataclass_fields__ if k in meta})


@dataclass
class ToolFailure:
    """A tool family or server that could not be loaded, and why (secrets masked)."""

    source: str
    reason: str

    def __post_init__(self) -> None:
        # Every list of failures (/tools, `brainchat tools`, logs) is built from these.
        self.reason = mask(self.reason)


@dataclass
class ToolSet:
    """The tools a run gets, plus what failed to load (shown to the user, never fatal)."""

    tools: list[BaseTool] = field(default_factory=list)
    failures: list[ToolFailure] = field(default_factory=list)

    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def describe(self) -> list[dict[str, Any]]:
        rows = []
        for tool in self.tools:
            flags = flags_of(tool)
            args = args_json_schema(tool)
            rows.append(
                {
                    "name": tool.name,
                    "source": flags.source,
                    "read_only": flags.read_only,
                    "destructive": flags.destructive,
                    "ask_first": flags.ask_first,
                    "long_running": flags.long_running,
                    "description": tool.description,
                    "args_schema": args,
                }
            )
        return rows
