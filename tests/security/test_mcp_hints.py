"""An MCP server's own hints: destructiveHint asks (unless config says no); unmarked tools ask first.

A real FastMCP server (tests/mcp_servers/hinted_notes.py) declares `destructiveHint` on
`wipe_notes`, `readOnlyHint` on `read_notes` and nothing on `add_note`; every call it really runs
is a line in a log file, so each test checks what ran, not only what the agent reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import parse_mcp_config
from brainchat.tools.registry import flags_of
from mcp_servers.helpers import HINTED_NOTES, notes_entry

from support import collect, of, spec, spec_json, write_fixture

BIN = Path(sys.executable).parent / "brainchat"


def ran(log: Path) -> list[str]:
    """The calls the server really executed, in order."""
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def tool_replies(server: Any) -> list[str]:
    """What the model was told about each tool call of the last run."""
    last = server.requests_for("fc")[-1]
    return [m["content"] for m in last.messages if m["role"] == "tool"]


async def configured_hub(entry: dict[str, Any]) -> McpHub:
    configs, failures = parse_mcp_config({"mcpServers": {"notes": entry}})
    assert not failures, failures
    hub = McpHub(configs)
    await hub.start()
    return hub


async def run_configured(server: Any, hub: McpHub, calls: list[Call], confirm=None) -> list:
    server.queue("fc", ToolCalls(calls), Text("enough"))
    server.queue("ans", Text("done"))
    fc = make_chat_model(spec(server, "fc"), "function_call")
    ans = make_chat_model(spec(server, "ans"), "answer")
    agent = build_agent(fc, ans, hub.toolset().tools, confirm=confirm)
    return await collect(agent.run("tidy my notes"))


async def test_server_declared_destructive_tool_is_refused_headless(scripted_server, tmp_path):
    log = tmp_path / "notes.log"
    hub = await configured_hub(notes_entry(log))
    try:
        tools = {t.name: flags_of(t) for t in hub.toolset().tools}
        assert tools["wipe_notes"].destructive
        # readOnlyHint does not make a configured server's tool read-only (parallel): config does.
        assert not tools["read_notes"].read_only and not tools["read_notes"].destructive
        calls = [Call("wipe_notes", {}), Call("read_notes", {})]
        events = await run_configured(scripted_server, hub, calls)
    finally:
        await hub.close()
    status = {e.name: e.status for e in of(events, "tool_finished")}
    assert status == {"wipe_notes": "refused", "read_notes": "success"}
    assert ran(log) == ["read"]  # the wipe never reached the server
    assert "did not approve running wipe_notes" in tool_replies(scripted_server)[0]


async def test_only_an_explicit_destructive_false_overrides_the_server_hint(
    scripted_server, tmp_path
):
    cases = {  # config entry flags -> what happens to wipe_notes without a confirm hook
        "per_tool": ({"tools": {"wipe_notes": {"destructive": False}}}, "success"),
        "per_server": ({"destructive": False}, "success"),
        "other_tool": ({"tools": {"add_note": {"destructive": False}}}, "refused"),
    }
    for case, (flags, expected) in cases.items():
        log = tmp_path / f"{case}.log"
        hub = await configured_hub(notes_entry(log, **flags))
        try:
            events = await run_configured(scripted_server, hub, [Call("wipe_notes", {})])
        finally:
            await hub.close()
        assert of(events, "tool_finished")[0].status == expected, case
        assert ran(log) == (["wipe"] if expected == "success" else []), case


def agent_session(server: Any, tmp_path: Path) -> Session:
    return Session(
        Settings(
            function_call_model=spec(server, "fc"),
            answer_model=spec(server, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
            search_backend="fixture",
            search_fixture=write_fixture(tmp_path / "fx.json"),
        )
    )


class Asker:
    """A confirm hook that records each question and gives scripted answers."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, bool]] = []
        self.answers: list[str] = []

    async def __call__(self, name: str, args: dict[str, Any], ask: Any) -> str:
        self.asked.append((name, ask.reason, ask.allow_always))
        return self.answers.pop(0)


async def turn(server: Any, session: Session, asker: Asker, *calls: Call) -> list:
    server.queue("fc", ToolCalls(list(calls)), Text("enough"))
    server.queue("ans", Text("done"))
    return await collect(session.ask("work on my notes", confirm=asker))


@asynccontextmanager
async def user_server(log: Path) -> AsyncIterator[ClientSession]:
    """The hinted server as a user connects it: a client session someone else owns (Chainlit)."""
    params = StdioServerParameters(command=sys.executable, args=[str(HINTED_NOTES), str(log)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


async def test_user_connected_server_asks_first_and_remembers_per_conversation(
    scripted_server, tmp_path
):
    s, log = scripted_server, tmp_path / "notes.log"
    async with user_server(log) as client:
        session, asker = agent_session(s, tmp_path), Asker()
        await session.connect_user_server("mine", client)  # what the plug button does

        asker.answers = ["always"]
        await turn(s, session, asker, Call("read_notes", {}), Call("add_note", {"text": "a"}))
        assert asker.asked == [("add_note", "first_use", True)]  # read-only-hinted: never asks
        await turn(s, session, asker, Call("add_note", {"text": "b"}))
        assert len(asker.asked) == 1  # approved for this conversation: no second question
        assert ran(log) == ["read", "add:a", "add:b"]

        asker.answers = ["always", "reject"]  # "always" is no option for a destructive tool
        await turn(s, session, asker, Call("wipe_notes", {}))
        events = await turn(s, session, asker, Call("wipe_notes", {}))
    assert asker.asked[1:] == [("wipe_notes", "server_destructive", False)] * 2
    assert of(events, "tool_finished")[0].status == "refused"
    assert "did not approve running wipe_notes" in tool_replies(s)[0]
    assert ran(log) == ["read", "add:a", "add:b", "wipe"]


async def test_once_another_conversation_and_a_reconnect_ask_again(scripted_server, tmp_path):
    s, log = scripted_server, tmp_path / "notes.log"
    async with user_server(log) as client:
        first, other, asker = agent_session(s, tmp_path), agent_session(s, tmp_path), Asker()
        await first.connect_user_server("mine", client)
        await other.connect_user_server("mine", client)
        asker.answers = ["always", "once", "reject", "reject"]
        await turn(s, first, asker, Call("add_note", {"text": "a"}))
        await turn(s, other, asker, Call("add_note", {"text": "b"}))  # its own approvals
        events = await turn(s, other, asker, Call("add_note", {"text": "c"}))  # "once" is once
        assert of(events, "tool_finished")[0].status == "refused"
        await first.connect_user_server("mine", client)  # reconnected: approvals start afresh
        await turn(s, first, asker, Call("add_note", {"text": "d"}))
    assert [a[0] for a in asker.asked] == ["add_note"] * 4 and not asker.answers
    assert ran(log) == ["add:a", "add:b"]


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_"))
    }
    return subprocess.run(
        [str(BIN), *args], env={**clean, **env}, cwd=cwd, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_cli_refuses_a_server_declared_destructive_tool_without_the_flag(scripted_server, tmp_path):
    s, log = scripted_server, tmp_path / "notes.log"
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": notes_entry(log)}}))
    env = {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "MCP_CONFIG": str(tmp_path / "mcp.json"),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }
    for _ in range(2):
        s.queue("fc", ToolCalls([Call("wipe_notes", {})]), Text("enough"))
        s.queue("ans", Text("done"))
    out = cli(["ask", "--mode", "agent", "wipe my notes"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "✗ wipe_notes refused" in out.stdout and ran(log) == []
    assert "refused wipe_notes" in out.stderr and "marks it as destructive" in out.stderr
    assert "--allow-destructive" in out.stderr
    out = cli(["ask", "--mode", "agent", "--allow-destructive", "wipe my notes"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "✓ wipe_notes success" in out.stdout and ran(log) == ["wipe"]
    assert "approved (--allow-destructive)" in out.stderr
    assert "use --allow-destructive" not in out.stderr  # never told to pass what was passed
