"""A FastMCP server that requires OAuth 2.1, with its own tiny authorization server (the SDK's auth).

    python oauth_lab.py PORT EVENTS_LOG [--expires-in S] [--issuer URL]

The authorization server approves every request at once (no login page): GET /authorize answers
302 to the client's redirect_uri with a code. Access tokens are reported to the client with
`--expires-in` seconds (default 3600) but stay valid here until refreshed (a refresh rotates the
access and refresh tokens and revokes the old access token), so a client that refreshes on expiry
is proven to use the new token, and a slow machine never sees a token die mid-call.
`--issuer URL` advertises another authorization server in the protected resource metadata (the
SSRF test points it at a closed address; the SDK's own metadata would refuse a plain-http one).
`--cimd REDIRECT_URI` advertises Client ID Metadata Documents: an https client ID is taken as a
client with that redirect URI (a real server fetches the document; the lab takes it as read). Every step is appended to EVENTS_LOG as a JSON line.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.fastmcp import FastMCP
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
EVENTS = Path(sys.argv[2])
ARGS = dict(zip(sys.argv[3::2], sys.argv[4::2], strict=False))
EXPIRES_IN = int(ARGS.get("--expires-in", "3600"))
BASE = f"http://127.0.0.1:{PORT}"


def event(kind: str, **fields: Any) -> None:
    with EVENTS.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"event": kind, **fields}) + "\n")


class AutoApprove:
    """In-memory OAuthAuthorizationServerProvider that approves everyone."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.subjects = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if "--cimd" in ARGS and client_id.startswith("https://"):
            event("metadata_document_client", client_id=client_id)
            return OAuthClientInformationFull(
                client_id=client_id,
                redirect_uris=[ARGS["--cimd"]],  # type: ignore[list-item]
                scope="lab",
                token_endpoint_auth_method="none",
                grant_types=["authorization_code", "refresh_token"],
            )
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        event("register", client_id=client_info.client_id, redirect_uris=[
            str(u) for u in client_info.redirect_uris or []
        ])  # fmt: skip

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        self.subjects += 1
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["lab"],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=f"person-{self.subjects}",
        )
        event("authorize", client_id=client.client_id, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(self, client: Any, code: AuthorizationCode) -> OAuthToken:
        del self.codes[code.code]  # the SDK checked the PKCE verifier against the S256 challenge
        event("token", grant="authorization_code", client_id=code.client_id, pkce="verified")
        return self._issue(code.client_id, code.scopes, code.resource, code.subject)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: Any, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        for token, access in list(self.access.items()):
            if access.subject == refresh_token.subject:
                del self.access[token]  # the old access token stops working
        event("token", grant="refresh_token", client_id=refresh_token.client_id)
        return self._issue(
            refresh_token.client_id,
            scopes or refresh_token.scopes,
            refresh_token.resource,
            refresh_token.subject,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: Any) -> None:  # pragma: no cover - not offered
        pass

    def _issue(
        self, client_id: str, scopes: list[str], resource: str | None, subject: str | None
    ) -> OAuthToken:
        access, refresh = (
            "lab-at-" + secrets.token_urlsafe(24),
            "lab-rt-" + secrets.token_urlsafe(24),
        )
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        event("issued", access_token=access, refresh_token=refresh)  # for the leak tests only
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=EXPIRES_IN,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


provider = AutoApprove()
mcp = FastMCP(
    "oauth-lab",
    port=PORT,
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,  # type: ignore[arg-type]
        resource_server_url=f"{BASE}/mcp",  # type: ignore[arg-type]
        validate_token_resource=False,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=["lab"], default_scopes=["lab"]
        ),
        required_scopes=["lab"],
    ),
)


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    event("call", tool="add", subject=token.subject if token else None)
    return a + b


@mcp.tool()
def whoami() -> str:
    """The person the access token was issued to."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return token.subject if token and token.subject else "nobody"


def logged(app: Any) -> Any:
    """Record the PKCE method of each authorization request (the SDK accepts only S256)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and "--issuer" in ARGS
            and scope["path"].startswith("/.well-known/oauth-protected-resource")
        ):
            from starlette.responses import JSONResponse

            metadata = {"resource": f"{BASE}/mcp", "authorization_servers": [ARGS["--issuer"]]}
            event("protected_resource_metadata", authorization_servers=[ARGS["--issuer"]])
            await JSONResponse(metadata)(scope, receive, send)
            return
        if (
            scope["type"] == "http"
            and "--cimd" in ARGS
            and scope["path"] == ("/.well-known/oauth-authorization-server")
        ):
            from mcp.server.auth.routes import build_metadata
            from mcp.server.auth.settings import RevocationOptions
            from starlette.responses import JSONResponse

            assert mcp.settings.auth is not None
            metadata = build_metadata(
                mcp.settings.auth.issuer_url,
                None,
                mcp.settings.auth.client_registration_options or ClientRegistrationOptions(),
                RevocationOptions(),
            )
            metadata.client_id_metadata_document_supported = True
            body = metadata.model_dump(mode="json", exclude_none=True)
            await JSONResponse(body)(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"] == "/authorize":
            query = parse_qs(scope.get("query_string", b"").decode())
            event(
                "authorize_request",
                code_challenge_method=query.get("code_challenge_method", [None])[0],
                has_challenge=bool(query.get("code_challenge")),
                resource=query.get("resource", [None])[0],
            )
        await app(scope, receive, send)

    return wrapped


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(logged(mcp.streamable_http_app()), host="127.0.0.1", port=PORT, log_level="warning")
