"""The client's roots (MCP roots/list): the data folder, as a `file://` root.

BRAINCHAT_MCP_ROOTS says how: `read_only` (the default) or `read_write` names the data folder
(BRAINCHAT_DATA_DIR) as one root whose name and `_meta` say which; `off` declares no roots
capability at all. A root is advice to the server (the specification's word: servers SHOULD
respect it); brainchat cannot enforce it on a server that runs with the user's own file access.
With accounts (BRAINCHAT_AUTH other than `local`) no roots are offered, whatever the mode: a
configured server is shared by every user, and the data folder holds every user's folder, so a
server that takes its roots as its allowed folders (server-filesystem does) would let one user's
agent read another's files. When the folder (or the mode) changes, each session that was told the roots gets
`notifications/roots/list_changed` (`Roots.check`, asked before each model request).

A server the user plugs in serves that user alone: it is told the conversation's own folder
(with accounts `<data>/users/<name>`; one that is not a user's own is never told), in the same
mode, accounts or not (`PluggedRoots`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
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
FOLDER_WAIT = 5.0  # seconds a plugged server's roots/list waits for its conversation's folder


def accounts() -> bool:
    """Any BRAINCHAT_AUTH but `local` (an unknown one means accounts: fail closed)."""
    return os.environ.get(AUTH_ENV, "").strip().lower() not in ("", "local")


def mode() -> str:
    """read_only, read_write or off (a bad value keeps the default; start-up names it); off
    with accounts, where a configured server serves every user."""
    return "off" if accounts() else plugged_mode()


def plugged_mode() -> str:
    """read_only, read_write or off for a server the user plugged in (it serves that user)."""
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
    """The roots offered now to configured servers (none when off)."""
    how = mode()
    return [] if how == "off" else [_root(folder(), how)]


def own_folder(path: Path | None) -> list[types.Root]:
    """The roots offered to a plugged server whose conversation's folder is `path` (None: not
    known yet). With accounts only a user's own folder (`<data>/users/<name>`) is offered: the
    data folder holds every user's files."""
    how = plugged_mode()
    if how == "off" or path is None:
        return []
    path = path.expanduser().resolve()
    users = folder() / "users"
    if accounts() and (path == users or not path.is_relative_to(users)):
        return []
    return [_root(path, how)]


def _root(path: Path, how: str) -> types.Root:
    read_only = how != "read_write"
    name = f"brainchat data ({'read-only' if read_only else 'read-write'})"
    return types.Root(uri=path.as_uri(), name=name, _meta={META_KEY: read_only})  # type: ignore[arg-type]


class Roots:
    """One server's list_roots_callback; `check(session)` tells it when they changed."""

    def __init__(self, offered: Callable[[], list[types.Root]] = current) -> None:
        self.offered = offered  # the roots to tell now
        self.given: list[types.Root] | None = None  # what the server was last told

    async def __call__(self, context: Any) -> types.ListRootsResult:
        self.given = self.offered()
        return types.ListRootsResult(roots=self.given)

    def stale(self) -> bool:
        """The server was told roots that are no longer the ones offered (a cheap check)."""
        return self.given is not None and self.given != self.offered()

    async def check(self, session: Any) -> bool:
        """Send roots/list_changed when the roots differ from those the server was told."""
        if self.given is None or self.given == self.offered():
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


class PluggedRoots(Roots):
    """A plugged server's roots: its conversation's folder, which `connect_user_server` hands
    over after Chainlit has initialized the session. A `roots/list` before that waits for it
    (FOLDER_WAIT); past the wait the server gets no roots, and roots/list_changed once the
    folder is known (`Notices.roots_changed`)."""

    def __init__(self) -> None:
        super().__init__(lambda: own_folder(self.folder))
        self.folder: Path | None = None
        self._known = asyncio.Event()

    def use(self, path: Path) -> None:
        self.folder = path
        self._known.set()

    async def __call__(self, context: Any) -> types.ListRootsResult:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._known.wait(), FOLDER_WAIT)
        result = await super().__call__(context)
        if not result.roots and plugged_served():
            known = (
                "its folder is not a user's own" if self.folder else "its folder is not known yet"
            )
            log.info("MCP roots: a plugged server is told none (%s)", known)
        return result


def plugged_served() -> bool:
    """Whether a plugged server is offered roots (the capability is declared only then)."""
    return plugged_mode() != "off"
