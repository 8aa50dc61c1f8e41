"""Failed logins are throttled per client and per name, in tables that stay small.

Before: every failed name was kept forever (300 logins with 1 MB names grew the app by 295 MB,
unauthenticated), five wrong passwords from anyone locked the right one out, and one client
could try 30 names in 11 s. The real app under `chainlit run`; uvicorn trusts X-Forwarded-For
from 127.0.0.1 (a reverse proxy on the same machine), which is how these tests play clients at
different addresses.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from e2e import conftest as e2e
from e2e.conftest import spec

from lab import add_accounts, cookie_of, login

app_factory = e2e.app_factory
model_server = e2e.model_server


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lab")


@pytest.fixture(scope="module")
def app(model_server, app_factory, home):
    add_accounts(home, "ana", "bob")
    # a first wait of 5 s: the refused logins of a test take far less, so none slips through
    env = {"CHAT_MODEL": spec(model_server, "chat-m"), "BRAINCHAT_AUTH": "password",
           "BRAINCHAT_LOGIN_BACKOFF_SECONDS": "5"}  # fmt: skip
    return app_factory(env, home=home)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.attack
async def test_wrong_passwords_from_one_client_do_not_lock_the_owner_out(app):
    for _ in range(6):
        r = await login(app, "ana", "a wrong guess", client="10.0.0.66")
        assert r.status_code in (401, 429)
    assert cookie_of(await login(app, "ana", client="10.0.0.5"))  # ana, at her own desk
    # the guessing client backs off; once its window has passed the right password works
    async with asyncio.timeout(30):
        while (r := await login(app, "ana", client="10.0.0.66")).status_code == 429:
            assert 1 <= int(r.headers["retry-after"]) <= 5
            await asyncio.sleep(0.2)
    assert cookie_of(r)


@pytest.mark.attack
async def test_one_client_cannot_try_name_after_name(app):
    statuses = [
        (await login(app, "ana", "wrong", client="10.0.0.77", username=f"user{i}")).status_code
        for i in range(30)
    ]
    assert statuses.count(401) <= 10 and statuses.count(429) >= 20, statuses
    r = await login(app, "bob", client="10.0.0.77")  # even the right password waits
    assert r.status_code == 429 and "try again" in r.text.lower()
    assert cookie_of(await login(app, "bob", client="10.0.0.78"))  # other clients are not held


@pytest.mark.attack
async def test_huge_names_from_many_clients_do_not_grow_the_app(app, app_factory):
    pid = app_factory.pid(app)
    name = "n" * 100_000

    async def burst(n: int, offset: int) -> None:
        async with httpx.AsyncClient(base_url=app, timeout=60) as http:
            for i in range(n):
                headers = {
                    "X-Forwarded-For": f"10.{(offset + i) // 250 % 250}.{(offset + i) % 250}.9"
                }
                data = {"username": f"{name}{i}", "password": "x"}
                r = await http.post("/login", data=data, headers=headers)
                assert r.status_code in (401, 429)

    await burst(30, 0)  # the allocator's arenas settle
    before = rss_kb(pid)
    await burst(300, 1000)
    grown_mb = (rss_kb(pid) - before) / 1024
    assert grown_mb < 12, f"the app grew by {grown_mb:.0f} MB"
