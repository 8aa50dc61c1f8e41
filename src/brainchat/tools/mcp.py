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

from brainchat.tools.mcp_config import McpServerConfig, ToolOverride, load_mcp_config
from brainchat.tools.mcp_connection import ServerConnection
from brainchat.tools.mcp_tools import assign_names, describe_error, hints_of, make_tool
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
    "SessionMcpServers",
    "shared_hub",
    "close_shared_hub",
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
        self._names = names
        tools: list[BaseTool] = []
        for s in live:
            for t in s.tools:
                hinted = hints_of(t).get("destructiveHint") is True
                read_only, destructive, timeout = s.config.flags_for(t.name, hinted)
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


def format_status(rows: list[dict[str, Any]], failures: Iterable[ToolFailure] = ()) -> str:
    """Markdown for the mode-switch message and `/tools`: servers, their tools, what failed and why."""
    lines = []
    for r in rows:
        mark = {"connected": "connected", "unhealthy": "unhealthy", "failed": "failed"}.get(
            r["state"], r["state"]
        )
        tools = ", ".join(f"`{t}`" for t in r.get("exposed") or r["tools"]) or "no tools"
        line = f"- **{r['server']}** ({mark}, {r.get('transport', '')}): {tools}"
        if r.get("error"):
            line += f"\n  - error: {r['error']}"
        lines.append(line)
    for f in failures:
        if not any(f.source == f"mcp:{r['server']}" for r in rows):
            lines.append(f"- **{f.source}** (not loaded): {f.reason}")
    return "\n".join(lines) or "No MCP servers configured."


class SessionMcpServers:
    """The servers one chat user connected through Chainlit (`on_mcp_connect`); their tools only.

    Chainlit owns those sessions (opens and closes them in its own task); this only wraps them.
    """

    def __init__(self) -> None:
        self._tools: dict[str, list[Any]] = {}
        self._errors: dict[str, str] = {}

    async def add(
        self, name: str, session: Any, *, reserved_names: Iterable[str] = (), **flags: Any
    ) -> None:
        """Wrap a freshly connected session; a failure to list its tools is recorded, not raised."""
        self.remove(name)
        taken = set(reserved_names) | {t.name for n, ts in self._tools.items() for t in ts}
        try:
            self._tools[name] = await asyncio.wait_for(
                tools_from_session(name, session, reserved_names=taken, **flags), 30
            )
        except Exception as exc:  # noqa: BLE001 - shown to the user, never raised into the UI
            self._errors[name] = f"could not list its tools: {describe_error(exc)}"

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)
        self._errors.pop(name, None)

    def tools(self) -> list[Any]:
        return [t for ts in self._tools.values() for t in ts]

    def status(self) -> list[dict[str, Any]]:
        rows = [
            {
                "server": n,
                "state": "connected",
                "transport": "user",
                "tools": [t.metadata["mcp_tool"] for t in ts],
                "exposed": [t.name for t in ts],
                "error": None,
                "restarts": 0,
            }
            for n, ts in self._tools.items()
        ]
        rows += [
            {
                "server": n,
                "state": "failed",
                "transport": "user",
                "tools": [],
                "exposed": [],
                "error": e,
                "restarts": 0,
            }
            for n, e in self._errors.items()
        ]
        return rows


_shared: McpHub | None = None
_shared_lock: tuple[Any, asyncio.Lock] | None = None  # (event loop, lock)


def _lock() -> asyncio.Lock:
    global _shared_lock
    loop = asyncio.get_running_loop()
    if _shared_lock is None or _shared_lock[0] is not loop:
        _shared_lock = (loop, asyncio.Lock())
    return _shared_lock[1]


async def shared_hub(path: Any = None) -> McpHub:
    """The process-wide hub of configured servers, loaded and started once (first caller waits)."""
    global _shared
    async with _lock():
        if _shared is None:
            hub = McpHub.from_config_file(path)
            await hub.start()
            _shared = hub
        return _shared


async def close_shared_hub() -> None:
    global _shared
    async with _lock():
        hub, _shared = _shared, None
    if hub is not None:
        await hub.close()
