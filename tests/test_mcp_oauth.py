"""OAuth 2.1 sign-in to MCP servers (#25), against a real FastMCP server with the SDK's auth.

The server (mcp_servers/oauth_lab.py) runs over real HTTP with its own authorization server, which
approves at once. The "browser" here follows the sign-in link with httpx and hands the code to the
waiting flow the way the app's callback route does (`PENDING.finish`); the client is the one the
app builds for a user's server (ui/outbound.py's guarded factory) with the sign-in of
tools/mcp_oauth.py, and tokens go to the real store (SQLite), encrypted.
"""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from chainlit.mcp import McpDestinationError
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import text

from brainchat import netguard
from brainchat.store.config import sqlite_url
from brainchat.store.database import make_engine, migrate
from brainchat.store.mcp_tokens import McpTokenStore
from brainchat.store.records import Store
from brainchat.tools import mcp_oauth
from brainchat.tools.mcp_config import McpServerConfig
from brainchat.tools.mcp_connection import ServerConnection
from brainchat.tools.mcp_oauth import PENDING, SignInLink, SignInRefused
from brainchat.ui.outbound import UserDestination, _user_client_factory
from mcp_servers.helpers import free_port
from mcp_servers.oauth_helpers import OAuthLab, oauth_lab

CALLBACK = "http://127.0.0.1:9" + mcp_oauth.CALLBACK_PATH  # never contacted: the "browser" reads it


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthLab]:
    with oauth_lab(tmp_path_factory.mktemp("oauth")) as running:
        yield running


@pytest.fixture
async def vault(tmp_path: Path) -> Any:
    engine = make_engine(sqlite_url(tmp_path / "state" / "brainchat.db"))
    await migrate(engine)
    yield McpTokenStore(Store(engine), b"app secret")
    await engine.dispose()


class Browser:
    """Follows sign-in links as a user's browser would, and finishes them as the callback does."""

    def __init__(self, user: str, finish: bool = True) -> None:
        self.user, self.finish = user, finish
        self.links: list[SignInLink] = []
        self.states: list[str] = []

    async def show(self, link: SignInLink) -> None:
        self.links.append(link)
        async with httpx.AsyncClient() as client:
            answer = await client.get(link.url)  # the authorization server approves at once
        assert answer.status_code == 302, answer.text
        back = urlsplit(answer.headers["location"])
        assert f"{back.scheme}://{back.netloc}{back.path}" == CALLBACK
        query = {k: v[0] for k, v in parse_qs(back.query).items()}
        self.states.append(query["state"])
        if self.finish:
            PENDING.finish(self.user, query["state"], query["code"])


async def call_add(url: str, auth: httpx.Auth, a: int = 2, b: int = 40) -> Any:
    """Connect as the app connects a user's server, and call `add` (and `whoami`)."""
    blocked: list[Exception] = []
    factory = _user_client_factory(
        UserDestination(lambda u: None), blocked.append, McpDestinationError
    )
    client = factory(auth=auth)
    try:
        async with client, streamable_http_client(url, http_client=client) as (read, write, _):
            async with ClientSession(read, write) as session:
                await asyncio.wait_for(session.initialize(), 60)
                result = await session.call_tool("add", {"a": a, "b": b})
                who = await session.call_tool("whoami", {})
    except BaseException as exc:
        if blocked:  # what the app's /mcp route is told (the SDK's transport drops the error)
            raise blocked[0] from exc
        raise
    return result.content[0].text, who.content[0].text  # type: ignore[union-attr]


def signin(user: str, vault: Any, browser: Browser, server: str = "secure") -> httpx.Auth:
    def make(url: str) -> httpx.Auth:
        return mcp_oauth.user_sign_in(
            user=user, server=server, server_url=url, vault=vault, redirect_uri=CALLBACK,
            show_link=browser.show, wait=60,
        )  # fmt: skip

    return mcp_oauth.FirstRequestAuth(make)


async def test_a_configured_server_that_wants_a_sign_in_says_where_and_how(lab: OAuthLab) -> None:
    """Before #25 this failed as "could not start: HTTPStatusError: Client error '401
    Unauthorized'", with no word about signing in."""
    conn = ServerConnection(
        McpServerConfig(name="secure", transport="streamable_http", url=lab.url)
    )
    registered = len(lab.events("register"))
    assert not await conn.connect()
    assert conn.error is not None
    assert "requires an OAuth sign-in (at 127.0.0.1)" in conn.error
    assert "plug button" in conn.error and "headers" in conn.error
    assert "401" not in conn.error
    assert (
        len(lab.events("register")) == registered
    )  # a sign-in that cannot happen registers no client
    await conn.close()


async def test_sign_in_discovers_registers_uses_pkce_and_the_tool_call_works(
    lab: OAuthLab, vault: Any
) -> None:
    browser = Browser("ana")
    before = len(lab.events())
    added, who = await call_add(lab.url, signin("ana", vault, browser))
    assert added == "42" and who.startswith("person-")
    assert [(link.server, link.host) for link in browser.links] == [("secure", "127.0.0.1")]
    events = lab.events()[before:]
    kinds = [e["event"] for e in events]
    assert kinds[:4] == ["register", "authorize_request", "authorize", "token"], kinds
    assert events[0]["redirect_uris"] == [CALLBACK]  # dynamic client registration (RFC 7591)
    request = events[1]
    assert request["code_challenge_method"] == "S256" and request["has_challenge"]
    assert request["resource"] == lab.url  # RFC 8707: the token is asked for this server
    assert events[3] == {
        "event": "token", "grant": "authorization_code", "client_id": events[0]["client_id"],
        "pkce": "verified",
    }  # fmt: skip
    assert not PENDING.waiting("ana")

    # Connected again (a new chat): the kept tokens are used, no new sign-in
    again = Browser("ana")
    assert (await call_add(lab.url, signin("ana", vault, again), 1, 1))[0] == "2"
    assert again.links == []


async def test_tokens_are_encrypted_at_rest_and_only_their_user_reads_them(
    lab: OAuthLab, vault: Any
) -> None:
    await call_add(lab.url, signin("ana", vault, Browser("ana")))
    kept = await vault.load("ana", lab.url)
    access, refresh = kept["tokens"]["access_token"], kept["tokens"]["refresh_token"]
    assert access.startswith("lab-at-") and refresh.startswith("lab-rt-")
    async with vault.db.engine.connect() as c:
        rows = [
            dict(r._mapping) for r in await c.execute(text("SELECT * FROM brainchat_mcp_tokens"))
        ]
    assert len(rows) == 1 and rows[0]["server_url"] == lab.url
    raw = repr(rows)
    for secret in (access, refresh, kept["client"]["client_id"]):
        assert secret not in raw
    assert await vault.load("bob", lab.url) == {}  # another user's key does not open it
    other = McpTokenStore(vault.db, b"another secret")
    assert await other.load("ana", lab.url) == {}
    assert await vault.remove("ana", lab.url)  # removing the server signs out
    assert await vault.load("ana", lab.url) == {}


async def test_an_expired_token_is_refreshed_without_a_new_sign_in(
    tmp_path: Path, vault: Any
) -> None:
    with oauth_lab(tmp_path, "--expires-in", "1") as short:
        browser = Browser("ana")
        assert (await call_add(short.url, signin("ana", vault, browser)))[0] == "42"
        first = (await vault.load("ana", short.url))["tokens"]["access_token"]
        expires_at = (await vault.load("ana", short.url))["expires_at"]
        while time.time() <= expires_at:  # the token's own expiry, not a fixed wait
            await asyncio.sleep(0.05)
        assert (await call_add(short.url, signin("ana", vault, browser), 1, 2))[0] == "3"
        grants = [e["grant"] for e in short.events("token")]
        assert grants[0] == "authorization_code" and "refresh_token" in grants[1:]
        assert len(browser.links) == 1  # refreshed, not signed in again
        assert (await vault.load("ana", short.url))["tokens"]["access_token"] != first
        # the lab revoked the old access token when it refreshed: the call used the new one


async def test_each_user_signs_in_for_themselves_and_cannot_finish_anothers_sign_in(
    lab: OAuthLab, vault: Any
) -> None:
    ana = Browser("ana")
    _, ana_is = await call_add(lab.url, signin("ana", vault, ana))
    bob = Browser("bob", finish=False)  # Bob's code is handed over below, after Ana's attempt
    bob_call = asyncio.create_task(call_add(lab.url, signin("bob", vault, bob)))
    while not bob.states and not bob_call.done():
        await asyncio.sleep(0.02)
    assert bob.links, "Bob, with no tokens of his own, is asked to sign in (he did not get Ana's)"
    with pytest.raises(SignInRefused):
        PENDING.finish("ana", bob.states[0], "code-from-ana")  # Ana with Bob's state
    with pytest.raises(SignInRefused):
        PENDING.finish("bob", ana.states[0], "code")  # Ana's finished state, replayed by Bob
    with pytest.raises(SignInRefused):
        PENDING.finish("bob", "forged-state", "code")
    assert PENDING.waiting("bob") == ["secure"]  # the refusals left Bob's sign-in waiting
    # Bob's own browser finishes it with his real code
    async with httpx.AsyncClient() as client:
        answer = await client.get(bob.links[0].url)
    code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
    PENDING.finish("bob", bob.states[0], code)
    _, bob_is = await bob_call
    assert ana_is != bob_is
    ana_tokens = (await vault.load("ana", lab.url))["tokens"]["access_token"]
    assert ana_tokens != (await vault.load("bob", lab.url))["tokens"]["access_token"]


@pytest.fixture
def canary() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.2 (loopback; the policy opens 127.0.0.1 only) that records every
    request."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            hits.append(self.path)
            self.send_response(404)
            self.end_headers()

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.2", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}", hits
    finally:
        server.shutdown()


@pytest.fixture
def accounts_policy() -> Iterator[None]:
    """The policy of an app with accounts whose operator opened 127.0.0.1 (the MCP server) in
    BRAINCHAT_CONNECTION_ALLOW."""
    before = netguard.active()
    netguard.configure(netguard.policy_from({netguard.ALLOW_ENV: "127.0.0.1"}, accounts=True))
    yield
    netguard.configure(before)


async def test_metadata_pointing_at_an_internal_address_is_not_fetched(
    tmp_path: Path, vault: Any, canary: tuple[str, list[str]], accounts_policy: None
) -> None:
    """Attack: a server the user may reach names, in its protected resource metadata, an
    'authorization server' on an internal address the operator did not open, so that brainchat's
    server would fetch its metadata and register there."""
    target, hits = canary
    with oauth_lab(tmp_path, "--issuer", target) as evil:
        browser = Browser("ana")
        with pytest.raises(McpDestinationError) as raised:
            await call_add(evil.url, signin("ana", vault, browser))
        assert evil.events("protected_resource_metadata")  # the attack was served
        assert evil.events("register") == []
    assert hits == [], "the internal address got a request"
    assert browser.links == []
    assert "127.0.0.2 is not a public internet address" in str(raised.value)


async def test_a_refused_or_abandoned_sign_in_says_so_and_keeps_nothing(
    lab: OAuthLab, vault: Any
) -> None:
    """The authorization server sends the user back with `error=access_denied`; another user
    never follows the link at all (their sign-in gives up after its wait)."""
    refused = Browser("ana", finish=False)
    call = asyncio.create_task(call_add(lab.url, signin("ana", vault, refused)))
    while not refused.states and not call.done():
        await asyncio.sleep(0.02)
    PENDING.finish("ana", refused.states[0], None, "access_denied")
    with pytest.raises(McpDestinationError, match="refused the sign-in to MCP server 'secure'"):
        await call
    assert "tokens" not in await vault.load("ana", lab.url)  # only the registered client is kept

    def never_followed(url: str) -> httpx.Auth:
        async def show(link: SignInLink) -> None:
            pass

        return mcp_oauth.user_sign_in(
            user="bob", server="secure", server_url=url, vault=vault, redirect_uri=CALLBACK,
            show_link=show, wait=0.2,
        )  # fmt: skip

    with pytest.raises(McpDestinationError, match="was not finished within 0.2 s; connect"):
        await call_add(lab.url, mcp_oauth.FirstRequestAuth(never_followed))
    assert "tokens" not in await vault.load("bob", lab.url)
    assert not PENDING.waiting("bob")  # nothing left waiting


async def test_a_server_that_reads_client_metadata_documents_gets_the_apps_url_as_client_id(
    tmp_path: Path, vault: Any
) -> None:
    """An app on https offers its Client ID Metadata Document instead of registering a client."""
    origin = "https://brainchat.example"
    document = mcp_oauth.client_document(origin)
    assert document["client_id"] == origin + mcp_oauth.CLIENT_METADATA_PATH
    assert document["redirect_uris"] == [origin + mcp_oauth.CALLBACK_PATH]
    assert document["token_endpoint_auth_method"] == "none"
    assert mcp_oauth.metadata_document_url("http://127.0.0.1:8000") is None  # https only

    with oauth_lab(tmp_path, "--cimd", CALLBACK) as lab:
        browser = Browser("ana")

        def make(url: str) -> httpx.Auth:
            return mcp_oauth.user_sign_in(
                user="ana", server="secure", server_url=url, vault=vault, redirect_uri=CALLBACK,
                show_link=browser.show, client_metadata_url=document["client_id"],
            )  # fmt: skip

        assert (await call_add(lab.url, mcp_oauth.FirstRequestAuth(make)))[0] == "42"
        assert lab.events("register") == []  # no dynamic registration
        assert {e["client_id"] for e in lab.events("authorize")} == {document["client_id"]}


def test_a_sign_in_link_carries_no_markdown_of_the_server_or_its_authorization_server() -> None:
    """The server's name and the authorization endpoint are theirs: a link target that closes
    early, or a name with markup, must not add a second link to the chat message."""
    from brainchat.ui.mcp_signin import _href, _text

    target = _href("https://as.example/authorize)[more](javascript:alert(1)) x?state=a_b-c")
    assert ")" not in target and "(" not in target and " " not in target and "[" not in target
    assert target.endswith("?state=a_b-c")
    assert _text("lab](javascript:x)") == r"lab\]\(javascript:x\)"


def test_brainchat_tools_in_a_terminal_says_the_server_needs_a_sign_in(
    lab: OAuthLab, tmp_path: Path
) -> None:
    """No browser user in a terminal: the server is listed as failed with what to do."""
    import json
    import os
    import subprocess
    import sys

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"secure": {"type": "http", "url": lab.url}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "BRAINCHAT_"))}
    env.update({
        "CHAT_MODEL": '{"provider": "ollama", "model": "x"}', "MCP_CONFIG": str(config),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    })  # fmt: skip
    exe = Path(sys.executable).with_name("brainchat")
    out = subprocess.run(
        [str(exe), "tools"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "FAILED" in out.stdout and "secure" in out.stdout
    assert "requires an OAuth sign-in (at 127.0.0.1)" in out.stdout
    assert "Traceback" not in out.stdout


async def test_brainchats_own_client_asks_a_token_protected_brainchat_server_for_its_token(
    tmp_path: Path,
) -> None:
    """Before #43 brainchat's client reported its own token-protected server as "requires an
    OAuth sign-in (at 127.0.0.1)": the 401 did not say it wanted a plain bearer token."""
    from brainchat.eeg.io.synthetic import write_demo_set
    from test_mcp_server import TOKEN, http_server

    data = tmp_path / "data"
    write_demo_set(data, subjects=1, sessions=1, trials=4, seed=3)
    with http_server(data) as url:
        bare, wrong, right = (
            ServerConnection(
                McpServerConfig(
                    name="eeg",
                    transport="streamable_http",
                    url=url,
                    headers={"Authorization": f"Bearer {token}"} if token else {},
                )
            )  # fmt: skip
            for token in (None, "not-the-token-0123456789", TOKEN)
        )
        try:
            assert not await bare.connect() and not await wrong.connect()
            assert await right.connect(), right.error
            names = {t.name for t in right.tools}
        finally:
            for conn in (bare, wrong, right):
                await conn.close()
    for conn in (bare, wrong):
        assert conn.error is not None and "requires an OAuth sign-in" not in conn.error
        assert "wants a bearer token" in conn.error and "Authorization: Bearer" in conn.error
    assert "was refused" in (wrong.error or "") and "was refused" not in (bare.error or "")
    assert "BRAINCHAT_MCP_TOKEN" in (wrong.error or "")  # the server's own word (RFC 6750)
    assert "load_data" in names
