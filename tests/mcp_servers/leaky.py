"""A FastMCP server that writes secrets to its stderr, then dies: at start, or inside its `crash` tool.

    python tests/mcp_servers/leaky.py                 # serves `crash` over stdio
    python tests/mcp_servers/leaky.py --die-at-start  # leaks and exits before the handshake

The secrets come from $LEAKY_TOKEN and $LEAKY_BEARER, as a misbehaving real server would print
its own credentials in a failure message.
"""

from __future__ import annotations

import os
import sys

from mcp.server.fastmcp import FastMCP


def leak() -> None:
    sys.stderr.write(f"leaky: upstream refused token={os.environ.get('LEAKY_TOKEN', '')}\n")
    sys.stderr.write(f"leaky: sent Authorization: Bearer {os.environ.get('LEAKY_BEARER', '')}\n")
    sys.stderr.flush()


mcp = FastMCP("leaky", log_level="WARNING")


@mcp.tool()
def crash() -> str:
    """Print the credentials to stderr and kill the process in the middle of the call."""
    leak()
    os._exit(3)


if __name__ == "__main__":
    if "--die-at-start" in sys.argv:
        leak()
        sys.exit(3)
    mcp.run()
