"""OAuth 2.1 sign-in to remote MCP servers, with the `mcp` SDK's client provider. No Chainlit here.

A streamable-HTTP server that answers 401 is signed in to as the MCP specification's authorization
revision says, by the SDK's `OAuthClientProvider` (an httpx.Auth): protected resource metadata
(RFC 9728, from the 401's WWW-Authenticate), authorization server metadata (RFC 8414 / OpenID
discovery), dynamic client registration (RFC 7591) or a client ID metadata document, PKCE S256 and
the `resource` parameter (RFC 8707); then the access token on every request, refreshed when it
expires. What brainchat adds:

- `show_link` gets the sign-in link (the UI shows it in the chat) and the flow waits for the
  authorization code that the app's callback route hands over (`PENDING.finish`): the OAuth
  `state` names the waiting flow, and only the user who started it may finish it;
- `UserTokens` keeps tokens and the registered client per user and server URL, encrypted in the
  store (store/mcp_tokens.py), and lets `redact` mask them everywhere;
- every request the flow makes itself (metadata, registration, token) is marked `OAUTH_REQUEST`,
  so the user-server guard (ui/outbound.py) checks it against the SSRF policy rather than the
  operator's allowlist of MCP servers;
- without a browser user (`brainchat ask`, evals, servers from the config file) a 401 becomes
  `SignInRequired`, saying where to sign in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

from brainchat import redact
from brainchat.tools.mcp_oauth_tokens import MemoryVault as MemoryVault
from brainchat.tools.mcp_oauth_tokens import TokenVault, UserTokens

CALLBACK_PATH = "/brainchat/mcp/oauth/callback"
CLIENT_METADATA_PATH = "/brainchat/mcp/oauth/client-metadata.json"  # the app's client ID (CIMD)
SIGN_IN_WAIT = 120.0  # seconds a sign-in link stays good (the connect waits that long)
OAUTH_REQUEST = "brainchat_oauth"  # request extension: made by the OAuth flow, not the MCP session
CLIENT_NAME = "brainchat"


class SignInRequired(Exception):
    """The server needs an OAuth sign-in that cannot happen here; the message says where."""


class BearerRequired(SignInRequired):
    """The server answered 401 but publishes no OAuth metadata: it wants a plain bearer token in
    the headers (brainchat's own `mcp-server --http` is one), not a sign-in."""


class SignInFailed(Exception):
    """A sign-in that did not finish (refused, expired, a bad link); the message says why."""


class SignInRefused(Exception):
    """A callback that is not the caller's pending sign-in (unknown, expired or another user's)."""


@dataclass(frozen=True)
class SignInLink:
    """What the user is shown: the server's name, the link, and where they will sign in."""

    server: str
    url: str
    host: str


@dataclass
class _Pending:
    user: str
    server: str
    code: asyncio.Future[str]


class PendingSignIns:
    """Sign-ins waiting for their callback, by OAuth state; each belongs to the user who started it."""

    def __init__(self) -> None:
        self._waiting: dict[str, _Pending] = {}

    def open(self, user: str, server: str, state: str) -> asyncio.Future[str]:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting[state] = _Pending(user, server, future)
        return future

    def finish(self, user: str, state: str, code: str | None, error: str | None = None) -> str:
        """Hand the code to the flow waiting on `state` (it must be `user`'s); its server's name.

        SignInRefused, and nothing handed over, for an unknown state or another user's."""
        pending = self._waiting.get(state)
        if pending is None or pending.user != user or pending.code.done():
            raise SignInRefused("this sign-in link is not one of your pending sign-ins")
        del self._waiting[state]
        if code and not error:
            pending.code.get_loop().call_soon_threadsafe(_settle, pending.code, code, None)
        else:
            why = SignInFailed(
                f"the authorization server refused the sign-in to MCP server '{pending.server}'"
                + (f" ({redact.show(error, 60)})" if error else "")
            )
            pending.code.get_loop().call_soon_threadsafe(_settle, pending.code, None, why)
        return pending.server

    def drop(self, state: str) -> None:
        self._waiting.pop(state, None)

    def waiting(self, user: str) -> list[str]:
        """The servers `user` has a sign-in pending for."""
        return [p.server for p in self._waiting.values() if p.user == user]


def _settle(future: asyncio.Future[str], code: str | None, error: Exception | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(code or "")


PENDING = PendingSignIns()  # the process's pending sign-ins (the callback route finishes them)


class SignInProvider(OAuthClientProvider):
    """The SDK's provider, with stored expiry honoured, the flow's own requests marked, and a
    server that is no OAuth resource told apart from one that wants a sign-in."""

    server_name = ""

    async def _initialize(self) -> None:
        await super()._initialize()
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            # The SDK would take loaded tokens as fresh; one with no life left is expired (a
            # time long past, as 0 would read as "never expires").
            self.context.update_token_expiry(tokens)
            if tokens.expires_in <= 0:
                self.context.token_expiry_time = 1.0

    async def _auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        flow = super()._auth_flow(request)
        challenge: httpx.Response | None = None  # the 401, while no metadata was found
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request:
                    if challenge is not None and outgoing.method != "GET":
                        raise self._bearer(challenge, request)  # registration with no metadata
                    outgoing.extensions = {**outgoing.extensions, OAUTH_REQUEST: True}
                response = yield outgoing
                if outgoing is request:
                    challenge = response if _plain_challenge(response) else None
                elif response.status_code == 200:
                    challenge = None  # discovery found metadata: an OAuth server
                try:
                    outgoing = await flow.asend(response)
                except SignInRequired as exc:
                    if challenge is None or isinstance(exc, BearerRequired):
                        raise
                    raise self._bearer(challenge, request) from None
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _bearer(self, challenge: httpx.Response, request: httpx.Request) -> BearerRequired:
        from mcp.client.auth.utils import extract_field_from_www_auth

        said = extract_field_from_www_auth(challenge, "error_description")
        sent = "authorization" in request.headers
        return BearerRequired(
            f"MCP server '{self.server_name or request.url.host}' wants a bearer token, not an "
            "OAuth sign-in (it publishes no OAuth metadata): put the token in the server's "
            "`headers` in the MCP config (Authorization: Bearer <token>)"
            + ("; the token in its headers was refused" if sent else "")
            + (f". The server says: {redact.mask(said)[:300]}" if said else "")
        )


def _plain_challenge(response: httpx.Response) -> bool:
    """A 401 whose WWW-Authenticate names no OAuth resource metadata (RFC 9728): a sign-in is
    possible only if discovery at the well-known addresses finds metadata."""
    from mcp.client.auth.utils import extract_resource_metadata_from_www_auth

    return response.status_code == 401 and not extract_resource_metadata_from_www_auth(response)


def client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """brainchat as a public OAuth client (no secret: PKCE protects the code), as VS Code registers."""
    return OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


def client_document(origin: str) -> dict[str, Any]:
    """The app's Client ID Metadata Document, served at `origin` + CLIENT_METADATA_PATH: an
    authorization server that supports them takes that URL as brainchat's client ID and reads
    this instead of registering a client."""
    metadata = client_metadata(origin + CALLBACK_PATH).model_dump(mode="json", exclude_none=True)
    return {"client_id": origin + CLIENT_METADATA_PATH, **metadata, "client_uri": origin}


def metadata_document_url(origin: str) -> str | None:
    """The client ID metadata URL for an app on `origin`; None off https (the specification
    requires https, so a plain-http app registers dynamically instead)."""
    return origin + CLIENT_METADATA_PATH if origin.startswith("https://") else None


ShowLink = Callable[[SignInLink], Awaitable[None]]


def user_sign_in(
    *,
    user: str,
    server: str,
    server_url: str,
    vault: TokenVault,
    redirect_uri: str,
    show_link: ShowLink,
    wait: float = SIGN_IN_WAIT,
    client_metadata_url: str | None = None,
    pending: PendingSignIns = PENDING,
) -> SignInProvider:
    """The OAuth provider for one user's server: stored tokens first, else a sign-in link."""
    opened: list[tuple[str, asyncio.Future[str]]] = []

    async def redirect(authorization_url: str) -> None:
        parts = urlsplit(authorization_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SignInFailed(
                f"MCP server '{server}' names an authorization server that is not an http(s) URL"
            )
        state = parse_qs(parts.query).get("state", [""])[0]
        opened.append((state, pending.open(user, server, state)))
        await show_link(SignInLink(server, authorization_url, parts.hostname))

    async def callback() -> tuple[str, str | None]:
        state, future = opened.pop()
        try:
            code = await asyncio.wait_for(future, wait)
        except TimeoutError:
            raise SignInFailed(
                f"the sign-in to MCP server '{server}' was not finished within {wait:g} s; "
                "connect the server again for a new link"
            ) from None
        finally:
            pending.drop(state)
        return code, state

    provider = SignInProvider(
        server_url=server_url,
        client_metadata=client_metadata(redirect_uri),
        storage=UserTokens(vault, user, server_url),
        redirect_handler=redirect,
        callback_handler=callback,
        timeout=wait,
        client_metadata_url=client_metadata_url,
    )
    provider.server_name = server
    return provider


def headless_sign_in(
    server: str, server_url: str, vault: TokenVault | None = None, user: str = ""
) -> SignInProvider:
    """For a server without a browser user: tokens the vault holds, else SignInRequired."""

    async def refuse(authorization_url: str) -> None:
        host = urlsplit(authorization_url).hostname or "its authorization server"
        raise SignInRequired(
            f"MCP server '{server}' requires an OAuth sign-in (at {host}). brainchat signs in "
            "only for a person in the web app: open brainchat in the browser, connect the server "
            "with the plug button (Connect an MCP) and follow the sign-in link it shows; for "
            "`brainchat ask` and evals, give the server an Authorization header with a token "
            "in its `headers` in the MCP config"
        )

    async def never() -> tuple[str, str | None]:  # pragma: no cover - refuse() raised first
        raise SignInRequired(f"MCP server '{server}' requires an OAuth sign-in")

    provider = SignInProvider(
        server_url=server_url,
        client_metadata=client_metadata(_NOWHERE),
        storage=_Unregistered(vault or MemoryVault(), user, server_url),
        redirect_handler=refuse,
        callback_handler=never,
    )
    provider.server_name = server
    return provider


_NOWHERE = "http://127.0.0.1/brainchat-cannot-sign-in-here"


class _Unregistered(UserTokens):
    """Storage that claims a client, so a refused sign-in registers none at the server."""

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return await super().get_client_info() or OAuthClientInformationFull(
            client_id="brainchat-not-registered",
            redirect_uris=[_NOWHERE],  # type: ignore[list-item]
        )


class FirstRequestAuth(httpx.Auth):
    """An httpx.Auth made on the first request, from its URL (the MCP endpoint): the transport's
    client factory is called before anyone says which server it is for."""

    requires_response_body = True

    def __init__(
        self,
        make: Callable[[str], httpx.Auth],
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self._make, self.on_error = make, on_error
        self.auth: httpx.Auth | None = None

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self.auth is None:
            self.auth = self._make(str(request.url))
        flow = self.auth.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            # The SDK's transport logs and drops errors of its requests: tell whoever waits.
            if self.on_error is not None:
                self.on_error(exc)
            raise
        finally:
            await flow.aclose()  # type: ignore[attr-defined]


class _Reported(logging.Filter):
    """Drops the SDK's traceback of a sign-in that brainchat reports itself, as a message."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, SignInRequired | SignInFailed)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_Reported())


def sign_in_error(exc: BaseException) -> Exception | None:
    """The sign-in failure inside a transport's error (groups, causes), if there is one."""
    from mcp.client.auth import OAuthFlowError, OAuthTokenError

    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, SignInRequired | SignInFailed | OAuthFlowError | OAuthTokenError):
            return current
        stack.extend(getattr(current, "exceptions", ()) or ())
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def sign_in_failure(exc: BaseException) -> str | None:
    """What to tell the user when `exc` is (or hides) a failed sign-in; None when it is not one."""
    found = sign_in_error(exc)
    if found is None:
        return None
    if isinstance(found, SignInRequired | SignInFailed):
        return str(found)
    return f"the OAuth sign-in failed: {redact.mask(str(found))}"
