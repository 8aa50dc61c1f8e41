"""Each user's OAuth sign-ins to MCP servers: tokens and client registration, encrypted per user.

One row per user and server URL. Everything the sign-in produced (access and refresh tokens, their
expiry, the client the authorization server registered) is one JSON document, encrypted with the
same Fernet key per user as connection keys (store/connections.py `user_key`): a row copied to
another user, or read with another secret, does not decrypt. Only the server URL is in clear.
Nothing here logs or returns a token except to the sign-in that asked (tools/mcp_oauth.py).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, select

from brainchat.redact import get_logger
from brainchat.store.connections import user_key
from brainchat.store.schema import mcp_tokens
from brainchat.store.sql import Db

log = get_logger("brainchat.store")


class McpTokenStore:
    """Load, update and forget a user's sign-in to one MCP server (a `TokenVault`)."""

    def __init__(self, db: Db, secret: bytes) -> None:
        self.db, self._secret = db, secret

    def _fernet(self, identifier: str) -> Any:
        from cryptography.fernet import Fernet

        return Fernet(user_key(self._secret, identifier))

    async def load(self, identifier: str, server_url: str) -> dict[str, Any]:
        """What is kept for the user's server ({} when nothing, or when it does not decrypt)."""
        from cryptography.fernet import InvalidToken

        stmt = select(mcp_tokens.c.sealed).where(
            mcp_tokens.c.identifier == identifier, mcp_tokens.c.server_url == server_url
        )
        async with self.db.engine.connect() as c:
            sealed = (await c.execute(stmt)).scalar()
        if not sealed:
            return {}
        try:
            found = json.loads(self._fernet(identifier).decrypt(sealed.encode()).decode())
        except (InvalidToken, ValueError):
            log.warning(
                "the MCP sign-in of %r to a server does not decrypt with this app's secret (did "
                "CHAINLIT_AUTH_SECRET or the state folder change?); they will be asked to sign in",
                identifier,
            )
            return {}
        return found if isinstance(found, dict) else {}

    async def save(self, identifier: str, server_url: str, **parts: Any) -> None:
        """Merge `parts` (tokens, expires_at, client) into what is kept for the user's server."""
        kept = await self.load(identifier, server_url)
        kept.update(parts)
        sealed = self._fernet(identifier).encrypt(json.dumps(kept).encode()).decode()
        row = {
            "identifier": identifier,
            "server_url": server_url,
            "sealed": sealed,
            "updatedAt": datetime.now(UTC).isoformat(),
        }
        async with self.db.write_lock, self.db.engine.begin() as c:
            await self.db.upsert(
                c,
                mcp_tokens,
                row,
                keys=("identifier", "server_url"),
                update=("sealed", "updatedAt"),
            )

    async def remove(self, identifier: str, server_url: str) -> bool:
        """Sign the user out of the server: its tokens and client registration are deleted."""
        async with self.db.write_lock, self.db.engine.begin() as c:
            result = await c.execute(
                delete(mcp_tokens).where(
                    mcp_tokens.c.identifier == identifier, mcp_tokens.c.server_url == server_url
                )
            )
        return bool(result.rowcount)
