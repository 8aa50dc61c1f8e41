"""Configured MCP servers as agent tools: one long-lived session per server, failures isolated.

    configs, failures = load_mcp_config(None)          # $MCP_CONFIG or ./mcp_servers.json
    hub = McpHub(configs, config_failures=failures)
    await hub.start()                                  # never raises; broken servers -> status()
    toolset = hub.toolset(reserved_names={"web_search", ...})
    ...
    await hub.close()

Each server lives in one asyncio task that enters and exits its transport and ClientSession
(anyio cancel scopes must be left in the task that entered them); tool calls from other tasks
await `session.call_tool` directly. A crash, a hang past the timeout or a lost transport marks the
server unhealthy and closes it; a later call restarts it (at once the first time, then with
exponential backoff) and re-lists its tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import time
from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Literal

import anyio
from langchain_core.tools import ToolException
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.types import CONNECTION_CLOSED

from brainchat.tools.mcp_config import McpServerConfig, ToolOverride, load_mcp_config
from brainchat.tools.mcp_tools import assign_names, describe_error, list_all_tools, make_tool
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
log = logging.getLogger(__name__)
State = Literal["idle", "connecting", "connected", "unhealthy", "failed", "closed"]


class ServerConnection:
    """One server: its owner task, its session, its health and its tools."""

    def __init__(
        self, config: McpServerConfig, *, backoff_base: float = 1.0, backoff_max: float = 60.0
    ):
        self.config = config
        self.state: State = "idle"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.restarts = 0  # successful reconnects after the first connect
        self.failures = 0  # consecutive failures (connect or transport), reset by a good call
        self.next_attempt = 0.0
        self._backoff = (backoff_base, backoff_max)
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._generation = 0
        self._lock = asyncio.Lock()
        self._ever_connected = False
        self._errlog: Any = None  # the stdio server's stderr, kept to explain failures

    @property
    def name(self) -> str:
        return self.config.name

    async def connect(self) -> bool:
        """(Re)open the session and list tools; failures are recorded, never raised."""
        async with self._lock:
            if self.state == "connected":
                return True
            await self._shutdown()
            self.state = "connecting"
            self._generation += 1
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[list[types.Tool]] = loop.create_future()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(
                self._own(ready, self._stop, self._generation), name=f"mcp-server:{self.name}"
            )
            try:
                async with asyncio.timeout(self.config.connect_timeout):
                    tools = await asyncio.shield(ready)
            except TimeoutError:
                tail = self._stderr_tail()
                await self._shutdown()
                return self._fail(
                    f"did not finish connecting within {self.config.connect_timeout:g} s{tail}"
                )
            except Exception as exc:
                tail = self._stderr_tail()
                await self._shutdown()
                return self._fail(f"could not start: {describe_error(exc)}{tail}")
            if self._ever_connected:
                self.restarts += 1
            self._ever_connected = True
            self.tools, self.state, self.error = tools, "connected", None
            return True

    async def call(self, tool: str, args: dict[str, Any], timeout: float) -> types.CallToolResult:
        """Call a tool on the kept session, reconnecting first if the server is down."""
        if self.state in ("closed",):
            raise ToolException(f"MCP server '{self.name}' has been shut down")
        if self.state != "connected":
            wait = self.next_attempt - time.monotonic()
            if wait > 0:
                raise ToolException(
                    f"MCP server '{self.name}' is unavailable ({self.error}); "
                    f"next restart attempt in {wait:.0f} s. Use other tools or answer without it."
                )
            if not await self.connect():
                raise ToolException(
                    f"MCP server '{self.name}' could not be restarted: {self.error}"
                )
            if tool not in {t.name for t in self.tools}:
                raise ToolException(f"MCP server '{self.name}' no longer offers the tool '{tool}'")
        session, generation = self._session, self._generation
        assert session is not None
        try:
            async with asyncio.timeout(timeout):
                result = await session.call_tool(
                    tool, args, read_timeout_seconds=timedelta(seconds=timeout)
                )
        except TimeoutError:
            reason = f"tool '{tool}' did not answer within {timeout:g} s"
            await self._mark_unhealthy(generation, reason)
            raise ToolException(
                f"MCP server '{self.name}': {reason}; the server will be restarted on a later call"
            ) from None
        except McpError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                raise ToolException(
                    f"MCP server '{self.name}', tool '{tool}' failed: {exc}"
                ) from None
            reason = f"the server closed the connection during '{tool}' (it exited or crashed){self._stderr_tail()}"
            await self._mark_unhealthy(generation, reason)
            raise ToolException(
                f"MCP server '{self.name}': {reason}; it will be restarted on a later call"
            ) from None
        except Exception as exc:
            reason = f"lost the connection during '{tool}': {describe_error(exc)}"
            await self._mark_unhealthy(generation, reason)
            raise ToolException(
                f"MCP server '{self.name}' {reason}; it will be restarted on a later call"
            ) from None
        self.failures = 0
        return result

    async def close(self) -> None:
        async with self._lock:
            await self._shutdown()
            self._close_errlog()
            self.state = "closed"

    def status(self) -> dict[str, Any]:
        return {
            "server": self.name,
            "state": self.state,
            "transport": self.config.transport,
            "target": self.config.describe(),
            "tools": [t.name for t in self.tools],
            "error": self.error,
            "restarts": self.restarts,
        }

    def _fail(self, reason: str) -> bool:
        self.error = reason
        self.state = "unhealthy" if self._ever_connected else "failed"
        self.failures += 1
        base, cap = self._backoff
        delay = 0.0 if self.failures <= 1 else min(base * 2 ** (self.failures - 2), cap)
        self.next_attempt = time.monotonic() + delay
        log.warning("MCP server %r %s: %s", self.name, self.state, reason)
        return False

    async def _mark_unhealthy(self, generation: int, reason: str) -> None:
        async with self._lock:
            if generation != self._generation or self.state != "connected":
                return  # an older session; the current one is someone else's business
            await self._shutdown()
            self._fail(reason)

    async def _shutdown(self) -> None:
        """Tell the owner task to leave its contexts, and wait for it (bounded)."""
        task, self._task, self._session = self._task, None, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5.0)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def _transport(self, errlog: Any) -> contextlib.AbstractAsyncContextManager[Any]:
        c = self.config
        if c.transport == "stdio":
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(
                command=c.command or "", args=c.args, env=c.env, cwd=c.cwd
            )
            return stdio_client(params, errlog=errlog)
        if c.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(c.url or "", headers=c.headers or None, timeout=c.connect_timeout)
        import httpx

        client = httpx.AsyncClient(
            headers=c.headers, timeout=httpx.Timeout(c.connect_timeout, read=300)
        )
        return _http_transport(client, c.url or "")

    async def _own(
        self, ready: asyncio.Future[list[types.Tool]], stop: asyncio.Event, generation: int
    ) -> None:
        """The one task that enters and leaves this server's transport and session."""
        self._close_errlog()
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        lost = asyncio.Event()
        connected = False
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = (await stack.enter_async_context(self._transport(self._errlog)))[:2]
                inner_send, inner_read = anyio.create_memory_object_stream[Any](0)
                tg = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(tg.cancel_scope.cancel)
                tg.start_soon(_pump, read, inner_send, lost)
                session = await stack.enter_async_context(ClientSession(inner_read, write))
                await session.initialize()
                tools = await list_all_tools(session)
                self._session = session
                ready.set_result(tools)
                connected = True
                waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(lost.wait())]
                try:
                    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for w in waiters:
                        w.cancel()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(
                    exc if isinstance(exc, Exception) else RuntimeError("cancelled")
                )
            elif not stop.is_set():
                log.debug("MCP server %r: owner task ended with %s", self.name, describe_error(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            if connected and lost.is_set() and not stop.is_set():
                # The transport ended while idle: mark it so the next call restarts at once.
                if generation == self._generation and self.state == "connected":
                    self._session = None
                    self._fail(
                        f"the server went away (process exited or connection closed){self._stderr_tail()}"
                    )

    def _close_errlog(self) -> None:
        errlog, self._errlog = self._errlog, None
        if errlog is not None:
            errlog.close()

    def _stderr_tail(self, limit: int = 400) -> str:
        try:
            f = self._errlog
            f.flush()
            f.seek(0)
            tail = f.read()[-limit:].strip()
        except Exception:
            return ""
        return f"; its stderr ends with: {tail}" if tail else ""


async def _pump(read: Any, send: Any, lost: asyncio.Event) -> None:
    """Forward the transport's messages to the session; note when the transport ends."""
    async with send:
        try:
            async for message in read:
                await send.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
    lost.set()


@contextlib.asynccontextmanager
async def _http_transport(client: Any, url: str) -> Any:
    from mcp.client.streamable_http import streamable_http_client

    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


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
