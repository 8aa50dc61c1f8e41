"""Host and Origin are checked on every bind address (the specification's MUST), with
BRAINCHAT_MCP_ALLOWED_ORIGINS to allow a named page (the MCP Inspector's). Before #43 a `--host`
other than loopback turned both checks off, and on loopback every browser Origin was refused.

The attacks are real requests to a real server process bound to the wildcard address (reached at
127.0.0.1): a page on a foreign site (its Origin), and DNS rebinding (the attacker's Host name)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.mcpserver.origins import OriginsError, allowed_for, parse_origins
from test_mcp_server import BIN, INIT, TOKEN, http_server, server_env

HEADERS = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
INSPECTOR = "http://localhost:6274"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=4, seed=3)
    return tmp_path / "data"


async def post(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(url, json=INIT, headers={**HEADERS, **headers})


@pytest.mark.attack
async def test_a_server_on_every_address_refuses_a_foreign_origin_and_a_rebound_host(data):
    with http_server(data, host="0.0.0.0", BRAINCHAT_MCP_ALLOWED_ORIGINS=INSPECTOR) as url:
        port = url.split(":")[2].split("/")[0]
        plain = await post(url)  # no Origin: not a browser (an SDK, an IDE)
        foreign = await post(url, Origin="http://evil.example")
        lookalike = await post(url, Origin="http://localhost:6274.evil.example")
        null = await post(url, Origin="null")
        rebound = await post(url, Host=f"attacker.example:{port}")
        named = await post(url, Origin=INSPECTOR)
        own = await post(url, Origin=f"http://127.0.0.1:{port}")
        no_token = await post(url, Origin="http://evil.example", Authorization="")
    assert plain.status_code == 200
    assert foreign.status_code == 403 and "BRAINCHAT_MCP_ALLOWED_ORIGINS" in foreign.text
    assert lookalike.status_code == 403 and null.status_code == 403
    assert rebound.status_code == 421
    assert named.status_code == 200 and own.status_code == 200
    assert no_token.status_code == 403  # refused before the token is even looked at


@pytest.mark.attack
async def test_a_loopback_server_allows_a_named_origin_and_refuses_the_others(data):
    """Before: on loopback even http://localhost:* origins were refused, with no way to allow
    the Inspector's page."""
    with http_server(data, BRAINCHAT_MCP_ALLOWED_ORIGINS="http://localhost:*") as url:
        inspector = await post(url, Origin=INSPECTOR)
        other_port = await post(url, Origin="http://localhost:3000")
        foreign = await post(url, Origin="http://127.0.0.1.evil.example:6274")
        rebound = await post(url, Host="attacker.example")
    assert inspector.status_code == 200 and other_port.status_code == 200  # the :* pattern
    assert foreign.status_code == 403 and rebound.status_code == 421
    with http_server(data) as url:  # nothing named: only the server's own page
        refused = await post(url, Origin=INSPECTOR)
    assert refused.status_code == 403


def test_the_names_a_server_answers_follow_its_bind_address():
    host = allowed_for("192.0.2.7", 8765, [])
    assert host.host_ok("192.0.2.7:8765") and host.host_ok("192.0.2.7")
    assert not host.host_ok("localhost:8765") and not host.host_ok("evil.example:8765")
    assert host.origin_ok("http://192.0.2.7:8765") and not host.origin_ok("http://localhost:8765")
    loop = allowed_for("127.0.0.1", 8765, parse_origins(" HTTP://LocalHost:6274/ ,"))
    assert loop.host_ok("localhost:9") and loop.host_ok("[::1]:8765")
    assert loop.origin_ok("http://localhost:6274") and not loop.origin_ok("http://localhost:6275")
    v6 = allowed_for("fd00::2", 8765, [])
    assert v6.host_ok("[fd00::2]:8765") and v6.origin_ok("http://[fd00::2]:8765")


def test_a_bad_allowed_origin_stops_the_server_with_the_variable_named(tmp_path):
    for bad in ("localhost:6274", "ftp://x.example", "http://x.example/path"):
        with pytest.raises(OriginsError, match="BRAINCHAT_MCP_ALLOWED_ORIGINS"):
            parse_origins(bad)
    (tmp_path / "data").mkdir()
    env = server_env(
        tmp_path / "data", BRAINCHAT_MCP_TOKEN=TOKEN, BRAINCHAT_MCP_ALLOWED_ORIGINS="localhost"
    )
    out = subprocess.run(
        [str(BIN), "mcp-server", "--http"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "BRAINCHAT_MCP_ALLOWED_ORIGINS" in out.stderr
