"""Password accounts: argon2id hashes and session keys in `brainchat_accounts`.

A login's cookie names the account's session key; logging out, a password change and removal
replace (or drop) the key, which ends every session of the account at once, in every process.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from typing import Any

from sqlalchemy import delete, select, update

from brainchat.store.schema import accounts
from brainchat.store.sql import Db

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
MIN_PASSWORD, MAX_PASSWORD = 8, 1024


class AccountError(ValueError):
    """A name or password that cannot be used, said why."""


def check_name(name: str) -> str:
    if not NAME.match(name or ""):
        raise AccountError(
            f"user name {name[:40]!r} is not valid: use 1-64 letters, digits, '.', '_', '-' or "
            "'@', starting with a letter or digit"
        )
    return name


def check_password(password: str) -> str:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(
            f"the password must have {MIN_PASSWORD} to {MAX_PASSWORD} characters "
            f"(it has {len(password)})"
        )
    return password


def new_session_key() -> str:
    return secrets.token_urlsafe(18)


def _hasher() -> Any:
    from argon2 import PasswordHasher

    return PasswordHasher()  # argon2id with the library's current defaults


class Accounts:
    """Who may log in with a password. Hashes never leave this class."""

    def __init__(self, db: Db) -> None:
        self.db = db
        self._dummy: str | None = None

    async def add(self, name: str, password: str, now: str) -> None:
        check_name(name)
        hashed = _hasher().hash(check_password(password))
        async with self.db.write_lock, self.db.engine.begin() as conn:
            found = await conn.execute(
                select(accounts.c.identifier).where(accounts.c.identifier == name)
            )
            if found.first() is not None:
                raise AccountError(
                    f"user {name!r} exists already; use `brainchat users passwd {name}`"
                )
            await self.db.upsert(
                conn,
                accounts,
                {
                    "identifier": name,
                    "password_hash": hashed,
                    "createdAt": now,
                    "session_key": new_session_key(),  # a removed namesake's cookies stay dead
                },
                keys=("identifier",),
            )

    async def set_password(self, name: str, password: str) -> None:
        """A new password; every session of the account ends."""
        hashed = _hasher().hash(check_password(password))
        async with self.db.write_lock, self.db.engine.begin() as conn:
            stmt = (
                update(accounts)
                .where(accounts.c.identifier == name)
                .values(password_hash=hashed, session_key=new_session_key())
            )
            if (await conn.execute(stmt)).rowcount == 0:
                raise AccountError(f"no user {name!r}; add one with `brainchat users add {name}`")

    async def end_sessions(self, name: str) -> bool:
        """End every session of the account (logging out); False when there is no such account."""
        async with self.db.write_lock, self.db.engine.begin() as conn:
            stmt = (
                update(accounts)
                .where(accounts.c.identifier == name)
                .values(session_key=new_session_key())
            )
            return bool((await conn.execute(stmt)).rowcount)

    async def session_key(self, name: str) -> str | None:
        """The key a valid session of the account names; None: no account (or no login yet)."""
        async with self.db.engine.connect() as conn:
            stmt = select(accounts.c.session_key).where(accounts.c.identifier == name)
            return (await conn.execute(stmt)).scalar()

    async def open_session(self, name: str) -> str:
        """The key to put in a new session's cookie (made now for an account from before keys)."""
        if key := await self.session_key(name):
            return key
        async with self.db.write_lock, self.db.engine.begin() as conn:
            stmt = (
                update(accounts)
                .where(accounts.c.identifier == name, accounts.c.session_key.is_(None))
                .values(session_key=new_session_key())
            )
            await conn.execute(stmt)
        return await self.session_key(name) or ""

    async def remove(self, name: str) -> bool:
        async with self.db.write_lock, self.db.engine.begin() as conn:
            result = await conn.execute(delete(accounts).where(accounts.c.identifier == name))
        return bool(result.rowcount)

    async def list(self) -> list[dict[str, Any]]:
        stmt = select(accounts.c.identifier, accounts.c.createdAt, accounts.c.lastLoginAt)
        async with self.db.engine.connect() as conn:
            rows = await conn.execute(stmt.order_by(accounts.c.identifier))
        return [dict(r._mapping) for r in rows]

    async def verify(self, name: str, password: str, now: str) -> bool:
        """True when the password is the user's; an unknown name costs the same time."""
        from argon2.exceptions import InvalidHashError, VerificationError

        if not NAME.match(name or ""):
            return False  # no account can have it: nothing to learn from skipping the hash
        hasher = _hasher()
        async with self.db.engine.connect() as conn:
            stmt = select(accounts.c.password_hash).where(accounts.c.identifier == name)
            stored = (await conn.execute(stmt)).scalar()
        if stored is None:
            self._dummy = self._dummy or hasher.hash("not a password of anyone")
            stored, name = self._dummy, ""
        try:
            await asyncio.to_thread(hasher.verify, stored, password)  # ~50 ms of CPU
        except (VerificationError, InvalidHashError):
            return False
        if not name:
            return False
        async with self.db.write_lock, self.db.engine.begin() as conn:
            stmt2 = update(accounts).where(accounts.c.identifier == name)
            values: dict[str, Any] = {"lastLoginAt": now}
            if hasher.check_needs_rehash(stored):
                values["password_hash"] = hasher.hash(password)
            await conn.execute(stmt2.values(**values))
        return True
