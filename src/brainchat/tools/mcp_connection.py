"""One MCP server's long-lived session: the owner task, calls, health, restart with backoff.

The owner task enters and leaves the transport and the ClientSession (anyio cancel scopes must
be left in the task that entered them); calls from other tasks await `session.call_tool`
directly. A call past its time limit is cancelled and the session kept (mcp_call_limit); a
crash, a lost transport or a server that no longer answers a ping marks the server unhealthy and
closes it; a later call restarts it (at once the first time, then with exponential backoff)
and re-lists its tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Literal

import anyio
from langchain_core.tools import ToolException
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.types import CONNECTION_CLOSED

from brainchat.redact import get_logger, mask
from brainchat.tools.mcp_call_limit import CallLimit, Gone, answers_ping, within
from brainchat.tools.mcp_client_session import CancellingSession, session_options
from brainchat.tools.mcp_config import McpServerConfig
from brainchat.tools.mcp_elicit_route import Elicitations
from brainchat.tools.mcp_prompts import list_all_prompts
from brainchat.tools.mcp_resources import offers_any_resource
from brainchat.tools.mcp_tasks import Tasks, runs_as_task
from brainchat.tools.mcp_tools import (
    PING_WAIT,
    SHUTDOWN_WAIT,
    ProgressFn,
    describe_error,
    list_all_tools,
    output_schema_error,
)

log = get_logger("brainchat.tools.mcp")
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
        self.instructions: str | None = None  # the server's initialize result says how to use it
        self.capabilities: types.ServerCapabilities | None = None
        self.prompts: list[types.Prompt] = []  # listed at connect: offered as slash commands
        self.resources_offered = False  # it lists resources or templates (not just the capability)
        self.restarts = 0  # successful reconnects after the first connect
        self.failures = 0  # consecutive failures (connect or transport), reset by a good call
        self.next_attempt = 0.0
        self._backoff = (backoff_base, backoff_max)
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._gone = asyncio.Event()  # set when the current owner task has left its contexts
        self._generation = 0
        self._lock = asyncio.Lock()
        self._ever_connected = False
        self._errlog: Any = None  # the stdio server's stderr, kept to explain failures
        self.elicitations = Elicitations(config.name)  # a server asks the calling run's user
        self.tasks = Tasks(config.name)  # task-required tools run as tasks (mcp_tasks)
        self._signin_error: str | None = None  # why an OAuth sign-in did not happen

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
            self._stop, self._gone = asyncio.Event(), asyncio.Event()
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
                if self._signin_error:  # the server wants a sign-in, not a restart
                    return self._fail(self._signin_error)
                return self._fail(f"could not start: {describe_error(exc)}{tail}")
            if self._ever_connected:
                self.restarts += 1
            self._ever_connected = True
            self.tools, self.state, self.error = tools, "connected", None
            self.tasks.open.clear()  # an earlier session's tasks are not this one's to follow
            return True

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        timeout: float,  # noqa: ASYNC109
        progress: ProgressFn | None = None,
    ) -> types.CallToolResult:
        """Call a tool on the kept session, reconnecting first if the server is down;
        `progress` gets the server's progress notifications for the call, each of which
        restarts the `timeout` (up to BRAINCHAT_MCP_MAX_CALL_SECONDS)."""
        limit = CallLimit(timeout)

        def still_offered() -> None:
            if tool not in {t.name for t in self.tools}:
                raise ToolException(f"MCP server '{self.name}' no longer offers the tool '{tool}'")

        def op(s: ClientSession) -> Awaitable[types.CallToolResult]:
            if runs_as_task(next((t for t in self.tools if t.name == tool), None)):
                return self.tasks.call(s, tool, args, limit, limit.forward(progress))
            return s.call_tool(
                tool,
                args,
                # a backstop only: the limit cancels the call first
                read_timeout_seconds=timedelta(seconds=limit.hard + SHUTDOWN_WAIT),
                progress_callback=limit.forward(progress),
            )

        with self.elicitations.calling(tool, timeout):  # who answers the server
            return await self.request(  # type: ignore[no-any-return]
                f"tool '{tool}'", f"'{tool}'", op, limit, after_restart=still_offered
            )

    async def request(
        self,
        what: str,
        during: str,
        op: Callable[[ClientSession], Awaitable[Any]],
        limit: CallLimit | float,
        after_restart: Callable[[], None] | None = None,
    ) -> Any:
        """Run `op(session)` on the kept session (a tool call, a resource read...), reconnecting
        first if the server is down; a lost transport marks it unhealthy, a request past its
        `limit` (seconds, or a CallLimit that progress extends) is cancelled and the session
        kept. `what` names the request in errors ("tool 'add'"), `during` in "the connection
        closed during ..."."""
        if not isinstance(limit, CallLimit):
            limit = CallLimit(limit, limit)
        await self._ready(after_restart)
        session, gone, generation = self._session, self._gone, self._generation
        assert session is not None
        try:
            limit.start()
            result = await within(op(session), gone, limit)
        except McpError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                raise ToolException(
                    f"MCP server '{self.name}', {what} failed: {describe_error(exc)}"
                ) from None
            reason = f"the server closed the connection during {during} (it exited or crashed)"
        except Gone:
            reason = f"the server closed the connection during {during}"
            reason += f": {self.error}" if self.error else " (it exited or crashed)"
        except TimeoutError:
            if await answers_ping(session, gone, PING_WAIT):  # cancelled; the session lives on
                told = limit.cancelled(what) + self.tasks.left_open()
                raise ToolException(f"MCP server '{self.name}': {told}") from None
            reason = f"{what} did not answer within {limit.elapsed():.0f} s, nor a ping after it"
        except ToolException:
            raise  # the request's own error (a failed task): the session is fine
        except Exception as exc:
            if schema_error := output_schema_error(exc):  # the result, not the connection
                raise ToolException(f"MCP server '{self.name}', {what} {schema_error}") from None
            reason = f"the connection was lost during {during}: {describe_error(exc)}"
        else:
            self.failures = 0
            return result
        if "stderr ends with" not in reason:
            reason += self._stderr_tail()
        await self._mark_unhealthy(generation, reason)
        raise ToolException(
            f"MCP server '{self.name}': {reason}. The server will be restarted on a later call."
        )

    async def _ready(self, after_restart: Callable[[], None] | None) -> None:
        """Connected, or reconnected now if its backoff allows; else a ToolException."""
        if self.state in ("closed",):
            raise ToolException(f"MCP server '{self.name}' has been shut down")
        if self.state == "connected":
            return
        wait = self.next_attempt - time.monotonic()
        if wait > 0:
            raise ToolException(
                f"MCP server '{self.name}' is unavailable ({self.error}); "
                f"next restart attempt in {wait:.1f} s. Use other tools or answer without it."
            )
        if not await self.connect():
            raise ToolException(f"MCP server '{self.name}' could not be restarted: {self.error}")
        if after_restart is not None:
            after_restart()

    async def cancel_open_tasks(self) -> None:
        """Tasks whose cancel did not go through (Stop, a timeout): cancelled again."""
        if self.state == "connected" and self._session is not None and self.tasks.open:
            await self.tasks.cancel_open(self._session)

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
            "tasks": self.tasks.rows(),  # tasks still open (a cancel that did not go through)
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
        """Make the owner task leave its contexts, and wait for it (bounded)."""
        task, session, self._task, self._session = self._task, self._session, None, None
        if task is None:
            return
        if session is not None and self._stop is not None:
            self._stop.set()  # connected: the owner waits on this and closes in order
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), timeout=SHUTDOWN_WAIT)
        if not task.done():  # still connecting (or stuck closing): cancel it
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

        from brainchat.tools import mcp_oauth  # a 401 says where to sign in

        self._signin_error = None
        signin = mcp_oauth.FirstRequestAuth(
            lambda url: mcp_oauth.headless_sign_in(self.name, url), on_error=self._signin_failed
        )
        client = httpx.AsyncClient(
            headers=c.headers, timeout=httpx.Timeout(c.connect_timeout, read=300), auth=signin
        )
        return _http_transport(client, c.url or "")

    def _signin_failed(self, exc: Exception) -> None:
        from brainchat.tools.mcp_oauth import sign_in_failure

        self._signin_error = sign_in_failure(exc)

    async def _own(
        self, ready: asyncio.Future[list[types.Tool]], stop: asyncio.Event, generation: int
    ) -> None:
        """The one task that enters and leaves this server's transport and session."""
        self._close_errlog()
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        lost, gone = asyncio.Event(), self._gone
        connected, exit_reason = False, ""
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = (await stack.enter_async_context(self._transport(self._errlog)))[:2]
                inner_send, inner_read = anyio.create_memory_object_stream[Any](0)
                tg = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(tg.cancel_scope.cancel)
                tg.start_soon(_pump, read, inner_send, lost)
                session = await stack.enter_async_context(
                    CancellingSession(inner_read, write, **session_options(self))
                )
                init = await session.initialize()
                self.instructions, self.capabilities = init.instructions, init.capabilities
                tools = await list_all_tools(session)
                self.resources_offered = await offers_any_resource(session, init.capabilities)
                self.prompts = await list_all_prompts(session, init.capabilities)
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
                error = exc if isinstance(exc, Exception) else RuntimeError("cancelled")
                ready.set_exception(error)
            elif not stop.is_set():
                exit_reason = describe_error(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            if connected and not stop.is_set() and generation == self._generation:
                # The transport ended on its own (crash, network): the next call restarts it.
                if self.state == "connected":
                    self._session = None
                    reason = exit_reason or "the process exited or the connection closed"
                    self._fail(f"the server went away ({reason}){self._stderr_tail()}")
            gone.set()

    def _close_errlog(self) -> None:
        errlog, self._errlog = self._errlog, None
        if errlog is not None:
            errlog.close()

    def _stderr_tail(self, limit: int = 400) -> str:
        try:
            f = self._errlog
            f.flush()
            f.seek(0)
            # Foreign text (servers print their credentials when they fail): masked before the
            # cut, so no key is cut in half and shown unrecognised.
            tail = mask(f.read()[-4 * limit :])[-limit:].strip()
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
