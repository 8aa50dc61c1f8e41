"""Logging out, changing a password or removing an account ends every session of the account.

A lab shares one app with password login. Before, a cookie stayed good for 15 days whatever
happened: after `/logout`, `brainchat users passwd` or `users remove`, the old cookie still got
`/user` 200 and chatted. The real app runs under `chainlit run`; accounts are made and changed
with `brainchat users` in other processes, as an admin does.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import jwt
import pytest
import socketio

from brainchat.testing.scripted_server import Text
from e2e import conftest as e2e
from e2e.conftest import spec
from e2e.sio_client import ChainlitSocket

from lab import add_accounts, cookie_of, login, users

app_factory = e2e.app_factory
model_server = e2e.model_server
HOURS = 2


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lab")


@pytest.fixture(scope="module")
def app(model_server, app_factory, home):
    add_accounts(home, "ana", "bob", "cy")
    env = {"CHAT_MODEL": spec(model_server, "chat-m"), "BRAINCHAT_AUTH": "password",
           "BRAINCHAT_SESSION_HOURS": str(HOURS)}  # fmt: skip
    return app_factory(env, home=home)


async def whoami(app: str, cookie: str) -> int:
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": cookie}, timeout=30) as http:
        return (await http.get("/user")).status_code


async def socket_refused(app: str, cookie: str) -> bool:
    client = ChainlitSocket()
    try:
        await client.connect(app, origin=None, cookie=cookie)
    except socketio.exceptions.ConnectionError:
        return True
    finally:
        await client.close()
    return False


@pytest.mark.attack
async def test_logout_ends_every_session_of_the_account(app):
    laptop = cookie_of(await login(app, "ana"))
    desktop = cookie_of(await login(app, "ana"))
    assert await whoami(app, laptop) == 200 and await whoami(app, desktop) == 200
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": laptop}) as http:
        r = await http.post("/logout")
    assert r.status_code == 200
    assert await whoami(app, laptop) == 401  # a copy of the cookie kept after logging out
    assert await whoami(app, desktop) == 401
    assert await socket_refused(app, laptop)
    again = cookie_of(await login(app, "ana"))  # logging in again works
    assert await whoami(app, again) == 200


@pytest.mark.attack
async def test_a_password_change_ends_sessions_and_closes_an_open_socket(app, home, model_server):
    cookie = cookie_of(await login(app, "bob"))
    model_server.queue("chat-m", Text("First answer."))
    client = ChainlitSocket()
    await client.connect(app, origin=None, cookie=cookie)
    await client.start_chat()
    await client.send("hello")
    await client.wait_for("First answer.", timeout=60)
    done = users(home, "passwd", "bob", password="bob's new long password")
    assert await whoami(app, cookie) == 401
    assert "ended" in done.stdout
    assert await socket_refused(app, cookie)
    await client.send("still there?")  # the socket opened before the change is closed
    async with asyncio.timeout(30):
        while client.sio.connected:
            await client.sio.sleep(0.05)
    assert "still there?" not in json.dumps(model_server.requests_for("chat-m")[-1].messages)
    await client.close()
    assert cookie_of(await login(app, "bob", "bob's new long password"))


@pytest.mark.attack
async def test_removing_an_account_ends_its_sessions_even_if_the_name_comes_back(app, home):
    cookie = cookie_of(await login(app, "cy"))
    assert await whoami(app, cookie) == 200
    users(home, "remove", "cy")
    assert await whoami(app, cookie) == 401
    assert await socket_refused(app, cookie)
    users(home, "add", "cy", password="cy's second long password")
    assert await whoami(app, cookie) == 401


async def test_a_token_from_before_the_upgrade_is_refused(app, home):
    """A 15-day token signed with the same secret but made before sessions could be ended."""
    secret = (home / "state" / "auth_secret").read_text().strip()
    now = int(time.time())
    old = jwt.encode({"identifier": "ana", "display_name": None, "metadata": {"provider": "password"},
                      "iat": now, "exp": now + 15 * 86400}, secret, algorithm="HS256")  # fmt: skip
    assert await whoami(app, f"access_token={old}") == 401


@pytest.mark.attack
async def test_the_session_lifetime_is_the_setting(app):
    r = await login(app, "ana")
    token = r.cookies["access_token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == HOURS * 3600
    assert f"max-age={HOURS * 3600}" in r.headers["set-cookie"].lower()


@pytest.mark.attack
async def test_the_cookie_is_secure_behind_an_https_proxy(app):
    behind = await login(app, "ana", X_Forwarded_Proto="https")
    assert "secure" in [p.strip().lower() for p in behind.headers["set-cookie"].split(";")]
    plain = await login(app, "ana")  # http on loopback: a Secure cookie would not come back
    assert "secure" not in [p.strip().lower() for p in plain.headers["set-cookie"].split(";")]
    async with httpx.AsyncClient(base_url=app, headers={"Cookie": cookie_of(behind)}) as http:
        r = await http.post("/logout", headers={"X-Forwarded-Proto": "https"})
    assert all("secure" in c.lower() for c in r.headers.get_list("set-cookie"))
