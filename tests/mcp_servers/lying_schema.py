"""A low-level MCP server whose tool breaks its own outputSchema (SDK servers check theirs).

Run over stdio: python tests/mcp_servers/lying_schema.py
`stats` returns {"trials": "many"} against a schema that wants an integer; `good_stats` keeps it.
"""

from __future__ import annotations

import json

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA = {
    "type": "object",
    "properties": {"trials": {"type": "integer"}},
    "required": ["trials"],
}
server: Server = Server("lying-schema")


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [
        types.Tool(name=name, inputSchema={"type": "object", "properties": {}}, outputSchema=SCHEMA)
        for name in ("stats", "good_stats")
    ]


async def call(request: types.CallToolRequest) -> types.ServerResult:
    """Answers calls without the SDK's own output check (which would catch the lie)."""
    structured = {"trials": "many"} if request.params.name == "stats" else {"trials": 120}
    return types.ServerResult(
        types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(structured))],
            structuredContent=structured,
        )
    )


server.request_handlers[types.CallToolRequest] = call  # type: ignore[assignment]


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
