"""The client's roots (#43): configured servers are told the data folder as a file:// root
(read-only unless BRAINCHAT_MCP_ROOTS says read_write; off declares no roots capability), and
get roots/list_changed when it changes. Against tests/mcp_servers/sampling_lab.py (FastMCP)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from brainchat.tools import mcp_notify, mcp_roots
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig

LAB = Path(__file__).parent / "mcp_servers" / "sampling_lab.py"


def lab() -> McpServerConfig:
    return McpServerConfig(name="folders", command=sys.executable, args=[str(LAB)])


async def ask(hub: McpHub, tool: str) -> str:
    result = await hub.servers["folders"].call(tool, {}, 30)
    return result.content[0].text  # type: ignore[union-attr]


async def test_the_data_folder_is_the_servers_read_only_root(tmp_path, monkeypatch):
    monkeypatch.setenv(mcp_roots.FOLDER_ENV, str(tmp_path / "data"))
    monkeypatch.delenv(mcp_roots.MODE_ENV, raising=False)
    monkeypatch.delenv(mcp_roots.AUTH_ENV, raising=False)
    async with McpHub([lab()]) as hub:
        caps = await ask(hub, "capabilities")
        roots = await ask(hub, "folders")
    assert caps == "sampling=True roots=True roots.listChanged=True"
    assert roots == f"{(tmp_path / 'data').resolve().as_uri()} brainchat data (read-only)"


@pytest.mark.attack
async def test_with_accounts_no_server_is_told_the_shared_data_folder(tmp_path, monkeypatch):
    """The data folder holds every user's files and a configured server serves every user: a
    server taking roots as its allowed folders would let Bob's agent read Ana's uploads."""
    monkeypatch.setenv(mcp_roots.FOLDER_ENV, str(tmp_path / "data"))
    monkeypatch.setenv(mcp_roots.MODE_ENV, "read_write")
    monkeypatch.setenv(mcp_roots.AUTH_ENV, "password")
    async with McpHub([lab()]) as hub:
        caps = await ask(hub, "capabilities")
        refused = await ask(hub, "folders")
    assert caps.startswith("sampling=True roots=False")
    assert refused.startswith("refused:")


async def test_read_write_says_so_and_off_declares_no_roots(tmp_path, monkeypatch):
    monkeypatch.setenv(mcp_roots.FOLDER_ENV, str(tmp_path))
    monkeypatch.setenv(mcp_roots.MODE_ENV, "read_write")
    async with McpHub([lab()]) as hub:
        assert (await ask(hub, "folders")).endswith("brainchat data (read-write)")
    monkeypatch.setenv(mcp_roots.MODE_ENV, "off")
    async with McpHub([lab()]) as hub:
        caps = await ask(hub, "capabilities")
        refused = await ask(hub, "folders")
    assert caps.startswith("sampling=True roots=False")
    assert refused.startswith("refused:")


async def test_a_changed_folder_is_told_with_roots_list_changed(tmp_path, monkeypatch):
    monkeypatch.setenv(mcp_roots.FOLDER_ENV, str(tmp_path / "one"))
    monkeypatch.delenv(mcp_roots.MODE_ENV, raising=False)
    monkeypatch.delenv(mcp_roots.AUTH_ENV, raising=False)
    async with McpHub([lab()]) as hub:
        conn = hub.servers["folders"]
        await ask(hub, "folders")
        await mcp_notify.settled([conn])
        unchanged = await ask(hub, "roots_changes")
        monkeypatch.setenv(mcp_roots.FOLDER_ENV, str(tmp_path / "two"))
        await mcp_notify.settled([conn])  # asked before each model request
        changed = await ask(hub, "roots_changes")
        now = await ask(hub, "folders")
    assert (unchanged, changed) == ("0", "1")
    assert now.startswith((tmp_path / "two").resolve().as_uri())


async def test_the_client_names_itself_brainchat_with_its_version():
    from importlib import metadata

    async with McpHub([lab()]) as hub:
        said = await ask(hub, "client")
    assert said == f"brainchat {metadata.version('brainchat')}"
