"""A server's notifications reach the agent and the user (#43): list_changed (tools, prompts,
resources) refreshes what is offered within the run's next request; log messages reach the open
call's step at the user's level and the app log, masked. Against tests/mcp_servers/changing_lab.py
(FastMCP, stdio)."""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path
from typing import Any

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools import mcp_notify
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig

from support import collect, of, spec

LAB = Path(__file__).parent / "mcp_servers" / "changing_lab.py"


def lab() -> McpServerConfig:
    return McpServerConfig(
        name="changing", command=sys.executable, args=[str(LAB)], destructive=False
    )


def agent_over(s: Any, hub: McpHub) -> Any:
    async def tools_now() -> list[Any]:
        await mcp_notify.settled(hub.servers.values())
        return hub.toolset().tools

    fc, ans = spec(s, "fc"), spec(s, "ans")
    return build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        hub.toolset().tools,
        specs={"function_call": fc, "answer": ans},
        tools_now=tools_now,
    )


def offered(request: Any) -> list[str]:
    return [t["function"]["name"] for t in request.tools or []]


async def test_a_tool_added_mid_call_is_offered_in_the_runs_next_request(scripted_server):
    s = scripted_server
    async with McpHub([lab()]) as hub:
        agent = agent_over(s, hub)
        s.queue(
            "fc",
            ToolCalls([Call("grow", {})]),
            ToolCalls([Call("late_tool", {"text": "hi"})]),
            Text("Enough."),
        )
        s.queue("ans", Text("Done."))
        events = await collect(agent.run("Grow, then use the new tool"))
        conn = hub.servers["changing"]
        prompts = [p.name for p in conn.prompts]
        resources = conn.resources_offered
    first, second = s.requests_for("fc")[:2]
    assert "late_tool" not in offered(first)
    assert "late_tool" in offered(second)
    finished = {e.name: e for e in of(events, "tool_finished")}
    assert finished["late_tool"].status == "success", finished["late_tool"]
    assert "late: hi" in finished["late_tool"].summary
    assert "late_prompt" in prompts and resources


async def test_an_unchanged_tool_keeps_its_object_so_built_tools_and_agents_stay():
    async with McpHub([lab()]) as hub:
        conn = hub.servers["changing"]
        before = {t.name: t for t in conn.tools}
        built = {t.name: t for t in hub.toolset().tools}
        await conn.call("grow", {}, 30)
        await mcp_notify.settled([conn])
        after = {t.name: t for t in conn.tools}
        rebuilt = {t.name: t for t in hub.toolset().tools}
    assert after["chatty"] is before["chatty"]
    assert rebuilt["chatty"] is built["chatty"]
    assert "late_tool" in rebuilt


async def test_log_messages_reach_the_step_at_the_users_level_and_the_log_masked(
    scripted_server, monkeypatch, caplog
):
    s = scripted_server
    monkeypatch.setenv(mcp_notify.LEVEL_ENV, "info")
    caplog.set_level(logging.DEBUG, logger="brainchat.tools.mcp")
    async with McpHub([lab()]) as hub:
        agent = agent_over(s, hub)
        s.queue("fc", ToolCalls([Call("chatty", {})]), Text("Enough."))
        s.queue("ans", Text("Done."))
        events = await collect(agent.run("Talk"))
    started = of(events, "tool_call_started")[0]
    notes = [p for p in of(events, "tool_progress") if "mcp_log" in p.data]
    assert [n.data["mcp_log"] for n in notes] == ["info", "warning", "error"]
    assert {n.call_id for n in notes} == {started.call_id}
    assert notes[2].message == "server 'changing' log [error] (lab): error: sensor 7 failed"
    assert "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234" not in notes[1].message
    logged = [r.getMessage() for r in caplog.records if "log (lab)" in r.getMessage()]
    assert len(logged) == 4 and "debug detail" in logged[0]
    assert not any("sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234" in line for line in logged)


async def test_the_default_level_shows_warnings_and_above(scripted_server, monkeypatch):
    s = scripted_server
    monkeypatch.delenv(mcp_notify.LEVEL_ENV, raising=False)
    async with McpHub([lab()]) as hub:
        agent = agent_over(s, hub)
        s.queue("fc", ToolCalls([Call("chatty", {})]), Text("Enough."))
        s.queue("ans", Text("Done."))
        events = await collect(agent.run("Talk"))
    levels = [p.data["mcp_log"] for p in of(events, "tool_progress") if "mcp_log" in p.data]
    assert levels == ["warning", "error"]


async def test_a_conversations_run_offers_the_added_tool_in_its_next_request(
    scripted_server, tmp_path
):
    """The session's wiring (as the page sets it up): the configured servers' tools read again."""
    from brainchat.session import Session
    from brainchat.settings import Settings

    s = scripted_server
    session = Session(
        Settings(
            function_call_model=spec(s, "fc"),
            answer_model=spec(s, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
        )
    )
    async with McpHub([lab()]) as hub:
        session.use_configured_servers(lambda: hub.servers, hub.toolset)
        session.use_configured_tools(hub.toolset())
        s.queue(
            "fc",
            ToolCalls([Call("grow", {})]),
            ToolCalls([Call("late_tool", {"text": "x"})]),
            Text("Enough."),
        )
        s.queue("ans", Text("Done."))
        events = await collect(session.ask("Grow, then use it", confirm=approve))
        names = session.toolset().names()
    assert "late_tool" in offered(s.requests_for("fc")[1])
    assert {e.name: e.status for e in of(events, "tool_finished")}["late_tool"] == "success"
    assert "late_tool" in names


async def approve(*args: Any, **kwargs: Any) -> bool:
    return True


async def test_a_subscribed_resources_update_reaches_its_subscriber_who_reads_it_again():
    import asyncio

    from brainchat.tools import mcp_resources

    got: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    async with McpHub([lab()]) as hub:
        conn = hub.servers["changing"]

        async def updated(uri: str) -> None:
            got.put_nowait((uri, (await mcp_resources.read(conn, uri)).text))

        before = (await conn.call("subscriptions", {}, 30)).content[0].text  # type: ignore[union-attr]
        assert await mcp_notify.subscribe(conn, "lab://counter", updated)
        assert await mcp_notify.subscribe(conn, "lab://counter", updated)  # a second page
        after = (await conn.call("subscriptions", {}, 30)).content[0].text  # type: ignore[union-attr]
        await conn.call("bump", {}, 30)
        first = await asyncio.wait_for(got.get(), 20)
        second = await asyncio.wait_for(got.get(), 20)
    assert (before, after) == ("none", "lab://counter")
    assert first == second == ("lab://counter", "count=1")


async def test_a_server_without_subscriptions_is_not_subscribed():
    from mcp_servers.helpers import notes_config

    async def updated(uri: str) -> None:
        raise AssertionError("no update can come")

    async with McpHub([notes_config()]) as hub:
        assert not await mcp_notify.subscribe(hub.servers["notes"], "notes://protocol", updated)


async def test_a_server_that_logs_is_asked_for_the_users_level(monkeypatch):
    monkeypatch.setenv(mcp_notify.LEVEL_ENV, "error")
    async with McpHub([lab()]) as hub:
        level = (await hub.servers["changing"].call("log_level", {}, 30)).content[0].text  # type: ignore[union-attr]
    assert level == "error"


async def test_a_restarted_server_is_subscribed_again_before_the_next_request():
    async def updated(uri: str) -> None:
        pass

    async with McpHub([lab()]) as hub:
        conn = hub.servers["changing"]

        async def subscriptions() -> str:
            return (await conn.call("subscriptions", {}, 30)).content[0].text  # type: ignore[union-attr]

        assert await mcp_notify.subscribe(conn, "lab://counter", updated)
        with contextlib.suppress(Exception):
            await conn.call("crash", {}, 30)
        after_restart = await subscriptions()  # the call restarts it: a new process
        await mcp_notify.settled([conn])  # asked before each model request
        again = await subscriptions()
    assert (after_restart, again) == ("none", "lab://counter")


async def test_a_subscriber_that_fails_is_told_no_more():
    import asyncio

    told: list[str] = []

    async def gone(uri: str) -> None:
        told.append("gone")
        raise RuntimeError("the page is closed")

    async def kept(uri: str) -> None:
        told.append("kept")

    async with McpHub([lab()]) as hub:
        conn = hub.servers["changing"]
        await mcp_notify.subscribe(conn, "lab://counter", gone)
        await mcp_notify.subscribe(conn, "lab://counter", kept)
        for expected in (2, 3):  # both told, then only the one still there
            await conn.call("bump", {}, 30)
            for _ in range(400):  # a condition, not a time: the update comes after the result
                if len(told) >= expected:
                    break
                await asyncio.sleep(0.05)
        watching = mcp_notify.notices_of(conn).subscribers("lab://counter")
    assert sorted(told) == ["gone", "kept", "kept"]
    assert watching == 1
