"""The protocol revision `brainchat mcp-server` speaks: the pinned SDK (mcp 1.x; chainlit and
langchain-mcp-adapters require mcp<2) knows revisions up to 2025-11-25, so a client that asks for
2026-07-28 is answered 2025-11-25, and a 2026-07-28 client's `server/discover` probe is refused
with a JSON-RPC error so that it falls back to `initialize` (what the mcp 2.x client does).

With BRAINCHAT_TEST_MCP2_PYTHON naming a Python that has mcp 2.x installed (e.g. a venv made with
`pip install mcp==2.3.0`), the real 2.x client is run against the server too."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from mcp.types import LATEST_PROTOCOL_VERSION

from brainchat.eeg.io.synthetic import write_demo_set
from test_mcp_server import BIN, INIT, TOKEN, http_server, server_env

HEADERS = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
DISCOVER = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {}}}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=4, seed=3)
    return tmp_path / "data"


def answer(response: httpx.Response) -> dict:
    """The JSON-RPC message of a POST's answer (JSON, or one SSE event)."""
    if response.headers["content-type"].startswith("text/event-stream"):
        line = next(x for x in response.text.splitlines() if x.startswith("data:"))
        return json.loads(line[5:])
    return response.json()


async def test_a_client_asking_for_2026_07_28_is_answered_2025_11_25(data):
    newest = {**INIT, "params": {**INIT["params"], "protocolVersion": "2026-07-28"}}
    with http_server(data) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            probe = await client.post(url, json=DISCOVER, headers=HEADERS)
            init = await client.post(url, json=newest, headers=HEADERS)
    assert LATEST_PROTOCOL_VERSION == "2025-11-25"  # the pinned SDK's newest
    assert answer(init)["result"]["protocolVersion"] == "2025-11-25"
    assert probe.status_code >= 400 or "error" in answer(probe)  # refused: the client falls back


def test_a_stdio_probe_is_refused_with_an_error_and_logged_in_one_line(data):
    lines = [
        json.dumps(DISCOVER),
        json.dumps(
            {**INIT, "id": 8, "params": {**INIT["params"], "protocolVersion": "2026-07-28"}}
        ),
    ]
    out = subprocess.run(
        [str(BIN), "mcp-server"], input="\n".join(lines) + "\n", env=server_env(data),
        cwd=data.parent, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    replies = {m["id"]: m for m in map(json.loads, out.stdout.splitlines())}
    assert "error" in replies[7] and replies[8]["result"]["protocolVersion"] == "2025-11-25"
    assert "probed server/discover" in out.stderr and "validation error" not in out.stderr


MCP2 = os.environ.get("BRAINCHAT_TEST_MCP2_PYTHON")
V2_CLIENT = """
import asyncio, sys, httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
async def main(url, token):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
        async with Client(streamable_http_client(url, http_client=h)) as client:
            r = await client.call_tool("get_study_state", {})
            print(client.protocol_version, client.server_info.name, r.structured_content["stage"])
asyncio.run(main(*sys.argv[1:]))
"""


@pytest.mark.skipif(not MCP2, reason="set BRAINCHAT_TEST_MCP2_PYTHON to a Python with mcp 2.x")
def test_the_mcp_2_client_falls_back_to_2025_11_25_and_calls_a_tool(data):
    with http_server(data) as url:
        out = subprocess.run(
            [str(MCP2), "-c", V2_CLIENT, url, TOKEN], capture_output=True, text=True, timeout=120
        )
    assert out.stdout.split() == ["2025-11-25", "brainchat", "empty"], out.stderr[-2000:]


WHO = """
from mcp.server.fastmcp import Context, FastMCP
mcp = FastMCP("who")
@mcp.tool()
def who(ctx: Context) -> str:
    info = ctx.session.client_params.clientInfo
    return f"{info.name} {info.version}"
mcp.run()
"""


async def test_brainchats_client_names_itself_brainchat_with_its_version(tmp_path):
    """Before #43 a server saw brainchat's client as "mcp 0.1.0" (the SDK's default)."""
    import sys
    from importlib import metadata

    from brainchat.tools.mcp_config import McpServerConfig
    from brainchat.tools.mcp_connection import ServerConnection

    script = tmp_path / "who.py"
    script.write_text(WHO)
    conn = ServerConnection(McpServerConfig(name="who", command=sys.executable, args=[str(script)]))
    try:
        assert await conn.connect(), conn.error
        result = await conn.call("who", {}, timeout=30)
    finally:
        await conn.close()
    said = result.content[0].text  # type: ignore[union-attr]
    assert said == f"brainchat {metadata.version('brainchat')}"
