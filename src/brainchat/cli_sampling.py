"""`brainchat ask`: an MCP server asks to use the model mid-call (sampling), approved in the
terminal.

In a terminal the request is shown (server, tool, token limit, its instructions and messages,
masked) and asked: [o]nce, [a]lways for this server (for the rest of the run), or [d]eny.
Without a terminal (CI, a pipe) nobody can approve: the server gets an error, and stderr says so,
and what to do, in one line. Prompts go to stderr, so `--json` output stays clean.
"""

from __future__ import annotations

import sys
from typing import TextIO

from brainchat.cli_elicit import _Lines
from brainchat.redact import mask
from brainchat.tools.mcp_sampling import Approver, Decision, Request

_CHOICES: dict[str, Decision] = {"o": "once", "once": "once", "a": "always", "always": "always"}
_CHOICES |= {"d": "deny", "deny": "deny"}


def terminal_approver(stdin: TextIO | None = None, out: TextIO | None = None) -> Approver:
    """The `Approver` of `brainchat ask`: the terminal when stdin is one, else a one-line denial."""
    stdin, out = stdin or sys.stdin, out or sys.stderr
    lines = _Lines(stdin)
    always: set[str] = set()

    async def approve(request: Request) -> Decision:
        if request.server in always:
            return "always"
        if not stdin.isatty():
            print(
                f"! MCP server '{request.server}' asked to use the model during {request.tool} "
                "(sampling), which cannot be approved without a terminal: denied. Run `brainchat "
                "ask` in a terminal, or use the web app, to allow it.",
                file=out,
                flush=True,
            )
            return "deny"
        print(
            f"\n? MCP server '{request.server}' asks to use the model (sampling) during "
            f"{request.tool}: up to {request.max_tokens} tokens.",
            file=out,
        )
        if request.system:
            print(f"  Its instructions: {mask(request.system)[:500]}", file=out)
        print("  " + mask(request.preview()).replace("\n", "\n  "), file=out)
        while True:
            print("  Allow? [o]nce / [a]lways for this server / [d]eny: ", end="", file=out,
                  flush=True)  # fmt: skip
            line = await lines.read()
            if line is None:
                return "deny"
            choice = _CHOICES.get(line.strip().lower())
            if choice is not None:
                if choice == "always":
                    always.add(request.server)
                return choice

    return approve
