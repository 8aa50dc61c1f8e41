"""Configured MCP servers as agent tools: one long-lived session per server, failures isolated.

    configs, failures = load_mcp_config(None)          # $MCP_CONFIG or ./mcp_servers.json
    hub = McpHub(configs, config_failures=failures)
    await hub.start()                                  # never raises; broken servers -> status()
    toolset = hub.toolset(reserved_names={"web_search", ...})
    ...
    await hub.close()

Each server is a `ServerConnection` (mcp_connection.py): one task owns its session from open
to close; failures mark it unhealthy and a later call restarts it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from langchain_core.tools import BaseTool

from brainchat.tools import mcp_prompts, mcp_resources
from brainchat.tools.mcp_config import McpServerConfig, ToolOverride, load_mcp_config
from brainchat.tools.mcp_connection import ServerConnection
from brainchat.tools.mcp_instructions import META_KEY
from brainchat.tools.mcp_tools import assign_names, hints_of, make_tool
from brainchat.tools.mcp_tools import tools_from_session as tools_from_session
from brainchat.tools.registry import ToolFailure, ToolSet

__all__ = [
    "McpHub",
    "McpServerConfig",
    "ToolOverride",
    "ServerConnection",
    "load_mcp_config",
    "tools_from_session",
]


class McpHub:
    """Every configured server, started concurrently; their tools as one ToolSet."""

    def __init__(
        self,
        configs: Iterable[McpServerConfig],
        *,
        config_failures: Iterable[ToolFailure] = (),
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
    ):
        self.servers = {
            c.name: ServerConnection(c, backoff_base=backoff_base, backoff_max=backoff_max)
            for c in configs
            if c.enabled
        }
        self.config_failures = list(config_failures)
        self._names: dict[tuple[str, str], str] = {}  # (server, tool) -> name the model sees
        # Built tools, reused while their server's tool list and name are unchanged, so an agent
        # (compiled graph, bound schemas) built over them stays valid from turn to turn.
        self._built: dict[tuple[str, int, str], BaseTool] = {}
        # mcp_list_resources / mcp_read_resource: built once (the agent cache keys on tool ids)
        self._resource_tools = mcp_resources.resource_tools(lambda: self.servers)

    @classmethod
    def from_config_file(cls, path: Any = None, **kwargs: Any) -> McpHub:
        configs, failures = load_mcp_config(path)
        return cls(configs, config_failures=failures, **kwargs)

    async def start(self) -> None:
        """Connect every server at once; a broken one is recorded (status, failures), never raised."""
        await asyncio.gather(*(s.connect() for s in self.servers.values()))

    async def reconnect_failed(self) -> None:
        """Try again the servers that are down and whose backoff has passed (e.g. before a turn),
        and cancel again the tasks a stopped or timed-out call left open."""
        await asyncio.gather(*(s.cancel_open_tasks() for s in self.servers.values()))
        now = time.monotonic()
        due = [
            s
            for s in self.servers.values()
            if s.state in ("failed", "unhealthy") and s.next_attempt <= now
        ]
        await asyncio.gather(*(s.connect() for s in due))

    def toolset(self, reserved_names: Iterable[str] = ()) -> ToolSet:
        """LangChain tools of the connected servers, plus the failures to show the user."""
        live = [s for s in self.servers.values() if s.tools]
        reserved = {*reserved_names, *mcp_resources.TOOL_NAMES}
        names = assign_names({s.name: [t.name for t in s.tools] for s in live}, reserved)
        self._names = names
        tools: list[BaseTool] = []
        built: dict[tuple[str, int, str], BaseTool] = {}
        for s in live:
            for t in s.tools:
                key = (s.name, id(t), names[(s.name, t.name)])
                built[key] = self._built.get(key) or self._make(s, t, key[2])
                tools.append(built[key])
        self._built = built
        if any(
            mcp_resources.has_resources(s) for s in self.servers.values() if s.state == "connected"
        ):
            tools.extend(self._resource_tools)
        return ToolSet(tools=tools, failures=self.failures())

    async def resources(self, server: str) -> list[mcp_resources.Entry]:
        """A connected server's resources and templates (for the UI's attach list)."""
        return await mcp_resources.list_entries(self.servers[server])

    async def read_resource(self, server: str, uri: str) -> mcp_resources.Contents:
        """One of a server's own resources (ToolException for a URI it does not offer)."""
        return await mcp_resources.read(self.servers[server], uri)

    @staticmethod
    def _make(server: ServerConnection, tool: Any, name: str) -> BaseTool:
        hints = hints_of(tool)
        read_only, destructive, timeout = server.config.flags_for(
            tool.name, hints.get("destructiveHint") is True
        )
        tool = make_tool(
            server.name,
            tool,
            server.call,
            name=name,
            read_only=read_only,
            destructive=destructive,
            timeout=timeout,
            ask_first=server.config.asks_first(tool.name, hints.get("readOnlyHint") is True),
            configured=True,
        )
        # The server's own instructions go with its tools into the function-call prompt.
        tool.metadata = {**(tool.metadata or {}), META_KEY: server.instructions}
        return tool

    def prompt_commands(self) -> list[mcp_prompts.PromptCommand]:
        """The connected servers' prompts as slash commands (listed at connect)."""
        return [
            mcp_prompts.PromptCommand(s.name, p)
            for s in self.servers.values()
            if s.state == "connected"
            for p in s.prompts
        ]

    async def render_prompt(self, command_id: str, text: str) -> str:
        """`/mcp.SERVER.PROMPT key=value ...` rendered by its server, as the user's turn.

        ValueError for bad arguments (with the usage), ToolException for the rest."""
        return await mcp_prompts.render_command(
            self.prompt_commands(), self.servers, command_id, text
        )

    def failures(self) -> list[ToolFailure]:
        down = [
            ToolFailure(f"mcp:{s.name}", s.error or s.state)
            for s in self.servers.values()
            if s.state in ("failed", "unhealthy")
        ]
        return [*self.config_failures, *down]

    def status(self) -> list[dict[str, Any]]:
        """One row per server: server, state, transport, target, tools, exposed, error, restarts."""
        rows = []
        for s in self.servers.values():
            row = s.status()
            row["exposed"] = [self._names.get((s.name, t), t) for t in row["tools"]]
            rows.append(row)
        return rows

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.servers.values()), return_exceptions=True)

    async def __aenter__(self) -> McpHub:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
