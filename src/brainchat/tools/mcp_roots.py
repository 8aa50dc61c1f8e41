"""The client's roots (MCP roots/list): the data folder, as a `file://` root, for configured
servers.

BRAINCHAT_MCP_ROOTS says how: `read_only` (the default) or `read_write` names the data folder
(BRAINCHAT_DATA_DIR) as one root whose name and `_meta` say which; `off` declares no roots
capability at all. A root is advice to the server (the specification's word: servers SHOULD
respect it); brainchat cannot enforce it on a server that runs with the user's own file access.
With accounts (BRAINCHAT_AUTH other than `local`) no roots are offered, whatever the mode: a
configured server is shared by every user, and the data folder holds every user's folder, so a
server that takes its roots as its allowed folders (server-filesystem does) would let one user's
agent read another's files. When the folder (or the mode) changes, each session that was told the roots gets
`notifications/roots/list_changed` (`Roots.check`, asked before each model request).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from mcp import types

from brainchat.redact import get_logger
from brainchat.settings.declared import AppVars, StoreVars
from brainchat.settings.errors import ConfigError
from brainchat.settings.fields import check, default, env_name

log = get_logger("brainchat.tools.mcp")
MODE_ENV = env_name(AppVars, "mcp_roots")
FOLDER_ENV = env_name(AppVars, "data_dir")
AUTH_ENV = env_name(StoreVars, "auth")
META_KEY = "brainchat/readOnly"


def mode() -> str:
    """read_only, read_write or off (a bad value keeps the default; start-up names it); off
    with accounts (any BRAINCHAT_AUTH but `local`: an unknown one means accounts, fail closed)."""
    if os.environ.get(AUTH_ENV, "").strip().lower() not in ("", "local"):
        return "off"
    raw = os.environ.get(MODE_ENV, "").strip()
    if raw:
        with contextlib.suppress(ConfigError):
            return str(check(AppVars, "mcp_roots", raw))
    return str(default(AppVars, "mcp_roots"))


def folder() -> Path:
    """The data folder as the app reads it (BRAINCHAT_DATA_DIR), absolute."""
    raw = os.environ.get(FOLDER_ENV, "").strip()
    return Path(raw or default(AppVars, "data_dir")).expanduser().resolve()


def current() -> list[types.Root]:
    """The roots offered now (none when off)."""
    how = mode()
    if how == "off":
        return []
    read_only = how != "read_write"
    path = folder()
    name = f"brainchat data ({'read-only' if read_only else 'read-write'})"
    return [types.Root(uri=path.as_uri(), name=name, _meta={META_KEY: read_only})]  # type: ignore[arg-type]


class Roots:
    """One server's list_roots_callback; `check(session)` tells it when they changed."""

    def __init__(self) -> None:
        self.given: list[types.Root] | None = None  # what the server was last told

    async def __call__(self, context: Any) -> types.ListRootsResult:
        self.given = current()
        return types.ListRootsResult(roots=self.given)

    def stale(self) -> bool:
        """The server was told roots that are no longer the ones offered (a cheap check)."""
        return self.given is not None and self.given != current()

    async def check(self, session: Any) -> bool:
        """Send roots/list_changed when the roots differ from those the server was told."""
        if self.given is None or self.given == current():
            return False
        self.given = None  # told once; the server lists them again
        try:
            await session.send_roots_list_changed()
        except Exception as exc:  # noqa: BLE001 - a closed session is told at its reconnect
            log.info("roots/list_changed not sent: %s", type(exc).__name__)
            return False
        return True


def served() -> bool:
    """Whether configured servers are offered roots (the capability is declared only then)."""
    return mode() != "off"
