"""Agent-core correctness: fresh results after state changes, context budget, verdicts that
route, limits that fire at the defaults, answers after a model failure, real streaming, verbose."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest
from langchain_core.tools import StructuredTool, ToolException

from brainchat.agent.graph import build_agent
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.session import Session
from brainchat.settings import AgentLimits, Settings
from brainchat.testing.scripted_server import Call, Fault, Text, ToolCalls
from brainchat.tools.registry import set_flags
from brainchat.tools.search import FixtureBackend, make_search_tool
from brainchat.usage import count_tokens, tools_tokens

from support import collect, of, record, spec, text, write_fixture

EDF = "sub-01_ses-01_task-mi_eeg.edf"


def models(server, fc: str = "fc", ans: str = "ans", **kw):
    return (
        make_chat_model(spec(server, fc, **kw), "function_call"),
        make_chat_model(spec(server, ans, **kw), "answer"),
    )


def roles() -> list[tuple[str, str]]:
    return [("function_call", "fc"), ("answer", "ans")]


def note_tool(name: str, *, read_only: bool, fail: bool = False, size: int = 60) -> StructuredTool:
    async def run(x: int = 0) -> str:
        if fail:
            raise ToolException(f"{name} failed for x={x}")
        return f"{name}({x}) " + "r" * size

    tool = StructuredTool.from_function(coroutine=run, name=name, description=f"{name} tool")
    return set_flags(tool, read_only=read_only)  # type: ignore[return-value]


def request_tokens(request) -> int:
    """What a request costs against the window: its messages and its tool definitions."""
    body = json.dumps(request.messages) + json.dumps(request.tools or [])
    return count_tokens(body)


# -- 1. a repeat is a loop only if nothing that changes state ran in between -----------------
async def test_state_is_read_again_after_a_filter(scripted_server, tmp_path: Path) -> None:
    write_demo_set(tmp_path, subjects=1, sessions=1, trials=10, seed=3)
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": [EDF]})]),
            ToolCalls([Call("get_study_state", {})]),
            ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]),
            ToolCalls([Call("get_study_state", {})]), Text("done"))  # fmt: skip
    s.queue("ans", Text("Filtered."))
    study = Study(tmp_path)
    fc, ans = models(s)
    agent = build_agent(fc, ans, build_eeg_tools(study), AgentLimits(evaluation="model"))
    events = await collect(agent.run("filter and show the state"))
    states = [e for e in of(events, "tool_finished") if e.name == "get_study_state"]
    assert [e.status for e in states] == ["success", "success"]  # not "skipped"
    assert "band-pass 8-30 Hz" in states[1].content and "band-pass" not in states[0].content


async def test_psd_is_drawn_again_after_a_filter(scripted_server, tmp_path: Path) -> None:
    write_demo_set(tmp_path, subjects=1, sessions=1, trials=10, seed=3)
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": [EDF]})]),
            ToolCalls([Call("plot_psd", {})]),
            ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]),
            ToolCalls([Call("plot_psd", {})]), ToolCalls([Call("plot_psd", {})]), Text("done"))  # fmt: skip
    s.queue("ans", Text("Compared."))
    study = Study(tmp_path)
    agent = build_agent(*models(s), build_eeg_tools(study), AgentLimits(evaluation="model"))
    events = await collect(agent.run("psd before and after"))
    psd = [e for e in of(events, "tool_finished") if e.name == "plot_psd"]
    assert [e.status for e in psd] == ["success", "success", "skipped"]  # only the last repeats
    assert "reused the result" in psd[2].summary
    assert len(of(events, "tool_image")) == 2


# -- 2. every request fits the model's context window ----------------------------------------
async def test_long_history_is_trimmed_to_the_window(scripted_server, tmp_path: Path) -> None:
    s = scripted_server
    window = 8000  # the EEG and search tool definitions alone take about 3,000 tokens
    fc = replace(spec(s, "fc"), context_window=window, max_tokens=300)
    settings = Settings(function_call_model=fc, data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"))  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    for i in range(30):
        s.queue(
            "fc", Text("no tools"), Text(f"answer {i} " + " ".join(f"words{j}" for j in range(400)))
        )
        await collect(session.ask(f"question {i} " + "ask " * 400))
    sizes = [request_tokens(r) for r in s.requests]
    assert max(sizes) <= window - 300
    last = s.requests[-1].messages
    assert "question 29" in last[-1]["content"]  # the question is always kept
    assert not any("question 0 " in str(m["content"]) for m in last)  # the oldest went first


async def test_a_huge_tool_result_is_cut_head_and_tail(scripted_server, tmp_path: Path) -> None:
    s = scripted_server
    huge = [{"title": "Huge", "url": "https://example.org/huge",
             "snippet": "START " + "lorem ipsum " * 400_000 + " END"}]  # ~5 MB  # fmt: skip
    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json", huge)), {})
    s.queue("fc", ToolCalls([Call("web_search", {"query": "huge"})]), Text("enough"))
    s.queue("ans", Text("Summarised [1]."))
    agent = build_agent(*models(s), [search], AgentLimits(evaluation="model"))
    await collect(agent.run("summarise it"))
    for request in s.requests:
        assert request_tokens(request) <= 16000 - 1024
    tool_msg = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"][0]["content"]
    assert tool_msg.startswith("[1] Huge") and tool_msg.rstrip().endswith("END")
    assert "tokens cut from the middle" in tool_msg


@pytest.mark.scripted_lenient("the window fills up before the model's queued rounds are used")
async def test_old_results_become_digests_when_a_run_outgrows_the_window(
    scripted_server,
) -> None:
    s = scripted_server
    tool = note_tool("fetch", read_only=True, size=6000)
    s.queue("fc", *[ToolCalls([Call("fetch", {"x": i})]) for i in range(6)], Text("enough"))
    s.queue("ans", Text("ok"))
    small = {r: spec(s, m, context_window=4000, max_tokens=200) for r, m in roles()}
    agent = build_agent(*models(s), [tool], AgentLimits(evaluation="model"), specs=small)
    events = await collect(agent.run("go"))
    for request in s.requests:
        assert request_tokens(request) <= 4000 - 200
    last = s.requests_for("fc")[-1].messages
    tool_contents = [m["content"] for m in last if m["role"] == "tool"]
    assert tool_contents[0].startswith("[digest") and not tool_contents[-1].startswith("[digest")
    assert any(n.kind == "info" and "digest" in n.message for n in of(events, "notice"))


async def test_a_question_too_long_for_the_window_gets_a_clear_message(scripted_server) -> None:
    s = scripted_server
    small = {r: spec(s, m, context_window=2000) for r, m in roles()}
    events = await collect(build_agent(*models(s), [], specs=small).run("word " * 5000))
    assert not s.requests  # nothing was sent
    notice = of(events, "notice")[0]
    assert notice.kind == "error" and "context window 2,000" in notice.message
    assert of(events, "run_finished")[0].reason == "error"


def input_tokens(request) -> int:
    """A request's input as the budget counts it: messages (OpenAI's accounting) and tools."""
    total = 3 + sum(3 + count_tokens(str(m.get("content") or "")) for m in request.messages)
    return total + (tools_tokens(request.tools) if request.tools else 0)


@pytest.mark.parametrize("window", [4096, 3000])
async def test_a_small_window_answers_with_the_tools_offered_this_round(
    scripted_server, tmp_path: Path, window: int
) -> None:
    # All tools take ~2.4k tokens; an empty study offers 4 (~400). Counting every tool (and a
    # flat 600 for the prompt) refused every message at 4,096 tokens and blamed the user's "hi";
    # at 3,000 only the tools offered this round leave room for the question.
    s = scripted_server
    fc = spec(s, "fc", context_window=window)
    settings = Settings(function_call_model=fc, data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"))  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    s.queue("fc", Text("no tools"), Text("Hello."))
    events = await collect(session.ask("hi"))
    assert of(events, "run_finished")[0].reason == "answered", of(events, "notice")
    assert text(events) == "Hello."
    first = s.requests_for("fc")[0]
    assert first.tools and len(first.tools) < len(session.last_agent.deps.runner.tools)
    for request in s.requests:
        assert input_tokens(request) <= window - 1024


async def test_tool_definitions_too_big_for_the_window_are_named(
    scripted_server, tmp_path: Path
) -> None:
    s = scripted_server
    tools = build_eeg_tools(Study(tmp_path))  # every one offered: ~2.4k tokens of definitions
    small = {r: spec(s, m, context_window=2048) for r, m in roles()}
    events = await collect(build_agent(*models(s), tools, specs=small).run("hi"))
    assert not s.requests
    notice = of(events, "notice")[0]
    assert "The tool definitions offered take" in notice.message
    assert "2,048-token context window" in notice.message and "Your message" not in notice.message
    assert "fewer MCP servers" in notice.hint


@pytest.mark.scripted_lenient("the round that would not fit is never sent")
async def test_a_later_round_whose_tools_fill_the_window_is_not_sent(scripted_server) -> None:
    # Round 1 offers a small tool; once it ran, the offer adds one whose definition alone fills
    # the 4,000-token window. That round is not sent; the answer is written from the results.
    s = scripted_server
    ran: list[int] = []

    async def probe(x: int = 0) -> str:
        ran.append(x)
        return f"probe {x}: fine"

    async def big(x: int = 0) -> str:
        return "big"

    small_tool = set_flags(
        StructuredTool.from_function(coroutine=probe, name="probe", description="probe"),
        read_only=True,
    )
    big_tool = set_flags(
        StructuredTool.from_function(coroutine=big, name="big", description="spectra " * 4000),
        read_only=True,
    )
    s.queue("fc", ToolCalls([Call("probe", {"x": 1})]), Text("enough"))
    s.queue("ans", Text("Probed."))
    small = {r: spec(s, m, context_window=4000, max_tokens=200) for r, m in roles()}
    agent = build_agent(
        *models(s),
        [small_tool, big_tool],
        AgentLimits(evaluation="model"),
        specs=small,
        hidden=lambda: set() if ran else {"big"},
    )
    events = await collect(agent.run("probe it"))
    assert len(s.requests_for("fc")) == 1 and text(events) == "Probed."
    for request in s.requests:
        assert input_tokens(request) <= 4000 - 200
    notice = [n for n in of(events, "notice") if n.kind == "error"][0]
    assert "The tool definitions offered take" in notice.message
    assert of(events, "run_finished")[0].reason == "context_full"  # not a model failure
    answer_input = str(s.requests_for("ans")[0].messages)
    assert "context window" in answer_input and "failure of the function-call" not in answer_input


async def test_a_too_long_question_reports_its_own_size(scripted_server) -> None:
    s = scripted_server
    question = "word " * 20_000
    events = await collect(build_agent(*models(s), []).run(question))
    assert not s.requests
    message = of(events, "notice")[0].message
    assert f"Your message is about {count_tokens(question):,} tokens" in message
    assert "context window 16,000" in message


async def test_a_cjk_question_over_the_window_is_refused_with_its_size(
    scripted_server, tmp_path: Path
) -> None:
    # 3,500 characters, 10,500 tokens: characters are no upper bound on tokens
    s = scripted_server
    fc = spec(s, "fc", context_window=8000, max_tokens=300)
    settings = Settings(function_call_model=fc, data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"))  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    question = "脑" * 3500
    events = await collect(session.ask(question))
    assert not s.requests
    message = of(events, "notice")[0].message
    assert f"about {count_tokens(question):,} tokens" in message


async def test_cjk_tool_results_are_cut_to_fit_the_window(scripted_server) -> None:
    s = scripted_server

    async def run(x: int = 0) -> str:
        return f"page {x}: " + "脑电图" * 500  # 1,500 characters, ~4,500 tokens

    fetch = set_flags(
        StructuredTool.from_function(coroutine=run, name="fetch", description="fetch a page"),
        read_only=True,
    )
    s.queue("fc", *[ToolCalls([Call("fetch", {"x": i})]) for i in range(4)], Text("enough"))
    s.queue("ans", Text("ok"))
    small = {r: spec(s, m, context_window=8000, max_tokens=300) for r, m in roles()}
    await collect(
        build_agent(*models(s), [fetch], AgentLimits(evaluation="model"), specs=small).run("read")
    )
    assert len(s.requests_for("fc")) == 5
    for request in s.requests:
        assert input_tokens(request) <= 8000 - 300
    second = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"][0]["content"]
    assert "tokens cut from the middle" in second


def failing_tool(name: str = "query", chars: int = 100_000) -> StructuredTool:
    """A tool whose error is a whole traceback (an MCP server's isError text has no limit)."""

    async def run(x: int = 0) -> str:
        frames = '  File "x.py", line 1, in f\n' * (chars // 28)
        raise ToolException(f"MCP server 'db' returned an error: Traceback\n{frames}END OF TRACE")

    tool = StructuredTool.from_function(coroutine=run, name=name, description=f"{name} tool")
    return set_flags(tool, read_only=True)  # type: ignore[return-value]


def wire_tokens(request) -> int:
    """A request as a chat server counts it: each message's text and framing, each call's name,
    arguments and id, the result's call id, the tool definitions. (`request_tokens` counts the
    JSON body, whose keys and escapes add ~40 tokens per call that no server tokenizes.)"""
    total = 3 + (
        count_tokens(json.dumps(request.tools, separators=(",", ":"))) if request.tools else 0
    )
    for m in request.messages:
        total += 4 + count_tokens(str(m.get("content") or ""))
        total += count_tokens(str(m.get("tool_call_id") or ""))
        for c in m.get("tool_calls") or []:
            total += 4 + count_tokens(c["id"] + c["function"]["name"] + c["function"]["arguments"])
    return total


def assert_all_fit(server, windows: dict[str, tuple[int, int]]) -> None:
    """Every request the server saw fits its model's window less the reply's reserve."""
    assert server.requests
    for request in server.requests:
        window, reserve = windows[request.model]
        assert wire_tokens(request) <= window - reserve, (request.model, len(request.messages))


async def test_a_long_tool_error_is_not_repeated_whole_in_later_requests(scripted_server) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("query", {"x": 1})]), Text("I could not query it."))
    s.queue("ans", Text("The query failed."))
    specs = {r: spec(s, m) for r, m in roles()}
    events = await collect(build_agent(*models(s), [failing_tool()], specs=specs).run("query"))
    assert_all_fit(s, {"fc": (16000, 1024), "ans": (16000, 1024)})
    assert text(events) == "The query failed."
    assert of(events, "run_finished")[0].reason == "answered"
    # the whole error still reaches the user's step view; the model's tool message is cut
    assert of(events, "tool_finished")[0].error.endswith("END OF TRACE")
    tool_msg = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"][0]
    assert "tokens cut from the middle" in tool_msg["content"]
    assert not any("digest" in n.message for n in of(events, "notice"))  # none was made


async def test_the_evaluation_note_of_many_failed_calls_is_bounded(scripted_server) -> None:
    s = scripted_server
    calls = [Call("query", {"x": i}) for i in range(8)]
    s.queue("fc", ToolCalls(calls), Text("All failed."))
    s.queue("ans", Text("The queries failed."))
    agent = build_agent(*models(s), [failing_tool(chars=5000)], AgentLimits(max_calls_per_reply=8))
    await collect(agent.run("query"))
    note = s.requests_for("fc")[1].messages[-1]
    assert note["role"] == "user" and note["content"].startswith("(Evaluation of your last")
    assert count_tokens(note["content"]) <= 450  # 8 errors of 600 characters are ~1,300 tokens


@pytest.mark.scripted_lenient("the window fills up before the model's queued rounds are used")
async def test_a_run_that_cannot_fit_another_round_answers_from_what_it_gathered(
    scripted_server,
) -> None:
    s = scripted_server
    big = "alpha beta theta " * 500  # ~1,500 tokens of arguments per call: never cut
    s.queue("fc", *[ToolCalls([Call("fetch", {"x": i, "note": big})]) for i in range(8)])
    s.queue("ans", Text("From what was gathered."))

    async def run(x: int = 0, note: str = "") -> str:
        return f"fetch({x}) ok"

    fetch = set_flags(
        StructuredTool.from_function(coroutine=run, name="fetch", description="fetch"),
        read_only=True,
    )
    specs = {r: spec(s, m, context_window=8000, max_tokens=500) for r, m in roles()}
    limits = AgentLimits(evaluation="model", max_auto_rounds=10, max_iterations=10)
    events = await collect(build_agent(*models(s), [fetch], limits, specs=specs).run("go"))
    assert_all_fit(s, {"fc": (8000, 500), "ans": (8000, 500)})
    assert text(events) == "From what was gathered."
    assert of(events, "run_finished")[0].reason == "context_full"
    full = [n for n in of(events, "notice") if n.kind == "context_full"][0]
    assert "8,000" in full.message and "gathered so far" in full.message


@pytest.mark.scripted_lenient("the window fills up before the model's queued rounds are used")
async def test_a_long_tool_error_in_plan_mode_keeps_replan_and_answer_in_the_window(
    scripted_server,
) -> None:
    s = scripted_server
    plan = [{"title": "count", "tool": "good"}, {"title": "query db", "tool": "bad"}]
    s.queue("fc", ToolCalls([Call("submit_plan", {"needs_plan": True, "steps": plan})]),
            ToolCalls([Call("good", {"x": 1})]), ToolCalls([Call("bad", {"x": 2})]),
            ToolCalls([Call("submit_plan", {"needs_plan": True,
                                            "steps": [{"title": "count again", "tool": "good"}]})]),
            ToolCalls([Call("good", {"x": 3})]), Text("done"))  # fmt: skip
    s.queue("ans", Text("Counted; the query failed."))
    tools = [note_tool("good", read_only=True), failing_tool("bad")]
    limits = AgentLimits(plan_mode="always", max_replans=1)
    specs = {r: spec(s, m) for r, m in roles()}
    events = await collect(build_agent(*models(s), tools, limits, specs=specs).run("count, query"))
    assert of(events, "replanned")  # the replan request was sent, and fitted
    assert_all_fit(s, {"fc": (16000, 1024), "ans": (16000, 1024)})
    assert text(events) == "Counted; the query failed."


async def test_replies_that_think_aloud_are_cut_before_the_window_overflows(
    scripted_server,
) -> None:
    s = scripted_server
    # ~800 tokens each; numbered, since one phrase over and over is ended early as a loop
    thought = " ".join(
        f"Point {i}: let me reason about the next step carefully." for i in range(80)
    )
    s.queue("fc", *[ToolCalls([Call("fetch", {"x": i})], content=thought) for i in range(9)],
            Text("done"))  # fmt: skip
    s.queue("ans", Text("ok"))
    specs = {r: spec(s, m, context_window=8000, max_tokens=1000) for r, m in roles()}
    limits = AgentLimits(evaluation="model", max_auto_rounds=10, max_iterations=10)
    agent = build_agent(*models(s), [note_tool("fetch", read_only=True)], limits, specs=specs)
    events = await collect(agent.run("go"))
    assert len(s.requests_for("fc")) == 10
    assert_all_fit(s, {"fc": (8000, 1000), "ans": (8000, 1000)})
    assert text(events) == "ok"
    told = [n.message for n in of(events, "notice") if n.kind == "info"]
    assert any("reply" in m and "cut" in m for m in told)
    assert not any("digest" in m for m in told)  # the short results were never "digested"


def test_a_digest_never_replaces_a_shorter_result() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from brainchat.agent.budget import Budget, fit_run

    run = [HumanMessage("go")]
    for i in range(4):
        run.append(AIMessage("think " * 400, tool_calls=[{"name": "f", "args": {}, "id": f"c{i}"}]))
        run.append(ToolMessage("42 trials", tool_call_id=f"c{i}", name="f"))
    fitted = fit_run(SystemMessage("system"), [], run, Budget(2000, 500))
    assert fitted.fits and fitted.digested == 0 and fitted.shortened >= 1
    assert [m.content for m in fitted.messages if isinstance(m, ToolMessage)] == ["42 trials"] * 4


async def loaded_prompt_session(s, tmp_path: Path, **limits) -> Session:
    write_demo_set(tmp_path, subjects=1, sessions=1, trials=10, seed=3)
    fc = spec(s, "fc", context_window=8000, max_tokens=300, tool_calling="prompt")
    settings = Settings(function_call_model=fc, data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"),
                        limits=AgentLimits(**limits))  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    return session


@pytest.mark.scripted_lenient("the overlong request is never sent")
async def test_prompt_mode_tool_text_counts_and_an_overlong_request_is_not_sent(
    scripted_server, tmp_path: Path
) -> None:
    s = scripted_server
    session = await loaded_prompt_session(s, tmp_path)
    call = {"name": "load_data", "arguments": {"files": [EDF]}}
    load = f"```json\n{json.dumps(call)}\n```"
    # a prompt-mode model is guided: its record first; brainchat lists the folder, then the
    # load, the model's stop and the answer (fc plays both roles)
    s.queue("fc", record(["load"]), Text(load), Text("Loaded."), Text("Loaded."))
    await collect(session.ask("load the edf"))
    assert session.study.stage == "loaded"  # the system prompt now lists every EEG tool
    s.queue("fc", Text("no tools"), Text("answer"))
    events = await collect(session.ask("word " * 6500))
    assert_all_fit(s, {"fc": (8000, 300)})
    assert of(events, "run_finished")[0].reason == "error"
    error = [n for n in of(events, "notice") if n.kind == "error"][0]
    assert "8,000" in error.message  # names the window that was too small


@pytest.mark.scripted_lenient(
    "the planner request does not fit, so the queued plan and turns are never asked for"
)
async def test_the_planner_request_is_fitted_too(scripted_server, tmp_path: Path) -> None:
    s = scripted_server
    fc = spec(s, "fc", context_window=8000, max_tokens=300, tool_calling="prompt")
    settings = Settings(function_call_model=fc, data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"),
                        limits=AgentLimits(plan_mode="always"))  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    s.queue("fc", Text('{"needs_plan": false, "steps": []}'), Text("no tools"), Text("answer"))
    events = await collect(session.ask("word " * 6800))  # fits; with the planner it would not
    assert all(wire_tokens(r) <= 8000 - 300 for r in s.requests)
    # the planner's and the record's requests would not fit: neither is sent, and the run goes
    # on step by step with what does fit
    assert not any("submit_plan" in json.dumps(r.params) for r in s.requests)
    assert any("No plan was made (the planner's request needs" in n.message for n in of(events, "notice"))  # fmt: skip
    (understood,) = of(events, "request_understood")
    assert understood.record is None and "too long" in understood.problem
    assert of(events, "run_finished")[0].reason == "answered"


@pytest.mark.scripted_lenient("the window fills up before the model's queued rounds are used")
async def test_an_answer_model_with_a_small_window_answers_after_a_long_run(
    scripted_server,
) -> None:
    s = scripted_server

    async def run(q: str = "") -> str:
        return f"result for {q[:30]}: " + "value " * 300

    lookup = set_flags(
        StructuredTool.from_function(coroutine=run, name="lookup", description="look up"),
        read_only=True,
    )
    query = "channel C{r}{i} band power alpha beta theta " * 6
    rounds = [
        ToolCalls([Call("lookup", {"q": query.format(r=r, i=i)}) for i in range(8)])
        for r in range(5)
    ]
    s.queue("fc", *rounds, Text("enough"))
    s.queue("ans", Text("Alpha is highest on C44."))
    specs = {"function_call": spec(s, "fc", context_window=32000),
             "answer": spec(s, "ans", context_window=4096)}  # fmt: skip
    agent = build_agent(*models(s), [lookup], AgentLimits(evaluation="model"), specs=specs)
    events = await collect(agent.run("compare band power on all channels"))
    assert_all_fit(s, {"fc": (32000, 1024), "ans": (4096, 1024)})
    assert text(events) == "Alpha is highest on C44."
    question = s.requests_for("ans")[0].messages[-1]["content"]
    assert "earlier result(s) omitted to fit: lookup ×" in question
    assert "channel C44" in question  # the newest results are kept
    # arguments shrink with each result's share, so half of the 40 results still fit whole
    assert question.count("- lookup(") >= 20


# -- 3. the evaluation decides ----------------------------------------------------------------
async def test_enough_goes_straight_to_the_answer(scripted_server, tmp_path: Path) -> None:
    s = scripted_server
    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})
    s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet"})]))
    s.queue("ans", Text("EEGNet [1]."))
    events = await collect(build_agent(*models(s), [search]).run("what is EEGNet?"))
    assert len(s.requests_for("fc")) == 1  # no second function-call round
    assert [e.verdict for e in of(events, "evaluation")] == ["enough"]
    assert of(events, "run_finished")[0].reason == "answered"


async def test_not_enough_goes_back_with_the_reason(scripted_server) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("broken", {"x": 1})]), Text("I give up"))
    s.queue("ans", Text("Could not."))
    events = await collect(
        build_agent(*models(s), [note_tool("broken", read_only=True, fail=True)]).run("go")
    )
    assert [e.verdict for e in of(events, "evaluation")] == ["not_enough", "answer"]
    second = s.requests_for("fc")[1].messages
    assert "Evaluation of your last tool round" in second[-1]["content"]
    assert "broken failed for x=1" in second[-1]["content"]


@pytest.mark.scripted_lenient("the custom round rule ends the loop before the model's queued turn")
async def test_round_rule_is_pluggable(scripted_server) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("note", {"x": 1})]), Text("unused"))
    s.queue("ans", Text("done"))

    def always_enough(entries, verdicts, limits):
        return "enough", "custom rule"

    agent = build_agent(*models(s), [note_tool("note", read_only=True)], round_rule=always_enough)
    events = await collect(agent.run("go"))
    assert len(s.requests_for("fc")) == 1 and of(events, "evaluation")[0].reason == "custom rule"


# -- 4. both limits fire at their defaults ----------------------------------------------------
def stepping_session(s, tmp_path: Path, **fc) -> Session:
    """An Agent-mode session at the default limits with one state-changing `step` tool."""
    settings = Settings(function_call_model=spec(s, "fc", **fc), answer_model=spec(s, "ans"),
                        data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"))  # fmt: skip
    session = Session(settings, extra_tools=None)
    session.set_mode("agent")
    session.add_user_tools("steps", [note_tool("step", read_only=False)])
    return session


async def test_success_limit_fires_at_the_defaults_and_continue_picks_up(
    scripted_server, tmp_path: Path
) -> None:
    s = scripted_server
    session = stepping_session(s, tmp_path)
    s.queue("fc", *[ToolCalls([Call("step", {"x": i})]) for i in range(8)])
    s.queue("ans", Text("Steps 0-4 are done; 5-7 remain. Reply continue."))
    events = await collect(session.ask("run steps 0 to 7"))
    assert len(s.requests_for("fc")) == 5  # 5 successful rounds, then the answer
    assert of(events, "run_finished")[0].reason == "round_limit"
    assert 'reply "continue"' in s.requests_for("ans")[0].messages[-1]["content"]
    s.queue("fc", Text("Steps 5-7 are done."))  # after the three steps left in its queue
    s.queue("ans", Text("All steps done."))
    await collect(session.ask("continue"))
    assert len(s.requests_for("fc")) == 9
    follow_up = s.requests_for("fc")[5].messages
    assert any("Steps 0-4 are done" in str(m["content"]) for m in follow_up)  # earlier turn
    assert "step(5)" in str(s.requests_for("ans")[1].messages[-1]["content"])


async def test_a_request_that_names_a_pipeline_gets_a_round_for_each_step(
    scripted_server, tmp_path: Path
) -> None:
    """A guided model that calls one tool a round needs a round for each asked step, and the
    listing brainchat runs first: the round limit is raised to the record's steps' rounds + 2
    (the `RoundBudget` guard), then the same limit answers. Six asked steps take 8 successful
    rounds, not the default 5 (a minimal profile keeps 5: the next test)."""
    s = scripted_server
    session = stepping_session(s, tmp_path, guidance="guided")
    steps = ["load", "preprocess", "epoch", "split", "train", "evaluate"]
    s.queue("fc", record(steps), *[ToolCalls([Call("step", {"x": i})]) for i in range(7)])
    s.queue("ans", Text("Seven steps are done."))
    question = ("Load the first two files, band-pass 8-30 Hz, epoch 0.5-2.5 s, split by trial, "
                "train CSP+LDA, test accuracy?")  # fmt: skip
    events = await collect(session.ask(question))
    ran = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert ran == [("list_data_files", "success")] + [("step", "success")] * 7
    assert len(s.requests_for("fc")) == 8  # the record and 7 rounds: the listing was the 8th
    assert of(events, "run_finished")[0].reason == "round_limit"
    assert "8 successful tool rounds" in of(events, "notice")[-1].message


async def test_a_minimal_profile_keeps_the_round_limit_whatever_the_request_names(
    scripted_server, tmp_path: Path
) -> None:
    """A native model (guidance auto: minimal) makes no record and gets no raise: the same
    six-step request stops at the default 5 successful rounds."""
    s = scripted_server
    session = stepping_session(s, tmp_path)
    s.queue("fc", *[ToolCalls([Call("step", {"x": i})]) for i in range(5)])
    s.queue("ans", Text("Five steps are done."))
    question = ("Load the first two files, band-pass 8-30 Hz, epoch 0.5-2.5 s, split by trial, "
                "train CSP+LDA, test accuracy?")  # fmt: skip
    events = await collect(session.ask(question))
    assert len(s.requests_for("fc")) == 5
    assert not any("response_format" in r.params for r in s.requests_for("fc"))
    assert [e.name for e in of(events, "tool_finished")] == ["step"] * 5  # nothing listed first
    assert of(events, "run_finished")[0].reason == "round_limit"


@pytest.mark.scripted_lenient("the iteration limit stops the run before the model's queued rounds")
async def test_iteration_limit_fires_at_the_defaults(scripted_server) -> None:
    s = scripted_server
    tools = [note_tool(f"t{i}", read_only=True, fail=True) for i in range(12)]
    s.queue("fc", *[ToolCalls([Call(f"t{i}", {"x": i})]) for i in range(12)])
    s.queue("ans", Text("Nothing worked."))
    events = await collect(build_agent(*models(s), tools).run("go"))
    assert len(s.requests_for("fc")) == 10
    assert of(events, "run_finished")[0].reason == "iteration_limit"


# -- 5. a model failure after useful results still ends in an answer -------------------------
async def test_model_error_after_results_answers_from_them(scripted_server) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("note", {"x": 7})]), Fault(500))
    s.queue("ans", Text("From what was gathered: note 7."))
    events = await collect(
        build_agent(*models(s), [note_tool("note", read_only=True)], AgentLimits()).run("go")
    )
    notice = of(events, "notice")[0]
    assert notice.kind == "error" and "HTTP 500" in notice.message
    assert "gathered before the failure" in notice.hint
    assert text(events) == "From what was gathered: note 7."
    assert "note(7)" in s.requests_for("ans")[0].messages[-1]["content"]
    assert of(events, "run_finished")[0].reason == "model_error"


# -- 6. promises that were unguarded ----------------------------------------------------------
async def test_the_answer_streams_before_its_last_chunk_is_sent(scripted_server) -> None:
    s = scripted_server
    s.queue("fc", Text("no tools"))
    s.queue("ans", Text("one two three four five six seven eight", token_delay=0.3))
    events = await collect(build_agent(*models(s), []).run("count"))
    first = of(events, "answer_token")[0]
    done = s.requests_for("ans")[0].finished_at
    assert s.requests_for("ans")[0].stream is True
    assert done is not None and first.ts < done  # the first token arrived mid-stream
    started, stats = of(events, "run_started")[0], of(events, "stats")[0]
    assert started.ts + stats.ttft < done  # ttft was measured on the stream, not at its end


async def test_verbose_logs_every_thought_tool_and_decision(
    scripted_server, tmp_path: Path, caplog
) -> None:
    s = scripted_server
    settings = Settings(function_call_model=spec(s, "fc"), answer_model=spec(s, "ans"),
                        data_dir=tmp_path, search_backend="fixture",
                        search_fixture=write_fixture(tmp_path / "fx.json"),
                        limits=AgentLimits(verbose=True))  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    s.queue("fc", ToolCalls([Call("web_search", {"query": "mu rhythm"})], content="Let me look."))
    s.queue("ans", Text("Mu is 8-13 Hz [1]."))
    with caplog.at_level(logging.INFO, logger="brainchat.agent"):
        await collect(session.ask("what is mu?"))
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "brainchat.agent")
    for needle in ("'type': 'thinking_done'", "Let me look.", "'type': 'tool_call_started'",
                   "'query': 'mu rhythm'", "'type': 'tool_finished'", "Motor imagery",
                   "'type': 'evaluation'", "'verdict': 'enough'"):  # fmt: skip
        assert needle in logged, needle


async def test_a_cancellation_leaking_out_of_a_tool_is_a_tool_error(scripted_server) -> None:
    import asyncio

    async def leaky(x: int = 0) -> str:
        raise asyncio.CancelledError  # what an inner cancel scope of a library can leak

    tool = set_flags(StructuredTool.from_function(coroutine=leaky, name="leaky", description="x"),
                     read_only=True)  # fmt: skip
    s = scripted_server
    s.queue("fc", ToolCalls([Call("leaky", {}), Call("note", {"x": 2})]), Text("done"))
    s.queue("ans", Text("One tool failed."))
    events = await collect(
        build_agent(*models(s), [tool, note_tool("note", read_only=True)]).run("go")
    )
    statuses = {e.name: e.status for e in of(events, "tool_finished")}
    assert statuses == {"leaky": "error", "note": "success"}
    assert of(events, "run_finished")[0].reason == "answered"


async def test_a_call_that_never_returned_is_left_out_of_the_answer(scripted_server) -> None:
    from langgraph.runtime import Runtime

    from brainchat.agent.answer import answer
    from brainchat.agent.context import AgentContext
    from brainchat.agent.state import RunContext
    from brainchat.events import stream_events
    from brainchat.usage import UsageCallback, UsageLedger

    s = scripted_server
    s.queue("ans", Text("Without the lost call."))
    agent = build_agent(*models(s), [note_tool("note", read_only=True)])
    usage = UsageLedger({})
    ctx = RunContext(
        question="q", started=0.0, deadline=1e12, usage=usage, callback=UsageCallback(usage)
    )
    ctx.ledger.open("c1", "note", {"x": 1}, 1)  # opened, never finished
    state: dict = {}

    async def work() -> None:
        runtime = Runtime(context=AgentContext(agent.deps, ctx))
        state.update(await answer({"messages": []}, runtime))

    events = [e async for e in stream_events(work)]
    assert ctx.ledger.entries[0].status == "error"
    assert "never returned a result" in of(events, "notice")[0].message
    sent = s.requests_for("ans")[0].messages[-1]["content"]
    assert "Tool results:" not in sent  # no result is made up for it
    assert "failed (do not use them as evidence):\n- note: never received a result" in sent
    assert state["answer"] == "Without the lost call."
