"""A FastMCP server whose changes any client can trigger and every session hears (#43), so a
test can change it while the page that plugged it in sits idle (no run open).

- It starts with no prompt; `grow()` adds the prompt `late_prompt` and sends
  prompts/list_changed to every session that listed prompts.
- `lab://counter` offers subscriptions; `bump()` raises it and sends resources/updated to every
  session subscribed to it.

Run over stdio (python tests/mcp_servers/broadcast_lab.py) or streamable HTTP (--http PORT).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.prompts import Prompt
from pydantic import AnyUrl

mcp = FastMCP("broadcast-lab", log_level="WARNING")
server = mcp._mcp_server
LISTENERS: list[Any] = []  # sessions that listed prompts
WATCHERS: list[Any] = []  # sessions subscribed to lab://counter
COUNTER = {"n": 0}
_capabilities = server.get_capabilities


def _with_subscribe(*args, **kwargs) -> types.ServerCapabilities:  # type: ignore[no-untyped-def]
    """The SDK's capabilities, with resources.subscribe and prompts.listChanged."""
    caps = _capabilities(*args, **kwargs)
    if caps.resources is not None:
        caps.resources.subscribe = True
    if caps.prompts is not None:
        caps.prompts.listChanged = True
    return caps


server.get_capabilities = _with_subscribe  # type: ignore[method-assign]


@server.list_prompts()
async def _list_prompts() -> list[types.Prompt]:
    if (session := server.request_context.session) not in LISTENERS:
        LISTENERS.append(session)
    return await mcp.list_prompts()


@server.subscribe_resource()
async def _subscribe(uri: AnyUrl) -> None:
    WATCHERS.append(server.request_context.session)


@mcp.resource("lab://counter", name="counter", mime_type="text/plain")
def counter() -> str:
    """A counter that `bump` raises."""
    return f"count={COUNTER['n']}"


def late_prompt() -> str:
    """A prompt that exists only after grow() ran."""
    return "Late prompt text."


@mcp.tool()
async def grow() -> str:
    """Add a prompt and tell every session that listed prompts."""
    mcp.add_prompt(Prompt.from_function(late_prompt))
    for session in LISTENERS:
        with contextlib.suppress(Exception):  # a session that is gone
            await session.send_prompt_list_changed()
    return f"told {len(LISTENERS)}"


@mcp.tool()
async def bump() -> str:
    """Raise the counter and tell every subscribed session."""
    COUNTER["n"] += 1
    for session in WATCHERS:
        with contextlib.suppress(Exception):
            await session.send_resource_updated(AnyUrl("lab://counter"))
    return f"count={COUNTER['n']} told {len(WATCHERS)}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.settings.port = int(sys.argv[2])
        mcp.run("streamable-http")
    else:
        mcp.run()
