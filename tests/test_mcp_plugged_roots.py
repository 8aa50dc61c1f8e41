"""Roots for a server the user plugs in (#43): it serves one user, so it is told that user's own
data folder (the conversation's `settings.data_dir`; with accounts `<data>/users/<name>`),
read-only unless BRAINCHAT_MCP_ROOTS=read_write, none when `off`. Chainlit initializes the
session before brainchat knows whose it is, so the capability is declared at construction and a
`roots/list` waits (bounded) for the folder `connect_user_server` hands over. Against
tests/mcp_servers/sampling_lab.py (FastMCP, stdio), plugged as Chainlit's plug button does."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.tools import mcp_roots
from brainchat.tools.mcp_client_session import use_for_plugged_servers

LAB = Path(__file__).parent / "mcp_servers" / "sampling_lab.py"


@pytest.fixture(autouse=True)
def chainlit_session_class(monkeypatch):
    monkeypatch.setattr(mcp, "ClientSession", mcp.ClientSession)
    use_for_plugged_servers()
    monkeypatch.delenv(mcp_roots.MODE_ENV, raising=False)
    monkeypatch.delenv(mcp_roots.AUTH_ENV, raising=False)


@asynccontextmanager
async def plugged() -> AsyncIterator[Any]:
    """The session Chainlit's plug button opens for a stdio server."""
    from mcp import ClientSession  # looked up at connect, as chainlit.server.connect_mcp does

    params = StdioServerParameters(command=sys.executable, args=[str(LAB)])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read_stream=read, write_stream=write, sampling_callback=None) as c:
            await c.initialize()
            yield c


def conversation(folder: Path) -> Session:
    session = Session(Settings(data_dir=folder))
    return session


async def ask(client: Any, tool: str) -> str:
    return (await client.call_tool(tool, {})).content[0].text  # type: ignore[no-any-return]


async def test_a_plugged_server_is_told_its_conversations_folder_read_only(tmp_path):
    session = conversation(tmp_path / "data")
    async with plugged() as client:
        await session.connect_user_server("mine", client)
        caps = await ask(client, "capabilities")
        roots = await ask(client, "folders")
    assert caps == "sampling=True roots=True roots.listChanged=True"
    assert roots == f"{(tmp_path / 'data').resolve().as_uri()} brainchat data (read-only)"


async def test_read_write_says_so_and_off_declares_no_roots(tmp_path, monkeypatch):
    session = conversation(tmp_path)
    monkeypatch.setenv(mcp_roots.MODE_ENV, "read_write")
    async with plugged() as client:
        await session.connect_user_server("mine", client)
        assert (await ask(client, "folders")).endswith("brainchat data (read-write)")
    monkeypatch.setenv(mcp_roots.MODE_ENV, "off")
    async with plugged() as client:
        await session.connect_user_server("mine", client)
        caps = await ask(client, "capabilities")
        refused = await ask(client, "folders")
    assert caps.startswith("sampling=True roots=False")
    assert refused.startswith("refused:")


@pytest.mark.attack
async def test_with_accounts_anas_server_is_told_only_anas_folder(tmp_path, monkeypatch):
    """A plugged server serves one user: Ana's is told Ana's folder, never the data folder that
    holds every user's files, nor Bob's; a conversation left on the shared folder gets none."""
    root = tmp_path / "data"
    monkeypatch.setenv(mcp_roots.FOLDER_ENV, str(root))
    monkeypatch.setenv(mcp_roots.MODE_ENV, "read_write")
    monkeypatch.setenv(mcp_roots.AUTH_ENV, "password")
    ana, bob = conversation(root), conversation(root)
    ana.use_data_folder(root / "users" / "ana", None, b"k" * 32)
    bob.use_data_folder(root / "users" / "bob", None, b"k" * 32)
    shared = conversation(root)  # its folder never became a user's own (a failed set-up)
    async with plugged() as one, plugged() as two, plugged() as three:
        await ana.connect_user_server("files", one)
        await bob.connect_user_server("files", two)
        await shared.connect_user_server("files", three)
        told_ana, told_bob = await ask(one, "folders"), await ask(two, "folders")
        told_shared = await ask(three, "folders")
    assert told_ana == f"{(root / 'users' / 'ana').resolve().as_uri()} brainchat data (read-write)"
    assert told_bob.startswith((root / "users" / "bob").resolve().as_uri() + " ")
    assert "/users/bob" not in told_ana and "/users/ana" not in told_bob
    assert told_shared == "no roots"


async def test_a_server_that_asks_before_connect_gets_none_then_is_told(tmp_path, monkeypatch):
    """Asked before `connect_user_server` hands the folder over (past the bounded wait), a server
    gets no roots; once the folder is known it gets roots/list_changed and then the folder."""
    monkeypatch.setattr(mcp_roots, "FOLDER_WAIT", 0.05)
    session = conversation(tmp_path / "data")
    async with plugged() as client:
        early = await ask(client, "folders")
        await session.connect_user_server("mine", client)
        changes = await ask(client, "roots_changes")
        now = await ask(client, "folders")
    assert early == "no roots"
    assert changes == "1"
    assert now.startswith((tmp_path / "data").resolve().as_uri())
