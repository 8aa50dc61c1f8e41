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

from brainchat.tools.mcp_config import McpServerConfig, ToolOverride, load_mcp_config
from brainchat.tools.mcp_connection import ServerConnection
from brainchat.tools.mcp_tools import assign_names, make_tool
from brainchat.tools.mcp_tools import tools_from_session as tools_from_session
from brainchat.tools.registry import ToolFailure, ToolSet

__all__ = [
    "McpHub",
    "McpServerConfig",
    "ToolOverride",
    "ServerConnection",
    "load_mcp_config",
    "tools_from_session",
    "format_status",
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

    @classmethod
    def from_config_file(cls, path: Any = None, **kwargs: Any) -> McpHub:
        configs, failures = load_mcp_config(path)
        return cls(configs, config_failures=failures, **kwargs)

    async def start(self) -> None:
        """Connect every server at once; a broken one is recorded (status, failures), never raised."""
        await asyncio.gather(*(s.connect() for s in self.servers.values()))

    async def reconnect_failed(self) -> None:
        """Try again the servers that are down and whose backoff has passed (e.g. before a turn)."""
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
        names = assign_names({s.name: [t.name for t in s.tools] for s in live}, reserved_names)
        tools = []
        for s in live:
            for t in s.tools:
                read_only, destructive, timeout = s.config.flags_for(t.name)
                tools.append(
                    make_tool(
                        s.name,
                        t,
                        s.call,
                        name=names[(s.name, t.name)],
                        read_only=read_only,
                        destructive=destructive,
                        timeout=timeout,
                    )
                )
        return ToolSet(tools=tools, failures=self.failures())

    def failures(self) -> list[ToolFailure]:
        down = [
            ToolFailure(f"mcp:{s.name}", s.error or s.state)
            for s in self.servers.values()
            if s.state in ("failed", "unhealthy")
        ]
        return [*self.config_failures, *down]

    def status(self) -> list[dict[str, Any]]:
        return [s.status() for s in self.servers.values()]

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.servers.values()), return_exceptions=True)

    async def __aenter__(self) -> McpHub:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def format_status(rows: list[dict[str, Any]], failures: Iterable[ToolFailure] = ()) -> str:
    """Markdown for the mode-switch message and `/tools`: servers, their tools, what failed and why."""
    lines = []
    for r in rows:
        mark = {"connected": "connected", "unhealthy": "unhealthy", "failed": "failed"}.get(
            r["state"], r["state"]
        )
        tools = ", ".join(f"`{t}`" for t in r["tools"]) or "no tools"
        line = f"- **{r['server']}** ({mark}, {r.get('transport', '')}): {tools}"
        if r.get("error"):
            line += f"\n  - error: {r['error']}"
        lines.append(line)
    for f in failures:
        if not any(f.source == f"mcp:{r['server']}" for r in rows):
            lines.append(f"- **{f.source}** (not loaded): {f.reason}")
    return "\n".join(lines) or "No MCP servers configured."
