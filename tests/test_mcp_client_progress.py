"""A server's progress notifications become the tool step's progress (its title), #25."""

from __future__ import annotations

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from mcp_servers.helpers import notes_config

from support import collect, of, spec


async def test_progress_notifications_are_tool_progress_events_of_the_call(scripted_server):
    s = scripted_server
    hub = McpHub([notes_config()])
    await hub.start()
    try:
        fc, ans = spec(s, "fc"), spec(s, "ans")
        agent = build_agent(
            make_chat_model(fc, "function_call"),
            make_chat_model(ans, "answer"),
            hub.toolset().tools,
            specs={"function_call": fc, "answer": ans},
        )
        s.queue("fc", ToolCalls([Call("count_trials", {})]), Text("Enough."))
        s.queue("ans", Text("120 trials."))
        events = await collect(agent.run("How many trials?"))
    finally:
        await hub.close()
    started = of(events, "tool_call_started")[0]
    progress = of(events, "tool_progress")
    assert [(p.message, round(p.fraction, 2)) for p in progress] == [
        ("counted S01", 0.33),
        ("counted S02", 0.67),
        ("counted S03", 1.0),
    ]
    assert {(p.call_id, p.name) for p in progress} == {(started.call_id, "count_trials")}
    finished = of(events, "tool_finished")[0]
    assert finished.status == "success"
    order = [e.type for e in events if e.type in ("tool_progress", "tool_finished")]
    assert order.index("tool_finished") > order.index("tool_progress")
