"""A server the user plugs in may ask the user mid-call (#25 elicit), though Chainlit opens its
session: once the app has started, `mcp.ClientSession` (the name Chainlit's connect looks up)
is brainchat's PluggedSession, which declares form elicitation and routes the server's question
to the run whose call is open, in that run's conversation. The session is built here as
`chainlit.server.connect_mcp` builds it; the real FastMCP elicit-lab server asks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp.client.streamable_http import streamablehttp_client

from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp_client_session import PluggedSession, use_for_plugged_servers
from brainchat.tools.mcp_elicit import Form, Reply
from brainchat.tools.mcp_elicit_route import answering
from mcp_servers.helpers import http_lab

from support import collect, of, spec, write_fixture

ELICIT_LAB = Path(__file__).parent / "mcp_servers" / "elicit_lab.py"
PERSON = {"name": "Ada", "email": "ada@example.org", "age": "36", "consent": "yes"}


@pytest.fixture
def chainlit_session_class(monkeypatch):
    """`mcp.ClientSession` as the app leaves it (restored after the test)."""
    monkeypatch.setattr(mcp, "ClientSession", mcp.ClientSession)
    use_for_plugged_servers()
    return mcp.ClientSession


@pytest.fixture(scope="module")
def lab_url():
    with http_lab("--http", ELICIT_LAB) as url:
        yield url


@asynccontextmanager
async def plugged_as_chainlit_does(url: str) -> AsyncIterator[Any]:
    from mcp import ClientSession  # looked up at connect, as chainlit.server.connect_mcp does

    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read_stream=read, write_stream=write, sampling_callback=None) as c:
            await c.initialize()
            yield c


class Scripted:
    def __init__(self, *replies: Reply):
        self.replies, self.forms = list(replies), []

    async def __call__(self, form: Form) -> Reply:
        self.forms.append(form)
        return self.replies.pop(0)


async def approve(name: str, args: dict[str, Any]) -> bool:
    return True  # a plugged server's tool asks before its first use; the user approves


def agent_session(server: Any, tmp_path: Path, fc: str) -> Session:
    return Session(
        Settings(
            function_call_model=spec(server, fc),
            answer_model=spec(server, "ans"),
            default_mode="agent",
            data_dir=tmp_path / fc,
            search_backend="fixture",
            search_fixture=write_fixture(tmp_path / f"{fc}.json"),
        )
    )


def told(server: Any, fc: str) -> list[str]:
    return [m["content"] for m in server.requests_for(fc)[-1].messages if m["role"] == "tool"]


async def test_each_conversations_plugged_server_asks_that_conversations_user(
    chainlit_session_class, scripted_server, tmp_path, lab_url
):
    s = scripted_server
    ada, bob = Scripted(Reply("accept", PERSON)), Scripted(Reply("decline"))
    async with plugged_as_chainlit_does(lab_url) as one, plugged_as_chainlit_does(lab_url) as two:
        assert isinstance(one, PluggedSession)
        first, second = agent_session(s, tmp_path, "fc1"), agent_session(s, tmp_path, "fc2")
        await first.connect_user_server("registry", one)
        await second.connect_user_server("registry", two)
        for fc in ("fc1", "fc2"):
            s.queue(fc, ToolCalls([Call("register_participant", {}), Call("client_elicitation", {})]),
                    Text("enough"))  # fmt: skip
        s.queue("ans", Text("Done."), Text("Done."))
        with answering(ada):
            events = await collect(first.ask("Register the participant", approve))
        with answering(bob):
            await collect(second.ask("Register the participant", approve))
    registered, caps = told(s, "fc1")
    assert registered == "registered Ada <ada@example.org>, 36 y, 70 kg, consent=True"
    assert json.loads(caps.splitlines()[0]) == {"form": {}}  # declared, form mode only
    assert told(s, "fc2")[0] == "not registered: the user chose decline"
    assert [f.server for f in ada.forms] == ["registry"] and len(bob.forms) == 1
    assert ada.forms[0].tool == "register_participant" and 0 < ada.forms[0].timeout < 30
    notes = [e.message for e in of(events, "tool_progress")]
    assert any("server 'registry' asks you: Who is the participant?" in n for n in notes), notes


async def test_a_question_nobody_can_answer_is_cancelled_and_the_step_says_so(
    chainlit_session_class, scripted_server, tmp_path, lab_url
):
    s = scripted_server
    async with plugged_as_chainlit_does(lab_url) as client:
        session = agent_session(s, tmp_path, "fc")
        await session.connect_user_server("registry", client)
        s.queue("fc", ToolCalls([Call("register_participant", {})]), Text("enough"))
        s.queue("ans", Text("Not registered."))
        events = await collect(session.ask("Register the participant", approve))  # no asker
    assert told(s, "fc") == ["not registered: the user chose cancel"]
    notes = [e.message for e in of(events, "tool_progress")]
    assert any("nobody can answer in this run: cancelled" in n for n in notes), notes


async def test_a_caller_with_its_own_callback_keeps_it(chainlit_session_class, lab_url):
    seen: list[str] = []

    async def mine(context: Any, params: Any) -> Any:
        seen.append(params.message)
        return mcp.types.ElicitResult(action="decline")

    async with streamablehttp_client(lab_url) as (read, write, _):
        async with mcp.ClientSession(read, write, elicitation_callback=mine) as c:
            await c.initialize()
            assert c.elicitations is None
            result = await c.call_tool("register_participant", {})
    assert seen == ["Who is the participant?"]
    assert result.content[0].text == "not registered: the user chose decline"
