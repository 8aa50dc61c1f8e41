"""A FastMCP server with instructions, resources (text, binary, a template) and prompts.

Run over stdio: python tests/mcp_servers/study_notes.py [--long-instructions]
or over streamable HTTP: python tests/mcp_servers/study_notes.py --http PORT
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.prompts.base import AssistantMessage, UserMessage

INSTRUCTIONS = (
    "Study notes server: call list_subjects before anything else; subject ids are S01-S03. "
    "Cite notes as notes://<subject>."
)
LONG = "--long-instructions" in sys.argv
TEXT = INSTRUCTIONS + (
    " Keep every rule in mind. PADDING-WORD" * 4000 + " FINAL-RULE" if LONG else ""
)
PROTOCOL = "Motor imagery protocol: 4 s cue, left vs right hand, 64-channel EEG at 512 Hz."
PNG = bytes.fromhex("89504e470d0a1a0a") + b"\0" * 64

mcp = FastMCP("study-notes", instructions=TEXT, log_level="WARNING")


@mcp.tool(annotations={"readOnlyHint": True})  # type: ignore[arg-type]
def list_subjects() -> str:
    """The study's subjects."""
    return "S01, S02, S03"


@mcp.tool(annotations={"readOnlyHint": True})  # type: ignore[arg-type]
async def count_trials(ctx: Context) -> str:  # type: ignore[type-arg]
    """Count the trials of every subject, reporting progress."""
    for i, subject in enumerate(("S01", "S02", "S03"), 1):
        await ctx.report_progress(i, 3, f"counted {subject}")
    return "120 trials"


@mcp.tool(annotations={"readOnlyHint": True})  # type: ignore[arg-type]
def trial_table() -> list[dict[str, str | int]]:
    """Trials per subject, as records (structured output)."""
    return [{"subject": s, "trials": n} for s, n in (("S01", 40), ("S02", 38), ("S03", 42))]


def _write(path: str, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")


@mcp.tool()
async def hold(path: str) -> str:
    """Write 'started' to `path`, wait a minute; 'cancelled' if the client cancels the call."""
    import anyio

    _write(path, "started")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        _write(path, "cancelled")
        raise
    return "held"


@mcp.resource("notes://protocol", name="protocol", mime_type="text/plain")
def protocol() -> str:
    """The recording protocol."""
    return PROTOCOL


@mcp.resource("notes://logo.png", name="logo", mime_type="image/png")
def logo() -> bytes:
    """The lab's logo."""
    return PNG


@mcp.resource("notes://big", name="big", mime_type="text/plain")
def big() -> str:
    """A very long note."""
    return "BIG-START " + "lorem ipsum " * 50_000 + " BIG-END"


@mcp.resource("notes://subject/{subject}", name="subject_note", mime_type="text/plain")
def subject_note(subject: str) -> str:
    """One subject's note."""
    return f"Subject {subject}: good signal, 2 bad channels (T7, P8)."


@mcp.prompt(title="Summarise a subject")
def summarise(subject: str, style: str = "short") -> str:
    """Ask for a summary of one subject's session."""
    return f"Summarise subject {subject} in a {style} style, citing notes://subject/{subject}."


@mcp.prompt()
def compare(first: str, second: str) -> list[UserMessage | AssistantMessage]:
    """Compare two subjects."""
    return [
        UserMessage(f"Compare subjects {first} and {second}."),
        AssistantMessage("Which measure should I compare?"),
        UserMessage("Band power in the mu band."),
    ]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.settings.port = int(sys.argv[2])
        mcp.run("streamable-http")
    else:
        mcp.run()
