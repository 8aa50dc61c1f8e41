"""Where an MCP sign-in's tokens live for the SDK's provider: a vault per user and server URL.

`UserTokens` is the SDK's TokenStorage for one user and server: it keeps the expiry as a time (the
SDK keeps only `expires_in`, so tokens loaded later would look fresh forever) and tells `redact`
the tokens, which masks them in that user's output and in every log. The vault is the store's
McpTokenStore (store/mcp_tokens.py, encrypted) or, without a store, `MemoryVault`.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from brainchat import redact


class TokenVault(Protocol):
    """Where a user's tokens and client registrations are kept (store/mcp_tokens.py)."""

    async def load(self, user: str, server_url: str) -> dict[str, Any]: ...

    async def save(self, user: str, server_url: str, **parts: Any) -> None: ...


class MemoryVault:
    """Tokens for the life of the process (no store: tests, the CLI)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}

    async def load(self, user: str, server_url: str) -> dict[str, Any]:
        return dict(self.rows.get((user, server_url), {}))

    async def save(self, user: str, server_url: str, **parts: Any) -> None:
        self.rows.setdefault((user, server_url), {}).update(parts)

    async def remove(self, user: str, server_url: str) -> bool:
        return self.rows.pop((user, server_url), None) is not None


class UserTokens:
    """The SDK's TokenStorage for one user and server: the vault, with expiry kept as a time."""

    def __init__(self, vault: TokenVault, user: str, server_url: str) -> None:
        self.vault, self.user, self.server_url = vault, user, server_url

    async def get_tokens(self) -> OAuthToken | None:
        row = await self.vault.load(self.user, self.server_url)
        if not row.get("tokens"):
            return None
        tokens = OAuthToken.model_validate(row["tokens"])
        _remember(tokens, self.user)
        expires_at = row.get("expires_at")
        if expires_at is not None:  # what is left of its life, so an expired one is refreshed
            tokens.expires_in = max(0, int(float(expires_at) - time.time()))
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        _remember(tokens, self.user)
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        await self.vault.save(
            self.user,
            self.server_url,
            tokens=tokens.model_dump(mode="json", exclude_none=True),
            expires_at=expires_at,
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        row = await self.vault.load(self.user, self.server_url)
        if not row.get("client"):
            return None
        client = OAuthClientInformationFull.model_validate(row["client"])
        redact.remember(client.client_secret, self.user)
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        redact.remember(client_info.client_secret, self.user)
        await self.vault.save(
            self.user,
            self.server_url,
            client=client_info.model_dump(mode="json", exclude_none=True),
        )


def _remember(tokens: OAuthToken, user: str) -> None:
    redact.remember(tokens.access_token, user)
    redact.remember(tokens.refresh_token, user)
