"""A server the user connected with Chainlit's plug button, beyond its tools.

Chainlit opens and owns the session; brainchat reads, once at connect, what the server offers
besides tools: its prompts (slash commands) and whether it has resources (the agent's two
resource tools and `/resource`). Requests go straight to Chainlit's session, bounded in time;
a dead session is that request's error, never a crash (Chainlit reconnects or drops it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import ToolException
from mcp import ClientSession, McpError, types

from brainchat.redact import mask
from brainchat.tools.mcp_prompts import list_all_prompts
from brainchat.tools.mcp_resources import offers_any_resource
from brainchat.tools.mcp_tools import describe_error


@dataclass
class UserServer:
    """What mcp_resources' and mcp_prompts' `Server` needs, over a session Chainlit owns."""

    name: str
    session: ClientSession
    capabilities: types.ServerCapabilities | None = None
    resources_offered: bool = False
    prompts: list[types.Prompt] = field(default_factory=list)
    state: str = "connected"

    @classmethod
    async def open(cls, name: str, session: ClientSession) -> UserServer:
        """Read the server's capabilities, prompts and whether it lists any resource."""
        caps = session.get_server_capabilities()
        return cls(
            name=name,
            session=session,
            capabilities=caps,
            resources_offered=await offers_any_resource(session, caps),
            prompts=await list_all_prompts(session, caps),
        )

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
