"""A server the user plugs in (Chainlit opens its session) gets what a configured one gets (#43):
its list_changed (tools, prompts, resources) refreshes what the agent and the page offer within
the run's next request, and an attached resource it offers subscriptions for is subscribed. The
session is built as `chainlit.server.connect_mcp` builds it for a stdio server; the servers are
real FastMCP ones (tests/mcp_servers/plugged_lab.py, changing_lab.py)."""

from __future__ import annotations

import asyncio
import contextvars
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
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools import mcp_notify, mcp_resources
from brainchat.tools.mcp_client_session import PluggedSession, use_for_plugged_servers

from support import collect, of, spec, wait_until

SERVERS = Path(__file__).parent / "mcp_servers"
PLUGGED_LAB, CHANGING_LAB = SERVERS / "plugged_lab.py", SERVERS / "changing_lab.py"


@pytest.fixture(autouse=True)
def chainlit_session_class(monkeypatch):
    """`mcp.ClientSession` as the app leaves it (restored after the test)."""
    monkeypatch.setattr(mcp, "ClientSession", mcp.ClientSession)
    use_for_plugged_servers()


@asynccontextmanager
async def plugged(script: Path) -> AsyncIterator[Any]:
    """The session Chainlit's plug button opens for a stdio server."""
    from mcp import ClientSession  # looked up at connect, as chainlit.server.connect_mcp does

    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read_stream=read, write_stream=write, sampling_callback=None) as c:
            await c.initialize()
            assert isinstance(c, PluggedSession)
            yield c


def agent_session(server: Any, tmp_path: Path) -> Session:
    return Session(
        Settings(
            function_call_model=spec(server, "fc"),
            answer_model=spec(server, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
        )
    )


def offered(request: Any) -> list[str]:
    return [t["function"]["name"] for t in request.tools or []]


async def always(*args: Any, **kwargs: Any) -> str:
    return "always"  # the user approves each tool for this conversation


async def test_a_tool_a_plugged_server_adds_is_offered_in_the_runs_next_request(
    scripted_server, tmp_path
):
    s = scripted_server
    session = agent_session(s, tmp_path)
    async with plugged(PLUGGED_LAB) as client:
        await session.connect_user_server("lab", client)
        assert not session.mcp_servers()["lab"].resources_offered
        s.queue(
            "fc",
            ToolCalls([Call("grow", {})]),
            ToolCalls([Call("late_tool", {"text": "hi"})]),
            Text("Enough."),
        )
        s.queue("ans", Text("Done."))
        events = await collect(session.ask("Grow, then use the new tool", confirm=always))
        server = session.mcp_servers()["lab"]
        commands = [c.id for c in session.mcp_prompt_commands()]
        names = session.toolset().names()
    first, second = s.requests_for("fc")[:2]
    assert "late_tool" not in offered(first)
    assert "late_tool" in offered(second)
    finished = {e.name: e for e in of(events, "tool_finished")}
    assert finished["late_tool"].status == "success", finished["late_tool"]
    assert "late: hi" in finished["late_tool"].summary
    assert "mcp.lab.late_prompt" in commands  # the slash-command menu's list
    assert server.resources_offered  # the agent's resource tools reach it now
    assert {"late_tool", "mcp_list_resources", "mcp_read_resource"} <= set(names)


async def test_an_unchanged_tool_keeps_its_object_and_approval_a_changed_one_asks_again(
    scripted_server, tmp_path
):
    """A tool whose definition changed is not the tool the user approved (a server could turn a
    harmless tool into a destructive one): it asks again; the unchanged ones do not."""
    s = scripted_server
    session = agent_session(s, tmp_path)
    async with plugged(PLUGGED_LAB) as client:
        before = {t.name: t for t in await session.connect_user_server("lab", client)}
        s.queue("fc", ToolCalls([Call("steady", {}), Call("shifty", {})]), Text("Enough."))
        s.queue("ans", Text("Done."))
        await collect(session.ask("Use both", confirm=always))
        assert {("lab", "steady"), ("lab", "shifty")} <= session.approved
        await client.call_tool("grow", {})
        await session.toolbox.tools_now(session.settings, session.study)  # as a run's request
        after = {t.name: t for t in session.toolset().tools}
    assert after["steady"] is before["steady"]
    assert after["shifty"] is not before["shifty"]
    assert after["shifty"].description.startswith("Now deletes")
    assert ("lab", "steady") in session.approved
    assert ("lab", "shifty") not in session.approved


async def test_a_prompts_change_is_told_to_the_page_in_its_own_context(tmp_path, scripted_server):
    """ui/mcp_plug passes `follow`: the page's menu is sent again, in that page's context."""
    page: contextvars.ContextVar[str] = contextvars.ContextVar("page", default="none")
    told: list[tuple[str, str]] = []

    async def follow(kind: str) -> None:
        told.append((kind, page.get()))

    session = agent_session(scripted_server, tmp_path)
    async with plugged(PLUGGED_LAB) as client:
        page.set("ana's page")
        await session.connect_user_server("lab", client, follow=follow)
        page.set("elsewhere")
        await client.call_tool("grow", {})
        await wait_until(lambda: len(told) == 3, what="three lists told")
    assert sorted(told) == [(k, "ana's page") for k in ("prompts", "resources", "tools")]


async def test_a_resource_attached_from_a_plugged_server_is_subscribed_and_updated(
    scripted_server, tmp_path
):
    """What ui/mcp_resources.attach does with the server `session.mcp_servers()` gives it."""
    got: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    session = agent_session(scripted_server, tmp_path)
    async with plugged(CHANGING_LAB) as client:
        await session.connect_user_server("changing", client)
        server = session.mcp_servers()["changing"]

        async def updated(uri: str) -> None:
            got.put_nowait((uri, (await mcp_resources.read(server, uri)).text))

        assert mcp_notify.can_subscribe(server)
        assert await mcp_notify.subscribe(server, "lab://counter", updated)
        watched = (await client.call_tool("subscriptions", {})).content[0].text  # type: ignore[union-attr]
        await client.call_tool("bump", {})
        update = await asyncio.wait_for(got.get(), 20)
    assert watched == "lab://counter"
    assert update == ("lab://counter", "count=1")


async def test_a_plain_session_is_not_subscribed(scripted_server, tmp_path):
    """A session brainchat does not hear (someone else's ClientSession) is never subscribed:
    its updates could not reach the attachment."""
    from mcp.client.session import ClientSession

    params = StdioServerParameters(command=sys.executable, args=[str(CHANGING_LAB)])
    session = agent_session(scripted_server, tmp_path)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await session.connect_user_server("changing", client)
        assert not mcp_notify.can_subscribe(session.mcp_servers()["changing"])


async def test_a_plugged_session_given_its_own_message_handler_is_not_subscribed(
    scripted_server, tmp_path
):
    """A caller that hears the server itself keeps it: brainchat's Notices hear nothing there."""

    async def own(message: Any) -> None:
        pass

    params = StdioServerParameters(command=sys.executable, args=[str(CHANGING_LAB)])
    session = agent_session(scripted_server, tmp_path)
    async with stdio_client(params) as (read, write):
        async with PluggedSession(read, write, message_handler=own) as client:
            await client.initialize()
            await session.connect_user_server("changing", client)
            assert not mcp_notify.can_subscribe(session.mcp_servers()["changing"])
