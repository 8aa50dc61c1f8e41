"""A FastMCP server for the tests: arithmetic, echo, a pid, a hang, a crash, an error, structured output.

Run over stdio:             python tests/mcp_servers/eeg_lab.py
Over streamable HTTP / SSE: python tests/mcp_servers/eeg_lab.py --http PORT   (or --sse PORT)
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path
from typing import TypedDict

from mcp.server.fastmcp import FastMCP, Image

# 1x1 red PNG
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

mcp = FastMCP("eeg-lab", log_level="WARNING")


class Weather(TypedDict):
    city: str
    temperature_c: float
    conditions: str


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool()
def pid() -> int:
    """The server's process id (tests check one process serves many calls)."""
    return os.getpid()


@mcp.tool()
async def slow(seconds: float, started_file: str = "") -> str:
    """Sleep for `seconds`, then answer (to test call timeouts); `started_file` marks the start."""
    if started_file:
        Path(started_file).write_text("started")  # noqa: ASYNC240 - a test server, tiny write
    await asyncio.sleep(seconds)
    return f"slept {seconds} s"


@mcp.tool()
def crash() -> str:
    """Kill the server process in the middle of the call."""
    sys.stderr.write("eeg-lab: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@mcp.tool()
def fail(message: str) -> str:
    """Raise an error with `message` (becomes an isError result)."""
    raise ValueError(message)


@mcp.tool()
def structured_weather(city: str) -> Weather:
    """Current weather of a city, as structured content."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


@mcp.tool()
def red_dot() -> Image:
    """A 1x1 PNG image."""
    return Image(data=_PNG, format="png")


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] in ("--http", "--sse"):
        mcp.settings.port = int(argv[1])
        mcp.run(transport="streamable-http" if argv[0] == "--http" else "sse")
    else:
        mcp.run()


if __name__ == "__main__":
    main(sys.argv[1:])
