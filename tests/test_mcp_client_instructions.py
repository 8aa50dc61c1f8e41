"""A server's `instructions` reach the function-call model's system prompt, bounded (#25)."""

from __future__ import annotations

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Text
from brainchat.tools.mcp import McpHub
from brainchat.usage import count_tokens
from mcp_servers.helpers import notes_config
from mcp_servers.study_notes import INSTRUCTIONS

from support import collect, of, spec


async def _system_of_first_request(server, *flags: str, window: int = 32_000) -> str:
    hub = McpHub([notes_config("notes", *flags)])
    await hub.start()
    try:
        assert hub.status()[0]["state"] == "connected", hub.status()
        fc, ans = spec(server, "fc", context_window=window), spec(server, "ans")
        agent = build_agent(
            make_chat_model(fc, "function_call"),
            make_chat_model(ans, "answer"),
            hub.toolset().tools,
            specs={"function_call": fc, "answer": ans},
        )
        server.queue("fc", Text("Nothing to call."))
        server.queue("ans", Text("Done."))
        events = await collect(agent.run("Which subjects are there?"))
        assert of(events, "run_finished")[0].reason == "answered"
    finally:
        await hub.close()
    first = server.requests_for("fc")[0].messages[0]
    assert first["role"] == "system"
    return str(first["content"])


async def test_server_instructions_are_in_the_function_call_system_prompt(scripted_server):
    system = await _system_of_first_request(scripted_server)
    assert "MCP server 'notes'" in system
    assert INSTRUCTIONS in system


async def test_long_instructions_are_cut_to_a_share_of_the_budget_with_a_note(scripted_server):
    window = 16_000
    system = await _system_of_first_request(scripted_server, "--long-instructions", window=window)
    assert system.count("PADDING-WORD") > 10  # the head is kept
    assert "FINAL-RULE" not in system  # the tail is not
    assert "[instructions of MCP server 'notes' cut to fit the context window" in system
    section = system[system.index("## MCP server 'notes'") :]
    assert count_tokens(section) <= window // 8
