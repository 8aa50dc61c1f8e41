"""What #22's overhead bench found per model round-trip, kept as behaviour: an agent turn runs on
its event loop (no trip to a worker thread per routing decision), and a streamed reply merged
once at its end is the same message the chunk-by-chunk sum made."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.tools import StructuredTool

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.modelclient import _merged
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.registry import set_flags

from support import collect, of, spec, text


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting what is handed to its threads."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted: list[str] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted.append(repr(getattr(fn, "func", fn)))
        return super().submit(fn, *args, **kwargs)


async def test_an_agent_turn_makes_no_trip_to_a_worker_thread(scripted_server) -> None:
    async def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"result for {topic}"

    tool = set_flags(
        StructuredTool.from_function(coroutine=lookup, name="lookup", description="Look up."),
        read_only=True,
    )
    agent = build_agent(
        make_chat_model(spec(scripted_server, "fc"), "function_call"),
        make_chat_model(spec(scripted_server, "ans"), "answer"),
        [tool],
    )

    def script() -> None:
        for i in range(3):
            scripted_server.queue("fc", ToolCalls([Call("lookup", {"topic": f"t{i}"})]))
        scripted_server.queue("fc", Text("enough"))
        scripted_server.queue("ans", Text("The answer."))

    script()
    await collect(agent.run("q"))  # the first turn of a process may look the platform up once
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    script()
    events = await collect(agent.run("q"))
    assert text(events) == "The answer."
    assert [e.name for e in of(events, "tool_finished")] == ["lookup"] * 3
    # Before: after_decide and after_evaluate (plain functions) ran in a worker thread each time
    assert executor.submitted == []


async def test_a_reply_merged_at_its_end_equals_the_chunk_by_chunk_sum(scripted_server) -> None:
    fc = make_chat_model(spec(scripted_server, "fc"), "function_call")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    bound = fc.bind_tools(
        [{"type": "function", "function": {"name": "f", "description": "f", "parameters": schema}}]
    )
    reply = ToolCalls(
        [Call("f", {"a": 1}), Call("f", {"a": 22}), Call("f", {})],
        content="Calling f three times.",
        reasoning="three calls are needed",
    )
    scripted_server.queue("fc", reply)
    chunks = [chunk async for chunk in bound.astream("hi")]
    summed = chunks[0]
    for chunk in chunks[1:]:  # how ModelClient.ask built the reply before
        summed = summed + chunk
    merged = _merged(chunks)
    assert len(chunks) > 6  # each call's arguments come in two chunks at least
    for key in ("content", "tool_calls", "tool_call_chunks", "invalid_tool_calls", "id"):
        assert getattr(merged, key) == getattr(summed, key), key
    assert merged.usage_metadata == summed.usage_metadata
    assert merged.additional_kwargs == summed.additional_kwargs
    assert merged.response_metadata == summed.response_metadata
    assert [c["args"] for c in merged.tool_calls] == [{"a": 1}, {"a": 22}, {}]
    assert _merged(chunks[:1]) is chunks[0]
