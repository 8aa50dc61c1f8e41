"""MCP tools driven through the agent graph by the scripted model server (real HTTP, real stdio)."""

from __future__ import annotations

import json

import pytest

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig, ToolOverride
from brainchat.tools.search import FixtureBackend, make_search_tool
from mcp_servers.helpers import lab_config, time_config

from support import collect, of, spec, text, write_fixture


@pytest.fixture
async def hub():
    """The FastMCP test server (read-only, `slow` limited to 1 s), mcp-server-time and a broken one."""
    hub = McpHub(
        [
            lab_config(read_only=True, tools={"slow": ToolOverride(timeout=1.0)}),
            time_config(read_only=True),
            McpServerConfig(name="ghost", command="brainchat-no-such-command-42"),
        ],
        backoff_base=0.0,  # restart at once every time (backoff has its own test)
    )
    await hub.start()
    yield hub
    await hub.close()


def agent_for(server, hub, tmp_path):
    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})
    toolset = hub.toolset(reserved_names={search.name})
    fc = make_chat_model(spec(server, "fc"), "function_call")
    ans = make_chat_model(spec(server, "ans"), "answer")
    return build_agent(fc, ans, [search, *toolset.tools])


async def test_one_turn_mixes_web_search_and_mcp_tools(scripted_server, hub, tmp_path):
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls(
            [
                Call("web_search", {"query": "EEGNet"}),
                Call("get_current_time", {"timezone": "UTC"}),
                Call("structured_weather", {"city": "Oslo"}),
            ]
        ),
        Text("I have enough."),
    )
    s.queue("ans", Text("EEGNet is compact [1]. It is sunny in Oslo."))
    events = await collect(agent_for(s, hub, tmp_path).run("EEGNet, the time, and Oslo weather?"))

    offered = {t["function"]["name"]: t["function"] for t in s.requests_for("fc")[0].tools}
    assert {"web_search", "get_current_time", "structured_weather", "add"} <= set(offered)
    assert offered["structured_weather"]["parameters"]["required"] == ["city"]
    started = {e.name: e.source for e in of(events, "tool_call_started")}
    assert started == {
        "web_search": "local",
        "get_current_time": "mcp:time",
        "structured_weather": "mcp:lab",
    }
    finished = {e.name: e for e in of(events, "tool_finished")}
    assert all(e.status == "success" for e in finished.values()), finished
    weather = finished["structured_weather"]
    assert weather.structured == {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny"}
    assert json.loads(finished["get_current_time"].content)["timezone"] == "UTC"
    tool_messages = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"]
    assert any('"conditions":"sunny"' in m["content"] for m in tool_messages)
    assert of(events, "run_finished")[0].reason == "answered"
    assert "sunny in Oslo" in text(events)


async def test_failing_mcp_calls_are_failed_steps_and_the_run_still_answers(
    scripted_server, hub, tmp_path
):
    s = scripted_server
    pid_before = (await hub.servers["lab"].call("pid", {}, 5)).content[0].text
    s.queue(
        "fc",
        ToolCalls([Call("crash", {})]),
        ToolCalls([Call("slow", {"seconds": 30})]),
        ToolCalls([Call("pid", {}), Call("fail", {"message": "no such montage"})]),
        Text("Enough."),
    )
    s.queue("ans", Text("The lab server recovered."))
    events = await collect(agent_for(s, hub, tmp_path).run("Exercise the lab server"))

    finished = of(events, "tool_finished")
    by_name = {e.name: e for e in finished}
    assert by_name["crash"].status == "error"
    assert "closed the connection during 'crash'" in by_name["crash"].error
    assert by_name["slow"].status == "error"
    assert "was cancelled after" in by_name["slow"].error  # #43: the session is kept
    assert by_name["pid"].status == "success" and by_name["pid"].content != pid_before
    assert by_name["fail"].status == "error" and "no such montage" in by_name["fail"].error
    tool_messages = [
        m["content"] for r in s.requests_for("fc") for m in r.messages if m["role"] == "tool"
    ]
    assert any(m.startswith("Error: MCP server 'lab'") and "restarted" in m for m in tool_messages)
    assert of(events, "run_finished")[0].reason == "answered"
    assert text(events) == "The lab server recovered."
    assert hub.status()[0]["restarts"] == 1  # after the crash; the hang is cancelled (#43)
    assert [r["state"] for r in hub.status()] == ["connected", "connected", "failed"]


async def test_the_agents_limit_outlasts_a_hung_servers_shutdown(hub):
    """A timed-out MCP call pings its server and, with no answer, closes it (up to SHUTDOWN_WAIT)
    before its error is raised: the agent's own limit must outlast both, or a busy machine turns
    "MCP server 'lab', tool 'slow' was cancelled after 1 s" into a bare "slow was stopped"."""
    from brainchat.tools.mcp_tools import SHUTDOWN_WAIT
    from brainchat.tools.registry import flags_of

    slow = next(t for t in hub.toolset().tools if t.name.endswith("slow"))
    assert flags_of(slow).timeout > 1.0 + SHUTDOWN_WAIT
