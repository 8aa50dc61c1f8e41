"""Bounds that bound (#9 part 5) and the smaller agent-mode fixes (#9 part 7), over real HTTP."""

from __future__ import annotations

import pytest
from langchain_core.tools import StructuredTool, ToolException

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.session import Session
from brainchat.settings import AgentLimits, Settings
from brainchat.testing.scripted_server import Call, Drop, Fault, Text, ToolCalls
from brainchat.tools.registry import set_flags

from support import collect, of, spec, text

SECRET = "sk-live-abcdef0123456789abcdef"


def models(server, fc: str = "fc", answer: str = "ans"):
    return make_chat_model(spec(server, fc), "function_call"), make_chat_model(
        spec(server, answer), "answer"
    )


def counter_tool(name: str, runs: list[int], *, fail: bool = False) -> StructuredTool:
    async def run(x: int = 0) -> str:
        runs.append(x)
        if fail:
            raise ToolException(f"{name} cannot handle x={x}")
        return f"{name} handled x={x}, a result long enough to count as useful"

    tool = StructuredTool.from_function(coroutine=run, name=name, description=f"{name} tool")
    return set_flags(tool, read_only=True)  # type: ignore[return-value]


async def test_time_limit_covers_a_trickling_answer(scripted_server) -> None:
    s = scripted_server
    s.queue("fc", Text("No tools needed."))
    words = " ".join(f"word{i}" for i in range(300))  # ~60 s at 0.2 s per token
    s.queue("ans", Text(words, token_delay=0.2))
    limits = AgentLimits(max_execution_time=3)
    events = await collect(build_agent(*models(s), [], limits).run("tell me everything"))
    finished = of(events, "run_finished")[0]
    assert finished.reason == "timeout"
    partial = text(events)
    assert partial and finished.answer == partial and len(partial) < len(words)  # kept, cut
    notice = of(events, "notice")[-1]
    assert notice.kind == "timeout" and "partial answer above is kept" in notice.message


@pytest.mark.parametrize("becomes", ["a quiet end", "a stream error", "a stream that goes on"])
async def test_time_limit_holds_when_the_http_stack_hides_its_cancellation(
    scripted_server, monkeypatch, becomes
) -> None:
    """HTTP libraries may swallow a cancellation, with the stream ending or going on, or turn it
    into their own error (CI runs saw the limit fire and the whole answer stream in, the run
    ending as answered): the answer is read only to the limit, and the limit names the end."""
    import asyncio

    import httpx

    from brainchat.modelclient import ModelClient

    real = ModelClient._stream_text

    async def hiding(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if becomes == "a stream that goes on":  # the cancellation is lost; the tokens still come
            reading = asyncio.ensure_future(real(self, *args, **kwargs))
            while not reading.done():
                try:
                    await asyncio.shield(reading)
                except asyncio.CancelledError:
                    continue
            return
        try:
            await real(self, *args, **kwargs)
        except asyncio.CancelledError:
            if becomes == "a stream error":
                raise httpx.ReadError("stream closed") from None

    monkeypatch.setattr(ModelClient, "_stream_text", hiding)
    s = scripted_server
    s.queue("fc", Text("No tools needed."))
    words = " ".join(f"word{i}" for i in range(300))
    s.queue("ans", Text(words, token_delay=0.2))
    limits = AgentLimits(max_execution_time=3)
    events = await collect(build_agent(*models(s), [], limits).run("tell me everything"))
    finished = of(events, "run_finished")[0]
    assert finished.reason == "timeout" and finished.error is None
    assert finished.answer == text(events) and 0 < len(finished.answer) < len(words)
    assert "partial answer above is kept" in of(events, "notice")[-1].message


async def test_one_reply_with_many_calls_runs_only_the_cap(scripted_server) -> None:
    s = scripted_server
    runs: list[int] = []
    s.queue("fc", ToolCalls([Call("count", {"x": i}) for i in range(30)]), Text("done"))
    s.queue("ans", Text("ok"))
    agent = build_agent(*models(s), [counter_tool("count", runs)], AgentLimits())
    events = await collect(agent.run("count"))
    assert sorted(runs) == list(range(8))  # the default cap is 8 calls per reply
    statuses = [e.status for e in of(events, "tool_finished")]
    assert statuses.count("success") == 8 and statuses.count("refused") == 22
    tool_msgs = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"]
    assert len(tool_msgs) == 30  # every call gets its answer, as the API requires
    assert "more than 8 tool calls" in tool_msgs[-1]["content"]


async def test_cap_is_configurable_from_the_environment(tmp_path) -> None:
    from brainchat.settings import load_settings

    settings = load_settings({"AGENT_MAX_TOOL_CALLS": "3"}, dotenv=False)
    assert settings.limits.max_calls_per_reply == 3
    bad = load_settings({"AGENT_MAX_TOOL_CALLS": "0"}, dotenv=False)
    assert any(e.variable == "AGENT_MAX_TOOL_CALLS" for e in bad.errors)


@pytest.mark.scripted_lenient("the loop check stops the run before the model's last queued turn")
async def test_a_failing_call_repeated_is_a_loop(scripted_server) -> None:
    s = scripted_server
    runs: list[int] = []
    same = ToolCalls([Call("flaky", {"x": 1})])
    s.queue("fc", same, same, same, Text("give up"))
    s.queue("ans", Text("It failed."))
    agent = build_agent(*models(s), [counter_tool("flaky", runs, fail=True)], AgentLimits())
    events = await collect(agent.run("try it"))
    assert runs == [1]  # the identical failing call ran once
    statuses = [e.status for e in of(events, "tool_finished")]
    assert statuses == ["error", "skipped", "skipped"]
    second = [m for m in s.requests_for("fc")[2].messages if m["role"] == "tool"][-1]
    assert "it failed" in second["content"] and "would fail again" in second["content"]
    assert of(events, "run_finished")[0].reason == "loop"
    notice = of(events, "notice")[0]  # says what repeated and that it failed, not 'searching'
    assert notice.message.startswith("The agent repeated flaky(x=1) 3 times although it failed")
    assert "searching" not in notice.message and "Chat mode" not in notice.hint
    assert notice.hint.startswith("Next step: call flaky with different arguments")


def agent_session(server, tmp_path, **limits) -> Session:
    from dataclasses import replace

    fc = replace(spec(server, "fc"), api_key=SECRET)
    ans = replace(spec(server, "ans"), api_key=SECRET)
    settings = Settings(
        function_call_model=fc,
        answer_model=ans,
        limits=AgentLimits(**limits),
        data_dir=tmp_path / "data",
        search_backend="fixture",
        search_fixture=tmp_path / "none.json",
    )
    session = Session(settings)
    session.set_mode("agent")
    return session


async def test_model_errors_name_the_model_and_url_never_the_key(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue("fc", Fault(500))
    events = await collect(agent_session(s, tmp_path).ask("q"))
    notice = of(events, "notice")[0]
    assert "fc at " + s.base_url in notice.message and "HTTP 500" in notice.message
    assert SECRET not in str([e.to_dict() for e in events])
    assert "kept" not in notice.hint  # nothing was gathered


async def test_a_timed_out_function_call_still_counts(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue("fc", Text("too late", ttft=30))
    s.queue("ans", Text("answer from nothing"))
    events = await collect(agent_session(s, tmp_path, max_execution_time=2).ask("q"))
    rows = {r.role: r for r in of(events, "stats")[0].rows}
    assert rows["function_call"].calls == 1 and rows["function_call"].failed == 1
    assert rows["function_call"].seconds > 0


async def test_a_stream_cut_before_the_first_chunk_is_not_a_connection_error(
    scripted_server, tmp_path
) -> None:
    s = scripted_server
    s.queue("fc", Text("no tools"))
    s.queue("ans", Drop(after_chunks=0))
    events = await collect(agent_session(s, tmp_path).ask("q"))
    assert len(s.requests_for("ans")) == 1  # not retried
    notice = [n for n in of(events, "notice") if n.kind == "error"][0]
    assert "could not connect" not in notice.message.lower()
    assert "broke off before anything arrived" in notice.message
    assert "ans at " + s.base_url in notice.message


def stateful_tool(name: str, runs: list[int]) -> StructuredTool:
    """A tool that changes state (like load_data or bandpass_filter): not read-only."""
    tool = counter_tool(name, runs)
    return set_flags(tool, read_only=False)  # type: ignore[return-value]


async def test_an_identical_batch_of_state_changing_calls_is_never_applied_twice(
    scripted_server,
) -> None:
    """Qwen2.5-Coder-1.5B sent [load, band-pass] again in the next round and the band-pass ran
    twice ('history: band-pass 8-30 Hz, band-pass 8-30 Hz'): call by call, each state change
    reset what was seen, so nothing looked repeated (#23)."""
    s = scripted_server
    loads: list[int] = []
    filters: list[int] = []
    batch = ToolCalls([Call("load", {"x": 1}), Call("bandpass", {"x": 8})])
    s.queue("fc", batch, batch, batch)
    s.queue("ans", Text("Loaded and filtered once."))
    tools = [stateful_tool("load", loads), stateful_tool("bandpass", filters)]
    events = await collect(build_agent(*models(s), tools, AgentLimits()).run("load and filter"))
    assert loads == [1] and filters == [8]  # each applied once
    statuses = [e.status for e in of(events, "tool_finished")]
    assert statuses == ["success", "success", "skipped", "skipped", "skipped", "skipped"]
    told = [m["content"] for m in s.requests_for("fc")[2].messages if m["role"] == "tool"]
    assert "same batch of calls as in round 1" in told[-1] and "apply it twice" in told[-1]
    assert of(events, "run_finished")[0].reason == "loop"
    assert of(events, "notice")[0].message.startswith("The agent repeated load(x=1), bandpass(x=8)")


async def test_the_same_broken_reply_twice_is_a_loop_not_a_run_to_the_time_limit(
    scripted_server,
) -> None:
    """Six identical invalid replies in a row ran to the time limit: a broken call never counted
    as a repeat (#23). The second is answered as a repeat and the third stops the run."""
    s = scripted_server
    broken = ToolCalls([Call("web_search", "{not json")])
    s.queue("fc", broken, broken, broken)
    s.queue("ans", Text("The search could not be run."))
    runs: list[int] = []
    events = await collect(
        build_agent(*models(s), [counter_tool("web_search", runs)], AgentLimits()).run("find it")
    )
    assert [e.status for e in of(events, "tool_finished")] == ["error", "skipped", "skipped"]
    second = [m for m in s.requests_for("fc")[2].messages if m["role"] == "tool"][-1]
    assert "it failed" in second["content"] and "with different arguments" in second["content"]
    assert of(events, "run_finished")[0].reason == "loop" and not runs
    assert len(s.requests_for("fc")) == 3  # not six, not until the time limit


async def test_different_broken_calls_are_not_taken_for_a_loop(scripted_server) -> None:
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls([Call("web_search", "{not json")]),
        ToolCalls([Call("web_search", '{"query": ')]),
        ToolCalls([Call("web_search", {"query": "mu"})]),
        Text("Done."),
    )
    s.queue("ans", Text("Found it."))
    runs: list[int] = []
    tool = counter_tool("web_search", runs)
    events = await collect(build_agent(*models(s), [tool], AgentLimits()).run("find it"))
    assert [e.status for e in of(events, "tool_finished")] == ["error", "error", "success"]
    assert of(events, "run_finished")[0].reason == "answered" and runs == [0]
