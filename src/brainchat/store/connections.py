"""Each user's model connections, kept across chats: URL and model ids in clear, the key encrypted.

The API key is encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under a key derived from the app's
secret (the auth secret in the state folder) and the user's identifier: a row copied to another
user, or read with another secret, does not decrypt. Keys are decrypted only here, server-side,
into the `Connection` the session uses; nothing in this module logs or returns them otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from sqlalchemy import delete, select

from brainchat.connections import Connection
from brainchat.redact import get_logger
from brainchat.store.schema import connections, model_picks
from brainchat.store.sql import Db

log = get_logger("brainchat.store")


def user_key(secret: bytes, identifier: str) -> bytes:
    """The Fernet key for one user's connection keys (HMAC-SHA256 of the user, keyed by the
    app's secret)."""
    digest = hmac.new(
        secret, b"brainchat connection keys\0" + identifier.encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest)


class ConnectionStore:
    """Save, list and forget the connections of a user."""

    def __init__(self, db: Db, secret: bytes) -> None:
        self.db, self._secret = db, secret

    def _fernet(self, identifier: str) -> Any:
        from cryptography.fernet import Fernet

        return Fernet(user_key(self._secret, identifier))

    async def save(self, identifier: str, conn: Connection, now: str) -> None:
        """Insert or replace the user's connection of that name."""
        token = (
            self._fernet(identifier).encrypt(conn.api_key.encode()).decode()
            if conn.api_key
            else None
        )
        row = {
            "identifier": identifier,
            "name": conn.name,
            "base_url": conn.base_url,
            "key_token": token,
            # ids, or [id, context window] where the server stated one
            "models": json.dumps(
                [[m, dict(conn.windows)[m]] if m in dict(conn.windows) else m for m in conn.models]
            ),
            "createdAt": now,
            "updatedAt": now,
        }
        async with self.db.write_lock, self.db.engine.begin() as conn_:
            await self.db.upsert(
                conn_,
                connections,
                row,
                keys=("identifier", "name"),
                update=("base_url", "key_token", "models", "updatedAt"),
            )

    async def load(self, identifier: str) -> list[Connection]:
        """The user's connections, keys decrypted; one that does not decrypt is skipped (logged
        by name: the app secret changed since it was saved)."""
        from cryptography.fernet import InvalidToken

        stmt = (
            select(connections)
            .where(connections.c.identifier == identifier)
            .order_by(connections.c.createdAt, connections.c.name)
        )
        async with self.db.engine.connect() as c:
            rows = [r._mapping for r in await c.execute(stmt)]
        fernet = self._fernet(identifier)
        found = []
        for row in rows:
            try:
                key = fernet.decrypt(row["key_token"]).decode() if row["key_token"] else None
                listed = json.loads(row["models"] or "[]")
                models = tuple(str(m[0] if isinstance(m, list) else m) for m in listed)
                windows = tuple((str(m[0]), int(m[1])) for m in listed if isinstance(m, list))
            except (InvalidToken, ValueError, TypeError):
                log.warning(
                    "connection %r of %r not restored: its key does not decrypt with this app's "
                    "secret (was CHAINLIT_AUTH_SECRET or the state folder changed?); add it again",
                    row["name"],
                    identifier,
                )
                continue
            found.append(Connection(row["name"], row["base_url"], key, models, windows))
        return found

    async def remove(self, identifier: str, name: str) -> bool:
        async with self.db.write_lock, self.db.engine.begin() as c:
            result = await c.execute(
                delete(connections).where(
                    connections.c.identifier == identifier, connections.c.name == name
                )
            )
        return bool(result.rowcount)

    async def save_picks(self, identifier: str, picks: dict[str, str], now: str) -> None:
        """Which of the user's connection models play which role (labels only, no keys)."""
        row = {"identifier": identifier, "picks": json.dumps(picks), "updatedAt": now}
        async with self.db.write_lock, self.db.engine.begin() as c:
            await self.db.upsert(c, model_picks, row, keys=("identifier",))

    async def load_picks(self, identifier: str) -> dict[str, str]:
        stmt = select(model_picks.c.picks).where(model_picks.c.identifier == identifier)
        async with self.db.engine.connect() as c:
            raw = (await c.execute(stmt)).scalar()
        try:
            picks = json.loads(raw or "{}")
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in picks.items()} if isinstance(picks, dict) else {}
