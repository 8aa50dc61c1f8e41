"""`brainchat mcp-server [--http [--host H] [--port P]]`: check the configuration, then serve."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from brainchat import redact
from brainchat.settings import load_settings
from brainchat.settings.declared import ServerVars
from brainchat.settings.fields import env_name

TOKEN_ENV = env_name(ServerVars, "mcp_token")
MIN_TOKEN = 16  # characters; `python -c "import secrets; print(secrets.token_urlsafe(32))"`


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="brainchat mcp-server",
        description="Serve brainchat's EEG tools over MCP: stdio (default), or streamable HTTP "
        f"at /mcp with the bearer token in {TOKEN_ENV}. One EEG study per MCP session.",
    )
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address (default: loopback)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default: 8765)")
    opts = parser.parse_args(argv)
    _logging()
    settings = load_settings()
    if problem := _problem(settings.data_dir, settings.errors):
        print(f"brainchat mcp-server: {problem}", file=sys.stderr)
        return 2
    from brainchat.mcpserver.server import build_server

    if not opts.http:
        import anyio

        anyio.run(_serve_stdio, build_server(settings))
        return 0
    token = os.environ.get(TOKEN_ENV) or _dotenv_token()
    if not token or len(token.strip()) < MIN_TOKEN:
        print(
            f"brainchat mcp-server: --http needs a bearer token of at least {MIN_TOKEN} characters "
            f'in {TOKEN_ENV} (e.g. python -c "import secrets; print(secrets.token_urlsafe(32))"); '
            "clients send it as 'Authorization: Bearer <token>'",
            file=sys.stderr,
        )
        return 2
    token = token.strip()
    redact.remember(token)  # never in a log line, whatever logs it
    import anyio

    from brainchat.mcpserver.http import serve_http
    from brainchat.mcpserver.origins import OriginsError, bound_names, configured_origins
    from brainchat.store.config import is_loopback

    try:
        origins = configured_origins()
    except OriginsError as exc:
        print(f"brainchat mcp-server: {exc}", file=sys.stderr)
        return 2
    where = f"http://{opts.host}:{opts.port}/mcp"
    print(f"brainchat mcp-server: streamable HTTP at {where} (bearer token); Host names "
          f"answered: {', '.join(bound_names(opts.host))}; other browser origins allowed: "
          f"{', '.join(origins) or 'none'}", file=sys.stderr)  # fmt: skip
    if not is_loopback(opts.host):
        print(
            "brainchat mcp-server: not loopback: the token crosses the network in plain HTTP; "
            "put a TLS proxy in front",
            file=sys.stderr,
        )
    anyio.run(serve_http, build_server(settings), token, opts.host, opts.port, origins)
    return 0


def _problem(data_dir: Path, errors: tuple[Any, ...]) -> str | None:
    """A bad data-folder setting, or a folder that is not there (a client starts the server in a
    folder of its own choosing, so a relative default rarely points where one meant)."""
    for err in errors:
        if getattr(err, "variable", "") in ("BRAINCHAT_DATA_DIR", "BRAINCHAT_MAX_OPERATION_MB"):
            return str(err)
    if not data_dir.is_dir():
        return (
            f"the data folder {data_dir.resolve()} does not exist; set BRAINCHAT_DATA_DIR to an "
            "absolute path (in the client's env block for the server)"
        )
    return None


def _dotenv_token() -> str | None:
    from brainchat.settings.load import read_env

    return read_env().get(TOKEN_ENV)


class _Probe(logging.Filter):
    """A 2026-07-28 client's `server/discover` probe, which this (2025-11-25) server refuses and
    the client then falls back to `initialize`: one line, not the SDK's 31 validation errors."""

    def filter(self, record: logging.LogRecord) -> bool:
        said = record.getMessage()
        if said.startswith("Failed to validate request") and "server/discover" in said:
            record.msg, record.args = PROBED, ()
        return True


PROBED = (
    "a client probed server/discover (the 2026-07-28 revision); refused as a 2025-11-25 server, "
    "so it falls back to initialize"
)


def _logging() -> None:
    """Logs on stderr, secrets masked: stdout is the stdio transport's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_Probe())
    handler.addFilter(redact.MaskingFilter())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


async def _serve_stdio(server: Any) -> None:
    """stdio, with fd 1 kept for the protocol alone: anything else that writes to stdout (a
    library's print, MNE's log) goes to stderr instead of corrupting the JSON-RPC stream."""
    from io import TextIOWrapper

    import anyio
    from mcp.server.stdio import stdio_server

    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    out = anyio.wrap_file(TextIOWrapper(protocol, encoding="utf-8"))
    async with stdio_server(stdout=out) as (read, write):
        await server.run(read, write, server.create_initialization_options())
