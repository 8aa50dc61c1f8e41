"""Study handles: a one-shot client (a new MCP session per call: the Inspector's CLI, a script)
continues a study by passing the handle `load_data` gave it, as the 2026-07-28 revision has the
server mint handles that the client passes back instead of keeping a session.

A handle names a session's study (its kernel and tools, eeg/kernel/); it belongs to the bearer
token that got it (or to the stdio clients of this state folder), expires after
BRAINCHAT_MCP_HANDLE_IDLE_S unused (the study is released: its kernel ends), and one token holds
at most BRAINCHAT_MCP_STUDY_HANDLES: past that a new study gets no handle (its session keeps it)
and the client is told why. A wrong, foreign or expired handle is refused with what to do.

Each handle's study log is kept in the state folder (mcp-handles/<owner digest>/<handle>.json)
after every call, so a handle outlives its server process: a stdio client starts a new server
per call (the Inspector's CLI does), and that server rebuilds the study from the log (a replay,
as a resumed conversation's study is).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainchat.settings.declared import ServerVars
from brainchat.settings.fields import env_name

CAP_ENV = env_name(ServerVars, "mcp_study_handles")
IDLE_ENV = env_name(ServerVars, "mcp_handle_idle_s")
PREFIX = "study-"
SHAPE = re.compile(r"study-[A-Za-z0-9_-]{16}")  # what `issue` makes: nothing else is a file name


def handle_settings() -> tuple[int, int]:
    """(handles per token, idle seconds) in force (the environment and .env), checked."""
    from brainchat.settings.fields import check
    from brainchat.settings.load import read_env

    env = read_env()
    out = []
    for name in ("mcp_study_handles", "mcp_handle_idle_s"):
        field = ServerVars.model_fields[name]
        raw = env.get(str(field.alias), "").strip()
        out.append(int(check(ServerVars, name, raw) if raw else field.default))
    return out[0], out[1]


def handle_folder() -> Path:
    """Where handles' study logs are kept: the state folder's mcp-handles/."""
    from brainchat.store.config import load_store_config

    return load_store_config().state_dir / "mcp-handles"


def owner_of(request: Any) -> str:
    """Who holds handles: the bearer token's digest over HTTP (never the token), else stdio's
    one client."""
    if request is None:
        return "stdio"
    given = request.headers.get("authorization", "")
    return "token:" + hashlib.sha256(given.encode()).hexdigest()


@dataclass
class Held:
    entry: Any  # the server's SessionStudy
    owner: str
    used: float


class HandleTable:
    """The server's handles, by handle; with `folder`, their logs on disk and `make` to rebuild
    a handle's study in a process that did not issue it."""

    def __init__(
        self,
        cap: int,
        idle_s: float,
        clock: Callable[[], float] = time.time,
        folder: Path | None = None,
        make: Callable[[], Any] | None = None,
    ) -> None:
        self.cap, self.idle_s, self._clock = cap, idle_s, clock
        self.folder, self._make = folder, make
        self._held: dict[str, Held] = {}

    async def issue(self, entry: Any, owner: str) -> str | None:
        """`entry`'s handle (a new one if it has none), or None when `owner` holds the cap."""
        await self.expire()
        if entry.handle is not None and entry.handle in self._held:
            self._held[entry.handle].used = self._clock()
            return str(entry.handle)
        if self.held_by(owner) >= self.cap:
            return None
        handle = PREFIX + secrets.token_urlsafe(12)
        self._held[handle] = Held(entry, owner, self._clock())
        entry.handle = handle
        self.save(entry)
        return handle

    async def find(self, handle: str, owner: str) -> Any | None:
        """The study entry of `handle`, if it is `owner`'s and has not expired (else None)."""
        await self.expire()
        held = self._held.get(handle) or self._load(handle, owner)
        if held is None or not secrets.compare_digest(held.owner, owner):
            return None
        held.used = self._clock()
        return held.entry

    def held_by(self, owner: str) -> int:
        mine = {h for h, held in self._held.items() if held.owner == owner}
        return len(mine | self._on_disk(owner))

    async def expire(self) -> None:
        """Drop the handles idle past their life; their studies' kernels end."""
        now = self._clock()
        for handle, held in list(self._held.items()):
            if now - held.used > self.idle_s:
                del self._held[handle]
                held.entry.handle = None
                if self.folder is not None:
                    with contextlib.suppress(OSError):
                        self._path(handle, held.owner).unlink(missing_ok=True)
                await held.entry.study.release()

    # -- the logs on disk ----------------------------------------------------------------
    def save(self, entry: Any) -> None:
        """Keep `entry`'s study log under its handle (after each call: the study as it is now)."""
        held = self._held.get(entry.handle or "")
        if held is None or self.folder is None:
            return
        study = entry.study
        log = list(study.pending) if study.pending else list(study.log)
        path = self._path(entry.handle, held.owner)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text(json.dumps({"used": held.used, "log": log}, default=str))

    def _path(self, handle: str, owner: str) -> Path:
        digest = hashlib.sha256(owner.encode()).hexdigest()[:24]
        return (self.folder or Path()) / digest / f"{handle}.json"

    def _load(self, handle: str, owner: str) -> Held | None:
        if self.folder is None or self._make is None or not SHAPE.fullmatch(handle):
            return None
        try:
            saved = json.loads(self._path(handle, owner).read_text())
        except (OSError, ValueError):
            return None
        if self._clock() - float(saved.get("used", 0)) > self.idle_s:
            self._path(handle, owner).unlink(missing_ok=True)
            return None
        entry = self._make()
        if saved.get("log"):
            entry.study.pending = list(saved["log"])  # replayed at its first call
        entry.handle = handle
        self._held[handle] = Held(entry, owner, self._clock())
        return self._held[handle]

    def _on_disk(self, owner: str) -> set[str]:
        """`owner`'s unexpired handles on disk (expired ones are removed on the way)."""
        if self.folder is None:
            return set()
        folder, out = self._path("x", owner).parent, set()
        for path in folder.glob("study-*.json") if folder.is_dir() else ():
            try:
                used = float(json.loads(path.read_text()).get("used", 0))
            except (OSError, ValueError):
                continue
            if self._clock() - used > self.idle_s:
                path.unlink(missing_ok=True)
            else:
                out.add(path.stem)
        return out

    def refusal(self, handle: str) -> str:
        minutes = self.idle_s / 60
        return (
            f"study handle {handle[:40]!r} is unknown, expired (handles last {minutes:g} minutes "
            "unused) or was given to another client: call load_data without `study` to start a "
            "new study and use the handle it returns"
        )

    def no_handle(self) -> str:
        return (
            f"no study handle: this client holds {self.cap} already (the cap, {CAP_ENV}); this "
            "session keeps its study; pass one of the handles it holds, or wait until one has "
            f"been unused for {self.idle_s / 60:g} minutes"
        )
