"""A FastMCP server whose calls take time: a plain sleep, and work that reports progress.

Each call that the client cancels writes 'cancelled' to its `path`; `remember`/`recall` keep a
value in the process, so a test sees whether the session (and its process) outlived a timeout.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
from mcp.server.fastmcp import Context, FastMCP

mcp = FastMCP("slow-lab")
_kept: dict[str, str] = {}


def _write(path: str, text: str) -> None:
    if path:
        Path(path).write_text(text)


@mcp.tool()
async def nap(seconds: float, path: str = "") -> str:
    """Sleep `seconds` without a word; 'cancelled' goes to `path` if the client gives up."""
    _write(path, "started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _write(path, "cancelled")
        raise
    return f"napped {seconds:g} s"


@mcp.tool()
async def work(seconds: float, ctx: Context, every: float = 0.3, path: str = "") -> str:
    """Work for `seconds`, reporting progress every `every` seconds."""
    _write(path, "started")
    steps = max(1, round(seconds / every))
    try:
        for i in range(steps):
            await anyio.sleep(every)
            await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
    except anyio.get_cancelled_exc_class():
        _write(path, "cancelled")
        raise
    return f"worked {steps} steps"


@mcp.tool()
def freeze(seconds: float) -> str:
    """Block the server's event loop for `seconds`: it answers nothing meanwhile, not even a ping."""
    time.sleep(seconds)
    return f"froze {seconds:g} s"


@mcp.tool()
def remember(value: str) -> str:
    """Keep `value` in this process."""
    _kept["value"] = value
    return "kept"


@mcp.tool()
def recall() -> str:
    """The kept value and this process's id."""
    return f"{_kept.get('value', '(nothing)')} in {os.getpid()}"


if __name__ == "__main__":
    mcp.run()
