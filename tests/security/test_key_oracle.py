"""No key oracle (issue #21): one account's key is not masked in another account's messages.

The real app under `chainlit run` with password login and two accounts. Ana types her provider's
key into the connection form (the app remembers it, to mask it). Bob then types guesses of it
where the app quotes what he typed (the base URL field: "the base URL '...' is not valid"). Were
Ana's key masked in Bob's messages, his right guess would come back as *** and a wrong one as he
typed it: an oracle. Bob must see his own text either way; Ana still sees her key masked in her
own messages, and the app's log holds it nowhere.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from e2e import conftest as e2e
from e2e.conftest import ROOT
from e2e.sio_client import ChainlitSocket, password_login

pytestmark = pytest.mark.attack
app_factory = e2e.app_factory
PASSWORDS = {"ana": "ana's long password", "bob": "bob's long password"}
ANA_KEY = "violet-harbor-2931"  # a key shaped like no known key: only remembering masks it
WRONG_GUESS = "violet-harbor-2930"


@pytest.fixture(scope="module")
def app(app_factory: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    home = tmp_path_factory.mktemp("oracle")
    for name, password in PASSWORDS.items():
        subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", name],
                       input=password + "\n", text=True, cwd=ROOT, check=True, timeout=60,
                       env={**os.environ, "BRAINCHAT_DATA_DIR": str(home / "data"),
                            "BRAINCHAT_AUTH": "password"})  # fmt: skip
    return str(app_factory({"BRAINCHAT_AUTH": "password"}, home=home))


async def session(app: str, name: str) -> ChainlitSocket:
    cookie = await password_login(app, name, PASSWORDS[name])
    assert cookie, f"{name} could not log in"
    client = ChainlitSocket()
    await client.connect(app, origin=None, cookie=cookie)
    await client.start_chat()
    return client


async def submit(client: ChainlitSocket, url: str, key: str = "") -> str:
    """Submit the connection form; the app's answer (all events after the submit)."""
    before = len(client.events)
    await client.add_connection("lab", url, key)
    async with asyncio.timeout(30):
        while True:
            text = "\n".join(str(data) for _, data in client.events[before:])
            if "closed after no answer" in text or "Connected `" in text:
                return text  # a failure offers the form again: left unanswered, it closes
            await asyncio.sleep(0.05)


async def test_another_account_cannot_test_guesses_of_a_key(app_factory: Any, app: str) -> None:
    ana = await session(app, "ana")
    await submit(ana, "http://127.0.0.1:9/v1", ANA_KEY)  # remembered, even though it fails
    bob = await session(app, "bob")
    right = await submit(bob, ANA_KEY)  # "the base URL '...' is not valid"
    wrong = await submit(bob, WRONG_GUESS)
    own = await submit(ana, ANA_KEY)
    await bob.close()
    await ana.close()
    app_factory.stop(app)

    assert f"the base URL '{WRONG_GUESS}' is not valid" in wrong
    assert f"the base URL '{ANA_KEY}' is not valid" in right, "Bob's right guess was masked"
    assert "***" not in right
    assert "the base URL '***' is not valid" in own  # Ana's own key stays masked for her
    log = (Path(app_factory.home[app]) / "app.log").read_text()
    assert "not valid" in log or "refused" in log  # the attempts were logged...
    assert ANA_KEY not in log  # ...with the key masked
