"""A FastMCP server that asks the client's model (sampling/createMessage) and its folders
(roots/list), as servers that lean on the client do (#43).

- `summarise(text)` asks the client's model for a one-line summary and returns what came back,
  or "refused: <the client's error>".
- `folders()` lists the client's roots ("uri name" lines), or "refused: ...".
- `capabilities()` says which of sampling and roots the client declared at initialize.
- `roots_changes()` counts the notifications/roots/list_changed the server received.

Run over stdio: python tests/mcp_servers/sampling_lab.py
"""

from __future__ import annotations

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError

mcp = FastMCP("sampling-lab", log_level="WARNING")
CHANGES = {"roots": 0}


@mcp.tool()
async def summarise(text: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Summarise a text with the client's model."""
    try:
        result = await ctx.session.create_message(
            messages=[
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text=f"Summarise: {text}")
                )
            ],
            max_tokens=64,
            system_prompt="You write one-line summaries.",
        )
    except McpError as exc:
        return f"refused: {exc.error.message} ({exc.error.code})"
    content = result.content
    said = content.text if isinstance(content, types.TextContent) else str(content)
    return f"summary from {result.model}: {said}"


@mcp.tool()
async def folders(ctx: Context) -> str:  # type: ignore[type-arg]
    """The client's roots, one per line."""
    try:
        result = await ctx.session.list_roots()
    except McpError as exc:
        return f"refused: {exc.error.message}"
    return "\n".join(f"{r.uri} {r.name}" for r in result.roots) or "no roots"


@mcp.tool()
async def capabilities(ctx: Context) -> str:  # type: ignore[type-arg]
    """Which of sampling and roots the client declared."""
    params = ctx.session.client_params
    caps = params.capabilities if params else types.ClientCapabilities()
    roots = caps.roots
    return (
        f"sampling={caps.sampling is not None} roots={roots is not None} "
        f"roots.listChanged={bool(roots and roots.listChanged)}"
    )


@mcp.tool()
async def client(ctx: Context) -> str:  # type: ignore[type-arg]
    """The client's clientInfo as 'name version'."""
    params = ctx.session.client_params
    return f"{params.clientInfo.name} {params.clientInfo.version}" if params else "unknown"


@mcp.tool()
def roots_changes() -> str:
    """How many roots/list_changed notifications came."""
    return str(CHANGES["roots"])


async def _roots_changed(notification: types.RootsListChangedNotification) -> None:
    CHANGES["roots"] += 1


mcp._mcp_server.notification_handlers[types.RootsListChangedNotification] = _roots_changed

if __name__ == "__main__":
    mcp.run()
