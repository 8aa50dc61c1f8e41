"""Failed logins, throttled per client and per name at a client, in tables that stay small.

A name tried from one client backs off after `name_limit` failures; a client backs off after
`client_limit` failures whatever the names. Each further failure doubles the wait, up to `cap`.
While a key waits, its logins are refused unchecked and not counted; once the wait is over the
right password works again. So guessing ana's password at one desk does not lock ana out at hers,
and one address cannot try name after name. Each table keeps at most `max_entries` keys (the
least recently failing go first) and forgets a key `forget` seconds after its last failure; names
are cut to NAME_CHARS (longer ones are no account's), so memory stays bounded whatever is sent.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

NAME_CHARS = 64
CLIENT_CHARS = 64


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    until: float = 0.0


class FailureTable:
    """Failures per key with an exponential back-off; an LRU bounded in size and age."""

    def __init__(
        self, limit: int, base: float, cap: float, forget: float, max_entries: int
    ) -> None:
        self.limit, self.base, self.cap = limit, base, cap
        self.forget_after, self.max_entries = forget, max_entries
        self.entries: OrderedDict[Hashable, _Failures] = OrderedDict()

    def __len__(self) -> int:
        return len(self.entries)

    def wait(self, key: Hashable, now: float) -> float:
        """Seconds before `key` may try again (0: now)."""
        self._expire(now)
        entry = self.entries.get(key)
        return max(0.0, entry.until - now) if entry is not None else 0.0

    def failed(self, key: Hashable, now: float) -> None:
        self._expire(now)
        entry = self.entries.pop(key, None) or _Failures()
        entry.count += 1
        entry.last = now
        if entry.count >= self.limit:
            entry.until = now + min(self.cap, self.base * 2 ** (entry.count - self.limit))
        self.entries[key] = entry  # last: the most recently failing
        while len(self.entries) > self.max_entries:
            self.entries.popitem(last=False)

    def forget(self, key: Hashable) -> None:
        self.entries.pop(key, None)

    def _expire(self, now: float) -> None:
        while self.entries:
            oldest = next(iter(self.entries.values()))
            if now - oldest.last <= self.forget_after:
                return
            self.entries.popitem(last=False)


class LoginThrottle:
    """Who must wait before a login is checked: a name at a client, or a client."""

    def __init__(
        self,
        name_limit: int = 5,
        client_limit: int = 10,
        base: float = 10.0,
        cap: float = 900.0,
        forget: float = 3600.0,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.names = FailureTable(name_limit, base, cap, max(forget, cap), max_entries)
        self.clients = FailureTable(client_limit, base, cap, max(forget, cap), max_entries)
        self.clock = clock

    def __len__(self) -> int:
        return len(self.names) + len(self.clients)

    @staticmethod
    def _keys(name: str, client: str) -> tuple[tuple[str, str], str]:
        where = (client or "?")[:CLIENT_CHARS]
        return ((name or "")[:NAME_CHARS], where), where

    def wait(self, name: str, client: str) -> float:
        """Seconds this login must wait before it is checked (0: check it now)."""
        name_key, client_key = self._keys(name, client)
        now = self.clock()
        return max(self.names.wait(name_key, now), self.clients.wait(client_key, now))

    def failed(self, name: str, client: str) -> None:
        name_key, client_key = self._keys(name, client)
        now = self.clock()
        self.names.failed(name_key, now)
        self.clients.failed(client_key, now)

    def succeeded(self, name: str, client: str) -> None:
        """The name's failures at this client are forgotten (not the client's: a guesser with an
        account of their own cannot reset their count by logging in)."""
        self.names.forget(self._keys(name, client)[0])
