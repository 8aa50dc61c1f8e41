"""Study handles: a one-shot client (a new MCP session per call: the Inspector's CLI, a script)
continues a study by passing the handle `load_data` gave it, as the 2026-07-28 revision has the
server mint handles that the client passes back instead of keeping a session.

A handle names a session's study (its kernel and tools, eeg/kernel/); it belongs to the bearer
token that got it (or to the one stdio client), expires after BRAINCHAT_MCP_HANDLE_IDLE_S unused
(the study is released: its kernel ends, its log stays until nothing holds it), and one token
holds at most BRAINCHAT_MCP_STUDY_HANDLES: past that a new study gets no handle (its session keeps
it) and the client is told why. A wrong, foreign or expired handle is refused with what to do.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from brainchat.settings.declared import ServerVars
from brainchat.settings.fields import env_name

CAP_ENV = env_name(ServerVars, "mcp_study_handles")
IDLE_ENV = env_name(ServerVars, "mcp_handle_idle_s")
PREFIX = "study-"


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
    """The server's handles, by handle."""

    def __init__(self, cap: int, idle_s: float, clock: Callable[[], float] = time.monotonic):
        self.cap, self.idle_s, self._clock = cap, idle_s, clock
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
        return handle

    async def find(self, handle: str, owner: str) -> Any | None:
        """The study entry of `handle`, if it is `owner`'s and has not expired (else None)."""
        await self.expire()
        held = self._held.get(handle)
        if held is None or not secrets.compare_digest(held.owner, owner):
            return None
        held.used = self._clock()
        return held.entry

    def held_by(self, owner: str) -> int:
        return sum(h.owner == owner for h in self._held.values())

    async def expire(self) -> None:
        """Drop the handles idle past their life; their studies' kernels end."""
        now = self._clock()
        for handle, held in list(self._held.items()):
            if now - held.used > self.idle_s:
                del self._held[handle]
                held.entry.handle = None
                await held.entry.study.release()

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
