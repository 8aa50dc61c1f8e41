"""A FastMCP server whose tools declare MCP hints: one destructive, one read-only, one with none.

Run over stdio: python tests/mcp_servers/hinted_notes.py LOG   (or --http PORT LOG)
Every call appends one line to LOG, so a test can tell which tools really ran.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("hinted-notes", log_level="WARNING")
LOG = Path(sys.argv[-1])


def _record(line: str) -> None:
    with LOG.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


def _notes() -> list[str]:
    lines = LOG.read_text(encoding="utf-8").splitlines() if LOG.exists() else []
    return [line.removeprefix("add:") for line in lines if line.startswith("add:")]


@mcp.tool(annotations=ToolAnnotations(destructiveHint=True))
def wipe_notes() -> str:
    """Delete every note."""
    _record("wipe")
    return "all notes deleted"


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_notes() -> str:
    """List the notes."""
    _record("read")
    return "\n".join(_notes()) or "(no notes)"


@mcp.tool()
def add_note(text: str) -> str:
    """Add a note."""
    _record(f"add:{text}")
    return f"added {text!r}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.settings.port = int(sys.argv[2])
        mcp.run("streamable-http")
    else:
        mcp.run()
