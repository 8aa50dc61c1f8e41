"""What #15 shares per process instead of per session: tool schemas, the compiled graph, and
the streamed chunks langchain reads as dicts. Behaviour only: the same schemas, the same events,
sessions that stay apart."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.utils.function_calling import convert_to_openai_tool

from brainchat.agent.graph import build_agent
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools import schemas
from brainchat.tools.registry import ToolSet, set_flags

from support import collect, of, spec, text


def test_two_sessions_tools_share_one_conversion_with_the_same_result(tmp_path: Path) -> None:
    first = build_eeg_tools(Study(tmp_path))
    second = build_eeg_tools(Study(tmp_path))  # new objects, as every new session builds
    for tool in first:
        schemas.openai_schema(tool)
    hits = schemas.stats["hits"]
    for a, b in zip(first, second, strict=True):
        assert schemas.openai_schema(b) == convert_to_openai_tool(a)
    assert schemas.stats["hits"] - hits == len(second)  # none converted again


def test_a_cached_schema_cannot_be_changed_through_a_copy(tmp_path: Path) -> None:
    tool = build_eeg_tools(Study(tmp_path))[0]
    schema = schemas.openai_schema(tool)
    schema["function"]["name"] = "changed"
    schema["function"]["parameters"]["properties"].clear()
    assert schemas.openai_schema(tool) == convert_to_openai_tool(tool)
    rows = ToolSet([tool]).describe()
    rows[0]["args_schema"]["properties"].clear()
    assert ToolSet([tool]).describe()[0]["args_schema"]["properties"]


def test_tools_that_differ_get_their_own_schema() -> None:
    from langchain_core.tools import StructuredTool

    async def one(x: int = 0) -> str:
        return "1"

    async def two(y: str = "") -> str:
        return "2"

    a = StructuredTool.from_function(coroutine=one, name="t", description="first")
    b = StructuredTool.from_function(coroutine=two, name="t", description="first")
    c = set_flags(StructuredTool.from_function(coroutine=one, name="t", description="other"))
    mcp = StructuredTool(name="t", description="d", args_schema={"type": "object",
                         "properties": {"q": {"type": "string"}}}, coroutine=one)  # fmt: skip
    got = [schemas.openai_schema(t) for t in (a, b, c, mcp)]
    assert got == [convert_to_openai_tool(t) for t in (a, b, c, mcp)]
    assert len({str(g) for g in got}) == 4


async def test_agents_share_one_graph_and_concurrent_runs_stay_apart(scripted_server) -> None:
    from langchain_core.tools import StructuredTool

    def agent(tag: str):
        async def lookup(x: int = 0) -> str:
            return f"result of {tag}"

        tool = set_flags(
            StructuredTool.from_function(coroutine=lookup, name=f"lookup_{tag}", description=tag),
            read_only=True,
        )
        fc = make_chat_model(spec(scripted_server, f"fc-{tag}"), "function_call")
        ans = make_chat_model(spec(scripted_server, f"ans-{tag}"), "answer")
        return build_agent(fc, ans, [tool])

    a, b = agent("a"), agent("b")
    assert a.graph is b.graph  # compiled once per process
    for tag in ("a", "b"):
        scripted_server.queue(f"fc-{tag}", ToolCalls([Call(f"lookup_{tag}", {"x": 1})]))
        scripted_server.queue(f"fc-{tag}", Text("done"))
        scripted_server.queue(f"ans-{tag}", Text(f"answer {tag}", token_delay=0.01))
    runs = await asyncio.gather(collect(a.run("qa")), collect(b.run("qb")))
    for tag, events in zip(("a", "b"), runs, strict=True):
        assert text(events) == f"answer {tag}"
        assert [e.name for e in of(events, "tool_finished")] == [f"lookup_{tag}"]
        assert of(events, "run_started")[0].tools == [f"lookup_{tag}"]


async def test_streamed_chunks_keep_reasoning_tool_calls_and_usage(scripted_server) -> None:
    fc = make_chat_model(spec(scripted_server, "fc"), "function_call")
    fc_tools = fc.bind_tools([{"type": "function", "function": {"name": "f", "description": "f",
                               "parameters": {"type": "object", "properties": {}}}}])  # fmt: skip
    scripted_server.queue(
        "fc", ToolCalls([Call("f", {"a": 1}), Call("f", {"b": 2})], reasoning="think first")
    )
    reply = None
    reasoning = []
    async for chunk in fc_tools.astream("hi"):
        reasoning.append(chunk.additional_kwargs.get("reasoning_content") or "")
        reply = chunk if reply is None else reply + chunk
    assert reply is not None
    assert "".join(reasoning).replace(" ", "") == "thinkfirst"
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("f", {"a": 1}), ("f", {"b": 2})]
    assert reply.usage_metadata and reply.usage_metadata["output_tokens"] > 0


def test_models_share_a_client_per_event_loop_and_skip_the_platform_trip(scripted_server) -> None:
    """Models built on one event loop share one HTTP client (keep-alive across sessions); a later
    loop gets its own, so it never reuses a closed loop's connections; once one model has asked,
    a new client knows the platform header without a trip to a worker thread."""
    scripted_server.set_default(None, Text("ok"))

    async def two_models_answer() -> tuple[object, object, object]:
        one, two = (make_chat_model(spec(scripted_server, "m"), role) for role in ("a", "b"))
        replies = await asyncio.gather(one.ainvoke("hi"), two.ainvoke("hi"))
        assert [r.content for r in replies] == ["ok", "ok"]
        later = make_chat_model(spec(scripted_server, "m"), "c").root_async_client
        return one.root_async_client._client, two.root_async_client._client, later

    first, same, _ = asyncio.run(two_models_answer())
    assert first is same
    other, _, later = asyncio.run(two_models_answer())
    assert other is not first
    assert later._platform is not None  # type: ignore[attr-defined]
