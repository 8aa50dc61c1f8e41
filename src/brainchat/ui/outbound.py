"""Where users' URLs may lead: the process's `netguard` policy, also on Chainlit's user MCP servers.

Model connections (`connections.py`, `llm.py`) use the policy directly. An MCP server a user
connects with the plug button is connected by Chainlit's own `/mcp` route, whose only rule is
`allowed_urls` in `.chainlit/config.toml` (localhost ports by default): so its HTTP client for a
user-provided server is replaced here by one whose every request is checked against the policy
(a refusal answers the route with netguard's message at once) and whose every connection goes
through the guard (pinned to the checked address). Servers from the config are the operator's and
keep Chainlit's client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brainchat import netguard
from brainchat.redact import get_logger
from brainchat.store.config import read_env

log = get_logger("brainchat.ui")


def install(auth: str) -> None:
    """Set the policy for an app whose login is `auth` (local: the one user may reach anything)."""
    policy = netguard.policy_from(read_env(), accounts=auth != "local")
    netguard.configure(policy)
    log.info("%s", netguard.describe(policy))
    _guard_user_mcp()


class UserDestination:
    """Chainlit's allowlist check of a user-provided MCP server, marked as such."""

    def __init__(self, check: Callable[[str], None]) -> None:
        self.check = check

    def __call__(self, url: str) -> None:
        self.check(url)


def _guard_user_mcp() -> None:
    import chainlit.mcp as chainlit_mcp

    if getattr(chainlit_mcp, "_brainchat_guarded", False):
        return  # `chainlit run -w` imports the app again on every change
    allowlist = getattr(chainlit_mcp, "_destination_in_allowlist", None)
    factory = getattr(chainlit_mcp, "make_mcp_http_client_factory", None)
    if allowlist is None or factory is None:  # fail closed: no user MCP server without the guard
        raise RuntimeError(
            "brainchat cannot guard users' MCP servers on this Chainlit version: pin chainlit "
            "to 2.12 or turn features.mcp.user_servers off in .chainlit/config.toml"
        )

    def destination_in_allowlist(allowed_urls: list[str]) -> UserDestination:
        return UserDestination(allowlist(allowed_urls))

    def client_factory(check: Callable[[str], None], on_blocked: Any = None) -> Any:
        if not isinstance(check, UserDestination):
            return factory(check, on_blocked)
        return _user_client_factory(check, on_blocked, chainlit_mcp.McpDestinationError)

    chainlit_mcp._destination_in_allowlist = destination_in_allowlist
    chainlit_mcp.make_mcp_http_client_factory = client_factory  # type: ignore[assignment]
    # Chainlit's /mcp route waits 30 s for an HTTP server; one that asks the user to
    # sign in (a link in the chat, a login page) gets the sign-in's time too.
    from brainchat.tools.mcp_oauth import SIGN_IN_WAIT

    chainlit_mcp._MCP_CONNECT_TIMEOUT_HTTP = max(  # type: ignore[attr-defined]
        chainlit_mcp._MCP_CONNECT_TIMEOUT_HTTP, SIGN_IN_WAIT + 30
    )
    chainlit_mcp._brainchat_guarded = True  # type: ignore[attr-defined]


def _user_client_factory(check: UserDestination, on_blocked: Any, blocked: type[Exception]) -> Any:
    """Chainlit's factory for a user's server, with netguard's client and request check."""
    import httpx

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        auth: httpx.Auth | None = None,
    ) -> httpx.AsyncClient:
        # a server that answers 401 gets the user's OAuth sign-in (ui/mcp_signin.py)
        from brainchat.tools.mcp_oauth import OAUTH_REQUEST, FirstRequestAuth, sign_in_failure
        from brainchat.ui import mcp_signin

        def signin_failed(exc: Exception) -> None:
            if on_blocked is not None and (why := sign_in_failure(exc)):
                on_blocked(blocked(why))

        auth = auth or mcp_signin.user_auth()
        if isinstance(auth, FirstRequestAuth) and auth.on_error is None:
            auth.on_error = signin_failed  # the SDK drops the flow's errors: tell the route

        async def check_request(request: httpx.Request) -> None:
            url = str(request.url)
            try:
                # the sign-in's own requests (metadata, registration, token) go to the server's
                # authorization server, not to an MCP server: the SSRF policy alone judges them
                if not request.extensions.get(OAUTH_REQUEST):
                    check(url)
                await netguard.current().check_url_async(url)
            except (blocked, netguard.AddressRefused) as exc:
                error = exc if isinstance(exc, blocked) else blocked(str(exc))
                log.info("user MCP server refused: %s", error)
                if on_blocked is not None:
                    on_blocked(error)  # the SDK swallows the hook's error: tell the route
                raise error from None

        client: httpx.AsyncClient = netguard.async_client(
            timeout=timeout if timeout is not None else httpx.Timeout(30.0),
            headers=headers,
            auth=auth,
            event_hooks={"request": [check_request]},
        )
        return client

    return factory
