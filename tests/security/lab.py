"""A lab's shared app: password login, accounts made with `brainchat users`, logins over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from e2e.conftest import ROOT

PASSWORDS = {name: f"{name}'s long password" for name in ("ana", "bob", "cy", "dee", "eve")}


def users(home: Path, *args: str, password: str = "") -> subprocess.CompletedProcess[str]:
    """`brainchat users ...` on the app's data folder, as a lab admin runs it (another process)."""
    env = {**os.environ, "BRAINCHAT_DATA_DIR": str(home / "data"), "BRAINCHAT_AUTH": "password"}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "brainchat.cli", "users", *args],
                          input=password + "\n", text=True, cwd=ROOT, timeout=120,
                          env=env, capture_output=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def add_accounts(home: Path, *names: str) -> None:
    for name in names:
        users(home, "add", name, password=PASSWORDS[name])


async def login(app: str, name: str, password: str | None = None, client: str | None = None,
                username: str | None = None, **headers: str) -> httpx.Response:  # fmt: skip
    """POST /login as the login page does; `client`: the address a trusted proxy forwards;
    `username`: the name sent, when not `name` (whose password is the default)."""
    if client:
        headers["X-Forwarded-For"] = client
    async with httpx.AsyncClient(base_url=app, timeout=30) as http:
        return await http.post(
            "/login",
            data={
                "username": username or name,
                "password": PASSWORDS[name] if password is None else password,
            },
            headers={k.replace("_", "-"): v for k, v in headers.items()},
        )


def cookie_of(response: httpx.Response) -> str:
    token = response.cookies.get("access_token")
    assert response.status_code == 200 and token, (response.status_code, response.text[:200])
    return f"access_token={token}"


def app_log(home: Path) -> str:
    log = home / "app.log"
    return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
