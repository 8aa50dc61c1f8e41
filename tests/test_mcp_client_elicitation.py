"""A server asks the user for input mid-call (MCP elicitation, form mode, #25): the run's asker
answers it, over stdio and streamable HTTP; the answer is checked against the requested schema;
a bad schema is declined, a run nobody can answer cancels, and the step says what happened."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools import mcp_elicit_route
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig
from brainchat.tools.mcp_elicit import Form, Reply
from brainchat.tools.mcp_elicit_route import answering
from mcp_servers.helpers import http_lab

from support import collect, of, spec

LAB = Path(__file__).parent / "mcp_servers" / "elicit_lab.py"
PERSON = {"name": "Ada", "email": "ada@example.org", "age": "36", "consent": "yes"}


def lab(**kwargs: Any) -> McpServerConfig:
    return McpServerConfig(name="elicit", command=sys.executable, args=[str(LAB)], **kwargs)


class Scripted:
    """An asker that gives the queued replies in turn and keeps the forms it was shown."""

    def __init__(self, *replies: Reply):
        self.replies = list(replies)
        self.forms: list[Form] = []

    async def __call__(self, form: Form) -> Reply:
        self.forms.append(form)
        return self.replies.pop(0)


async def call(hub: McpHub, tool: str, asker: Any) -> str:
    with answering(asker):
        result = await hub.servers["elicit"].call(tool, {}, 30)
    assert not result.isError, result.content
    return result.content[0].text  # type: ignore[union-attr]


async def approve(name: str, args: dict[str, Any]) -> bool:
    return True  # the tools ask before their first use; the user approves


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_accepted_answers_reach_the_servers_tool(transport):
    with http_lab("--http", LAB) if transport == "http" else _nothing() as url:
        config = lab() if url is None else McpServerConfig(name="elicit", transport="http", url=url)
        async with McpHub([config]) as hub:
            asker = Scripted(Reply("accept", PERSON))
            text = await call(hub, "register_participant", asker)
            caps = await call(hub, "client_elicitation", None)
    assert text == "registered Ada <ada@example.org>, 36 y, 70 kg, consent=True"
    form = asker.forms[0]
    assert (form.server, form.message, form.tool) == (
        "elicit",
        "Who is the participant?",
        "register_participant",
    )
    assert [(f.name, f.kind, f.required) for f in form.fields] == [
        ("name", "string", True),
        ("email", "string", True),
        ("age", "integer", True),
        ("weight", "number", False),
        ("consent", "boolean", True),
    ]
    assert form.fields[1].format == "email" and form.fields[2].minimum == 18
    assert 0 < form.timeout < 30
    assert json.loads(caps) == {"form": {}}  # form mode only: brainchat shows no URL-mode links


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


async def test_decline_cancel_and_enum_answers():
    answer = {"band": "Beta (13-30 Hz)", "side": "C3", "session_date": "2026-11-25"}
    async with McpHub([lab()]) as hub:
        declined = await call(hub, "register_participant", Scripted(Reply("decline")))
        cancelled = await call(hub, "register_participant", Scripted(Reply("cancel")))
        picked = json.loads(await call(hub, "pick_band", Scripted(Reply("accept", answer))))
    assert declined == "not registered: the user chose decline"
    assert cancelled == "not registered: the user chose cancel"
    assert picked == {
        "action": "accept",
        "content": {"band": "beta", "side": "C3", "session_date": "2026-11-25"},
    }  # labels become the server's values; an empty optional field is left out


async def test_content_that_breaks_the_schema_is_never_sent_as_accept(caplog):
    bad = {**PERSON, "age": "12", "email": "not-an-address", "api_password": "x"}
    async with McpHub([lab()]) as hub:
        with caplog.at_level(logging.WARNING):
            text = await call(hub, "register_participant", Scripted(Reply("accept", bad)))
    assert text == "not registered: the user chose decline"
    assert "invalid ['age', 'email']" in caplog.text
    assert "not-an-address" not in caplog.text and "Ada" not in caplog.text  # no answer logged


async def test_a_schema_the_specification_forbids_is_declined_with_the_reason_logged(caplog):
    asker = Scripted()
    async with McpHub([lab()]) as hub:
        with caplog.at_level(logging.WARNING):
            text = json.loads(await call(hub, "nested_form", asker))
        assert hub.servers["elicit"].state == "connected"
    assert text == {"action": "decline", "content": None}
    assert asker.forms == []  # the user is never shown it
    assert "bad schema: property 'address' has type 'object'" in caplog.text


async def test_an_agent_run_notes_the_question_and_the_answer_in_the_step(scripted_server):
    s = scripted_server
    answer = {"band": "mu", "side": "C4", "api_password": "hunter2-secret"}
    async with McpHub([lab()]) as hub:
        fc, ans = spec(s, "fc"), spec(s, "ans")
        agent = build_agent(
            make_chat_model(fc, "function_call"),
            make_chat_model(ans, "answer"),
            hub.toolset().tools,
            specs={"function_call": fc, "answer": ans},
        )
        s.queue("fc", ToolCalls([Call("pick_band", {})]), Text("Enough."))
        s.queue("ans", Text("Mu over C4."))
        with answering(Scripted(Reply("accept", answer))):
            events = await collect(agent.run("Which band?", confirm=approve))
    started = of(events, "tool_call_started")[0]
    notes = [p for p in of(events, "tool_progress") if p.data.get("elicitation")]
    assert [n.call_id for n in notes] == [started.call_id] * 2
    assert notes[0].message == "server 'elicit' asks you: Which band should I analyse?"
    assert "you accepted (Frequency band: mu; Hemisphere: C4; Archive password: •••)" in (
        notes[1].message
    )
    finished = of(events, "tool_finished")[0]
    assert finished.status == "success" and '"side":"C4"' in finished.summary
    assert all("hunter2" not in json.dumps(e.to_dict(), default=str) for e in notes)


async def test_a_run_nobody_can_answer_cancels_and_its_step_says_so(scripted_server):
    s = scripted_server
    async with McpHub([lab()]) as hub:
        fc, ans = spec(s, "fc"), spec(s, "ans")
        agent = build_agent(
            make_chat_model(fc, "function_call"),
            make_chat_model(ans, "answer"),
            hub.toolset().tools,
            specs={"function_call": fc, "answer": ans},
        )
        s.queue("fc", ToolCalls([Call("register_participant", {})]), Text("Enough."))
        s.queue("ans", Text("Not registered."))
        events = await collect(agent.run("Register it", confirm=approve))  # no asker bound
    notes = [p.message for p in of(events, "tool_progress") if p.data.get("elicitation")]
    assert notes == [
        "server 'elicit' asked for input (Who is the participant?), but nobody can answer "
        "in this run: cancelled"
    ]
    assert "the user chose cancel" in of(events, "tool_finished")[0].summary


async def test_a_form_left_open_past_the_calls_time_is_cancelled(monkeypatch):
    # The form gets the call's time less the margin: a margin of 27 s of a 30 s call closes the
    # form after 3 s and leaves the server 27 s to answer `cancel`, however loaded the machine.
    monkeypatch.setattr(mcp_elicit_route, "MARGIN", 27.0)
    never = asyncio.Event()

    async def waits_forever(form: Form) -> Reply:
        await never.wait()
        raise AssertionError("unreachable")

    async with McpHub([lab()]) as hub:
        with answering(waits_forever):
            result = await hub.servers["elicit"].call("register_participant", {}, 30)
        assert hub.servers["elicit"].state == "connected"  # answered in time: no restart
    assert result.content[0].text == "not registered: the user chose cancel"  # type: ignore[union-attr]


async def test_calls_of_two_runs_at_once_ask_neither(caplog):
    asked: list[str] = []

    def asker(who: str) -> Any:
        async def ask(form: Form) -> Reply:
            asked.append(who)
            return Reply("accept", PERSON)

        return ask

    async with McpHub([lab()]) as hub:
        conn = hub.servers["elicit"]
        with conn.elicitations.calling("other", 30), caplog.at_level(logging.WARNING):
            # a call of another run (nobody to ask there) is open while this one asks
            text = await call(hub, "register_participant", asker("a"))
    assert text == "not registered: the user chose cancel" and asked == []
    assert "calls of several runs were open" in caplog.text


async def test_an_open_form_does_not_hold_the_servers_other_calls():
    opened, other_done = asyncio.Event(), asyncio.Event()

    async def slow_user(form: Form) -> Reply:
        opened.set()
        await other_done.wait()  # the user answers only after the other call has its result
        return Reply("accept", PERSON)

    async with McpHub([lab()]) as hub:
        conn = hub.servers["elicit"]
        with answering(slow_user):
            asking = asyncio.create_task(conn.call("register_participant", {}, 60))
        await opened.wait()
        other = await conn.call("client_elicitation", {}, 20)  # another run's call, meanwhile
        other_done.set()
        asked = await asking
    assert json.loads(other.content[0].text) == {"form": {}}  # type: ignore[union-attr]
    assert asked.content[0].text.startswith("registered Ada")  # type: ignore[union-attr]
