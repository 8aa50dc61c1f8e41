"""A FastMCP server whose lists change while it runs, that logs, offers resource subscriptions
and completes prompt arguments (#43).

- `grow()` adds the tool `late_tool`, the prompt `late_prompt` and the resource `lab://late`, and
  sends tools/prompts/resources `list_changed` before it returns (mid-call, as a server does).
- `chatty()` sends one log message at each of debug, info, warning and error (one holds a key).
- `bump()` changes `lab://counter` and sends `notifications/resources/updated` for it if the
  client subscribed; `subscriptions()` says which URIs the client subscribed to.
- The prompt `analyse(band, channel)` completes `band` from a list and `channel` by the band.
- `log_level()` says the level the client set (logging/setLevel); `crash()` exits the process.

Run over stdio: python tests/mcp_servers/changing_lab.py
"""

from __future__ import annotations

import os

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.prompts import Prompt
from pydantic import AnyUrl

mcp = FastMCP("changing-lab", log_level="WARNING")
COUNTER = {"n": 0}
SUBSCRIBED: set[str] = set()
LEVEL = {"set": "unset"}
BANDS = ["alpha", "beta", "delta", "gamma", "mu", "theta"]
CHANNELS = {"mu": ["C3", "C4", "Cz"], "alpha": ["O1", "O2", "Pz"]}

server = mcp._mcp_server
_capabilities = server.get_capabilities


def _with_subscribe(*args, **kwargs) -> types.ServerCapabilities:  # type: ignore[no-untyped-def]
    """The SDK's capabilities, with resources.subscribe (mcp 1.x never sets it itself)."""
    caps = _capabilities(*args, **kwargs)
    if caps.resources is not None:
        caps.resources.subscribe = True
        caps.resources.listChanged = True
    if caps.tools is not None:
        caps.tools.listChanged = True
    return caps


server.get_capabilities = _with_subscribe  # type: ignore[method-assign]


@server.subscribe_resource()
async def _subscribe(uri: AnyUrl) -> None:
    SUBSCRIBED.add(str(uri))


@server.unsubscribe_resource()
async def _unsubscribe(uri: AnyUrl) -> None:
    SUBSCRIBED.discard(str(uri))


@server.set_logging_level()
async def _set_level(level: types.LoggingLevel) -> None:
    LEVEL["set"] = level


@mcp.tool()
def log_level() -> str:
    """The level the client set (logging/setLevel), or 'unset'."""
    return LEVEL["set"]


@mcp.tool()
def crash() -> str:
    """Exit the process at once (the client restarts it on a later call)."""
    os._exit(1)


@mcp.resource("lab://counter", name="counter", mime_type="text/plain")
def counter() -> str:
    """A counter that `bump` raises."""
    return f"count={COUNTER['n']}"


def late_tool(text: str) -> str:
    """A tool that exists only after grow() ran."""
    return f"late: {text}"


def late_prompt() -> str:
    """A prompt that exists only after grow() ran."""
    return "Late prompt text."


@mcp.tool()
async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
    """Add a tool, a prompt and a resource, and tell the client their lists changed."""
    mcp.add_tool(late_tool)
    mcp.add_prompt(Prompt.from_function(late_prompt))
    mcp.resource("lab://late", name="late")(lambda: "late resource")
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_prompt_list_changed()
    await ctx.session.send_resource_list_changed()
    return "grown"


@mcp.tool()
async def chatty(ctx: Context) -> str:  # type: ignore[type-arg]
    """Send log messages at four levels."""
    await ctx.log("debug", "debug detail", logger_name="lab")
    await ctx.log("info", "info: loading", logger_name="lab")
    await ctx.log(
        "warning", "warning: low disk, key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234", logger_name="lab"
    )
    await ctx.log("error", "error: sensor 7 failed", logger_name="lab")
    return "talked"


@mcp.tool()
async def bump(ctx: Context) -> str:  # type: ignore[type-arg]
    """Raise the counter; tell a subscribed client."""
    COUNTER["n"] += 1
    if "lab://counter" in SUBSCRIBED:
        await ctx.session.send_resource_updated(AnyUrl("lab://counter"))
    return f"count={COUNTER['n']}"


@mcp.tool()
def subscriptions() -> str:
    """The URIs the client subscribed to, comma-separated."""
    return ",".join(sorted(SUBSCRIBED)) or "none"


@mcp.prompt()
def analyse(band: str, channel: str) -> str:
    """Analyse one band at one channel."""
    return f"Analyse the {band} band at {channel}."


@mcp.completion()
async def _complete(ref, argument, context):  # type: ignore[no-untyped-def]
    if not isinstance(ref, types.PromptReference) or ref.name != "analyse":
        return None
    if argument.name == "band":
        values = [b for b in BANDS if b.startswith(argument.value)]
        return types.Completion(values=values, total=len(values), hasMore=False)
    if argument.name == "channel":
        band = (context.arguments or {}).get("band") if context else None
        values = [c for c in CHANNELS.get(band or "", []) if c.startswith(argument.value)]
        return types.Completion(values=values, total=len(values), hasMore=False)
    return None


if __name__ == "__main__":
    mcp.run()
