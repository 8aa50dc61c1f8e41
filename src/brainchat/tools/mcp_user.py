"""A server the user connected with Chainlit's plug button, beyond its tools.

Chainlit opens and owns the session; brainchat reads, at connect, what the server offers
besides tools: its prompts (slash commands) and whether it has resources (the agent's two
resource tools and `/resource`). Requests go straight to Chainlit's session, bounded in time;
a dead session is that request's error, never a crash (Chainlit reconnects or drops it).

Over a PluggedSession (the session brainchat makes Chainlit open) the server's notifications
are heard, as a configured server's: this object is its `Notices`' connection, made with the
session, so a list_changed re-lists its tools, prompts and resources here and tells whoever
follows it (`follow`: the conversation's toolbox, the page's menu); attached resources are
subscribed (`elicitations` set: its Notices hear the server).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import ToolException
from mcp import ClientSession, McpError, types

from brainchat.redact import get_logger, mask
from brainchat.tools.mcp_prompts import list_all_prompts
from brainchat.tools.mcp_resources import offers_any_resource
from brainchat.tools.mcp_tools import describe_error, list_all_tools

log = get_logger("brainchat.tools.mcp")
# called with the kind listed again: "tools", "prompts" or "resources"
Follower = Callable[[str], Coroutine[Any, Any, None]]


@dataclass(eq=False)  # a Notices key (held weakly): one per session, compared by identity
class UserServer:
    """What mcp_resources' and mcp_prompts' `Server` needs, over a session Chainlit owns."""

    name: str
    session: ClientSession
    capabilities: types.ServerCapabilities | None = None
    resources_offered: bool = False
    prompts: list[types.Prompt] = field(default_factory=list)
    state: str = "connected"
    tools: list[types.Tool] = field(default_factory=list)  # as last listed
    # a PluggedSession's question route (None over another session: nothing of it is heard)
    elicitations: Any = None
    _followers: list[tuple[Follower, contextvars.Context]] = field(default_factory=list)
    _built: dict[str, types.Tool] = field(default_factory=dict)  # what the tools were made of

    @classmethod
    async def open(cls, name: str, session: ClientSession) -> UserServer:
        """Read the server's capabilities, prompts, tools and whether it lists any resource
        (filling in the PluggedSession's own server, whose notifications are heard)."""
        caps = session.get_server_capabilities()
        server = getattr(session, "plugged_server", None)
        if not isinstance(server, cls):
            server = cls(name=name, session=session)
        server.name, server.capabilities = name, caps
        server.resources_offered = await offers_any_resource(session, caps)
        server.prompts = await list_all_prompts(session, caps)
        try:
            server.tools = await list_all_tools(session)
        except Exception:  # noqa: BLE001 - compared at the next list_changed only
            server.tools = []
        server._built = {t.name: t for t in server.tools}
        return server

    def changed_tools(self) -> set[str]:
        """The tools added, removed or redefined since the tools were last made (then made)."""
        now = {t.name: t for t in self.tools}
        changed = {n for n in now.keys() | self._built.keys() if now.get(n) != self._built.get(n)}
        self._built = now
        return changed

    def follow(self, then: Follower) -> None:
        """Call `then(kind)`, in the caller's context (its page), after a list of the server
        was listed again (list_changed)."""
        self._followers.append((then, contextvars.copy_context()))

    async def relisted(self, kind: str) -> None:
        """Notices listed `kind` again: tell the followers (a failing one is logged)."""
        for then, context in list(self._followers):
            try:
                await asyncio.get_running_loop().create_task(then(kind), context=context)
            except Exception as exc:  # noqa: BLE001 - one follower's trouble never stops another
                log.warning("MCP server %r: a follower of its %s failed: %s", self.name, kind,
                            mask(str(exc))[:200])  # fmt: skip

    async def request(
        self,
        what: str,
        during: str,
        op: Callable[[ClientSession], Awaitable[Any]],
        timeout: float,  # noqa: ASYNC109 - the bound of this one request
        after_restart: Callable[[], None] | None = None,
    ) -> Any:
        """One request on the session; ToolException naming the server and the request."""
        try:
            async with asyncio.timeout(timeout):
                return await op(self.session)
        except TimeoutError:
            raise ToolException(
                f"MCP server '{self.name}' did not answer {during} within {timeout:g} s"
            ) from None
        except McpError as exc:
            raise ToolException(
                f"MCP server '{self.name}': {what} failed: {describe_error(exc)}"
            ) from None
        except ToolException:
            raise
        except Exception as exc:  # noqa: BLE001 - the session is gone (closed stream, HTTP error)
            raise ToolException(
                f"MCP server '{self.name}' is not reachable ({type(exc).__name__}: "
                f"{mask(str(exc))[:200]}); reconnect it with the plug button"
            ) from None
