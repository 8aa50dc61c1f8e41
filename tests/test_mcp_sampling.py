"""A server asks the client's model mid-call (MCP sampling, #43): served by the run's
function-call model after the run's user approves it for that server, its tokens in the run's
usage, shown as a step; denied, or with nobody to ask, the server gets an error. Against
tests/mcp_servers/sampling_lab.py (FastMCP, stdio) and the scripted model server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools import mcp_sampling
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig
from brainchat.tools.mcp_elicit_route import answering

from support import collect, of, spec

LAB = Path(__file__).parent / "mcp_servers" / "sampling_lab.py"


def lab() -> McpServerConfig:
    return McpServerConfig(name="sampler", command=sys.executable, args=[str(LAB)], read_only=True)


class Approver:
    def __init__(self, *decisions: mcp_sampling.Decision):
        self.decisions = list(decisions)
        self.asked: list[mcp_sampling.Request] = []

    async def __call__(self, request: mcp_sampling.Request) -> mcp_sampling.Decision:
        self.asked.append(request)
        return self.decisions.pop(0)


def agent_over(s: Any, hub: McpHub) -> Any:
    fc, ans = spec(s, "fc"), spec(s, "ans")
    return build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        hub.toolset().tools,
        specs={"function_call": fc, "answer": ans},
    )


async def run(s: Any, approver: Any, *model_replies: Any) -> list[Any]:
    async with McpHub([lab()]) as hub:
        agent = agent_over(s, hub)
        s.queue("fc", ToolCalls([Call("summarise", {"text": "mu rhythm over C3"})]), *model_replies)
        s.queue("ans", Text("Done."))
        with answering(None), mcp_sampling.approving(approver):
            return await collect(agent.run("Summarise it"))


async def test_an_approved_request_is_served_by_the_runs_model_in_a_step_and_counted(
    scripted_server,
):
    s = scripted_server
    approver = Approver("once")
    events = await run(s, approver, Text("Mu ERD at C3."), Text("Enough."))
    asked = approver.asked[0]
    assert (asked.server, asked.tool, asked.max_tokens) == ("sampler", "summarise", 64)
    assert asked.messages == [("user", "Summarise: mu rhythm over C3")]
    sampled = s.requests_for("fc")[1]  # the sampling request, between the run's two rounds
    assert sampled.messages[0] == {"role": "system", "content": "You write one-line summaries."}
    assert sampled.params.get("max_completion_tokens") == 64 and not sampled.tools
    steps = {e.name: e for e in of(events, "tool_finished")}
    assert steps["sampling (sampler)"].summary == "Mu ERD at C3."
    assert steps["summarise"].summary.startswith("summary from fc: Mu ERD at C3.")
    fc_row = next(r for r in of(events, "stats")[0].rows if r.role == "function_call")
    assert fc_row.calls == 3  # two rounds and the sampling request


async def test_a_denied_request_returns_an_error_to_the_server_and_asks_no_model(
    scripted_server,
):
    s = scripted_server
    events = await run(s, Approver("deny"), Text("Enough."))
    summary = {e.name: e for e in of(events, "tool_finished")}["summarise"].summary
    assert summary.startswith("refused: the user denied the sampling request (-1)")
    assert len(s.requests_for("fc")) == 2  # no sampling request reached the model


async def test_a_run_nobody_can_approve_refuses_and_its_step_says_so(scripted_server):
    s = scripted_server
    events = await run(s, None, Text("Enough."))
    summary = {e.name: e for e in of(events, "tool_finished")}["summarise"].summary
    assert "nobody can approve sampling in this run" in summary
    notes = [p.message for p in of(events, "tool_progress") if p.data.get("sampling")]
    assert notes and "nobody can approve" in notes[0]


async def test_a_request_outside_a_call_of_a_run_is_refused():
    async with McpHub([lab()]) as hub:
        result = await hub.servers["sampler"].call("summarise", {"text": "x"}, 30)
        caps = await hub.servers["sampler"].call("capabilities", {}, 30)
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("refused: the calling run has no model to serve sampling")
    assert "sampling=True" in caps.content[0].text  # type: ignore[union-attr]


async def test_a_plugged_servers_request_is_served_as_a_configured_ones(
    scripted_server, tmp_path, monkeypatch
):
    """The plug button's session (Chainlit builds `mcp.ClientSession(..., sampling_callback=None)`)
    declares sampling and routes it to the calling run's user and model."""
    import mcp
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from brainchat.session import Session
    from brainchat.settings import Settings
    from brainchat.tools.mcp_client_session import use_for_plugged_servers

    monkeypatch.setattr(mcp, "ClientSession", mcp.ClientSession)
    use_for_plugged_servers()
    s = scripted_server
    session = Session(
        Settings(
            function_call_model=spec(s, "fc"),
            answer_model=spec(s, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
        )
    )
    params = StdioServerParameters(command=sys.executable, args=[str(LAB)])
    approver = Approver("once")
    async with stdio_client(params) as (read, write):
        async with mcp.ClientSession(
            read_stream=read, write_stream=write, sampling_callback=None
        ) as c:
            await c.initialize()
            await session.connect_user_server("mine", c)
            s.queue(
                "fc",
                ToolCalls([Call("summarise", {"text": "beta at C4"})]),
                Text("Beta rebound."),
                Text("Enough."),
            )
            s.queue("ans", Text("Done."))

            async def yes(*args: Any, **kwargs: Any) -> bool:
                return True  # a plugged server's tool asks before its first use

            with answering(None), mcp_sampling.approving(approver):
                events = await collect(session.ask("Summarise", confirm=yes))
    assert approver.asked[0].server == "mine"
    summary = {e.name: e for e in of(events, "tool_finished")}["summarise"].summary
    assert summary.startswith("summary from fc: Beta rebound.")


def cli_setup(s: Any, tmp_path: Path, sampled: str | None) -> dict[str, str]:
    """`brainchat ask` with the sampling lab configured (read-only: its tools ask nothing)."""
    import json
    import os

    from support import spec_json

    lab_entry = {"command": sys.executable, "args": [str(LAB)], "readOnly": True, "timeout": 280}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"sampler": lab_entry}}))
    call = ToolCalls([Call("summarise", {"text": "mu rhythm over C3"})])
    s.queue("fc", call, *([Text(sampled)] if sampled else []), Text("Enough."))
    s.queue("ans", Text("Done."))
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_"))
    }
    return {
        **clean,
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "AGENT_MAX_EXECUTION_TIME": "300",
        "MCP_CONFIG": str(tmp_path / "mcp.json"),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }


def test_brainchat_ask_without_a_terminal_denies_in_one_line(scripted_server, tmp_path):
    import subprocess

    from test_mcp_client_elicitation_cli import BIN

    out = subprocess.run(
        [str(BIN), "ask", "--mode", "agent", "Summarise it"],
        env=cli_setup(scripted_server, tmp_path, None),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,  # not a terminal
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    told = [line for line in out.stderr.splitlines() if "asked to use the model" in line]
    assert told == [
        "! MCP server 'sampler' asked to use the model during summarise (sampling), which cannot "
        "be approved without a terminal: denied. Run `brainchat ask` in a terminal, or use the "
        "web app, to allow it."
    ]
    assert "refused: the user denied the sampling request (-1)" in out.stdout


def test_brainchat_ask_in_a_terminal_asks_and_serves_it(scripted_server, tmp_path):
    import os

    from test_mcp_client_elicitation_cli import start_in_a_pty

    env = cli_setup(scripted_server, tmp_path, "Mu ERD at C3.")
    proc, term = start_in_a_pty(env, tmp_path)
    try:
        term.expect("? MCP server 'sampler' asks to use the model (sampling) during summarise")
        term.expect("user: Summarise: mu rhythm over C3")
        term.answer("Allow? [o]nce / [a]lways for this server / [d]eny: ", "x")  # asked again
        term.answer("Allow? [o]nce / [a]lways for this server / [d]eny: ", "o")
        stdout, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
        os.close(term.fd)
    assert proc.returncode == 0
    assert "summary from fc: Mu ERD at C3." in stdout
