"""The agent's run made explicit (#22): deps through LangGraph's runtime context, typed exits,
and one model client for every model request (the titles' call included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from brainchat.agent.context import AgentContext
from brainchat.agent.exits import Exit
from brainchat.agent.graph import _graph
from brainchat.events import stream_events
from brainchat.testing.scripted_server import Text

from support import of, spec

SRC = Path(__file__).resolve().parents[1] / "src" / "brainchat"


def test_the_graph_takes_each_runs_deps_as_its_runtime_context_and_no_context_variable() -> None:
    assert _graph().builder.context_schema is AgentContext
    owners = [*(SRC / "agent").glob("*.py"), SRC / "chat.py", SRC / "llm.py"]
    owners.append(SRC / "modelclient.py")
    found = [
        f"{path.name}:{node.lineno}"
        for path in owners
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Name | ast.Attribute)
        and (node.id if isinstance(node, ast.Name) else node.attr) == "ContextVar"
    ]
    assert found == []  # deps, the run and the confirm hook reach the nodes explicitly


@pytest.mark.parametrize(
    ("reason", "kind"),
    [("timeout", "timeout"), ("loop", "loop"), ("context_full", "context_full"),
     ("iteration_limit", "iteration_limit"), ("error", "error")],
)  # fmt: skip
async def test_an_early_end_says_its_own_kind_and_only_an_error_ends_the_run(
    reason: str, kind: str
) -> None:
    state: dict = {}

    async def work() -> None:
        state.update(Exit(reason, "said", "do this", why="because").take(3))  # type: ignore[arg-type]

    events = [e async for e in stream_events(work)]
    assert [(e.verdict, e.reason, e.round) for e in of(events, "evaluation")] == [
        ("answer", "because", 3)
    ]
    [notice] = of(events, "notice")
    assert (notice.kind, notice.message, notice.hint) == (kind, "said", "do this")
    assert state["stop_reason"] == reason
    assert state["error"] == ("said" if reason == "error" else None)


async def test_a_title_request_takes_the_stream_options_fallback(scripted_server) -> None:
    """The titles' call goes through the one model client: a server that refuses
    stream_options (HTTP 400) is asked once more without them, and the title is written."""
    from brainchat.ui.titles import _write_title

    s = scripted_server
    s.reject_stream_options = True
    s.queue("title", Text("Alpha power in EEG"))
    await _write_title(spec(s, "title"), "thread-1", "What is alpha power?")
    sent = s.requests_for("title")
    assert [r.stream_options for r in sent] == [{"include_usage": True}, None]
    assert sent[-1].outcome == "ok"


async def test_two_runs_at_once_each_ask_their_own_user(scripted_server) -> None:
    """One compiled graph serves every run: each run's confirm hook travels in its own runtime
    context, so two users' approvals never cross (what the context variables used to ensure)."""
    import asyncio

    from langchain_core.tools import StructuredTool

    from brainchat.agent.graph import build_agent
    from brainchat.llm import make_chat_model
    from brainchat.testing.scripted_server import Call, ToolCalls
    from brainchat.tools.registry import set_flags

    from support import collect

    wiped: list[str] = []
    started = asyncio.Event()

    async def wipe(who: str) -> str:
        wiped.append(who)
        return f"wiped for {who}"

    tool = set_flags(
        StructuredTool.from_function(coroutine=wipe, name="wipe", description="destructive"),
        destructive=True,
    )
    s = scripted_server
    asked: dict[str, list[str]] = {"ada": [], "bob": []}

    def hook(user: str, answer: bool):
        async def confirm(name, args):
            asked[user].append(args["who"])
            if user == "ada":  # ada's run waits in her dialog until bob's run has asked too
                started.set()
                await asyncio.sleep(0)
            else:
                await started.wait()
            return answer

        return confirm

    runs = []
    for user, answer in (("ada", True), ("bob", False)):
        s.queue(f"fc-{user}", ToolCalls([Call("wipe", {"who": user})]), Text("done"))
        s.queue(f"ans-{user}", Text(f"answer for {user}"))
        agent = build_agent(
            make_chat_model(spec(s, f"fc-{user}"), "function_call"),
            make_chat_model(spec(s, f"ans-{user}"), "answer"),
            [tool],
        )
        runs.append(collect(agent.run("wipe it", confirm=hook(user, answer))))
    ada, bob = await asyncio.gather(*runs)
    assert asked == {"ada": ["ada"], "bob": ["bob"]}  # each hook asked by its own run only
    assert wiped == ["ada"]
    assert of(ada, "tool_finished")[0].status == "success"
    assert of(bob, "tool_finished")[0].status == "refused"
