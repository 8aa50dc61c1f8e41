"""The agent graph against the scripted server over HTTP: events, limits, ledger, usage."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from langchain_core.tools import StructuredTool, ToolException

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Fault, Text, ToolCalls
from brainchat.tools.registry import set_flags
from brainchat.tools.search import FixtureBackend, make_search_tool

from support import SEARCH_RESULTS, collect, of, spec, text, wait_for_event, write_fixture


def models(server, fc="fc", answer="ans"):
    return (
        make_chat_model(spec(server, fc), "function_call"),
        make_chat_model(spec(server, answer), "answer") if answer else None,
    )


@pytest.fixture
def search(tmp_path):
    return make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})


def sleeper(name: str, seconds: float, log: list, read_only: bool = True) -> StructuredTool:
    async def run(tag: str = "") -> str:
        start = time.time()
        await asyncio.sleep(seconds)
        log.append((name, start, time.time()))
        return f"{name} finished after {seconds} s with tag {tag!r}"

    return set_flags(
        StructuredTool.from_function(coroutine=run, name=name, description=f"sleep {seconds}s"),
        read_only=read_only,
    )  # type: ignore[return-value]


async def test_two_search_rounds_then_answer(scripted_server, search) -> None:
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls([Call("web_search", {"query": "EEGNet"})], content="Searching EEGNet."),
        ToolCalls([Call("web_search", {"query": "mu ERD motor imagery"})]),
        Text("I have enough."),
    )
    s.queue("ans", Text("EEGNet is compact [1]; mu power drops [2]. Bogus [9]."))
    fc, ans = models(s)
    model_decides = AgentLimits(evaluation="model")  # the model, not the rule, ends the loop
    events = await collect(
        build_agent(fc, ans, [search], model_decides).run("Tell me about EEGNet and mu ERD")
    )
    kinds = [e.type for e in events if not e.type.endswith("_token")]
    assert kinds == [
        "run_started",
        "thinking_done",
        "tool_call_started",
        "tool_finished",
        "evaluation",
        "thinking_done",
        "tool_call_started",
        "tool_finished",
        "evaluation",
        "thinking_done",
        "evaluation",
        "model_switch",
        "answer_checked",  # "Bogus [9]." cites no source: marked, and said
        "notice",
        "citations",
        "stats",
        "run_finished",
    ]
    assert of(events, "answer_checked")[0].flags[0]["sentence"] == "Bogus [9]."
    assert (
        "".join(e.text for e in of(events, "thinking_token") if e.round == 1) == "Searching EEGNet."
    )
    finished = of(events, "tool_finished")
    assert finished[0].result_count == 4 and finished[0].top[0]["title"].startswith("EEGNet")
    assert [e.verdict for e in of(events, "evaluation")] == ["continue", "continue", "answer"]
    assert text(events).startswith("EEGNet is compact [1]")
    assert [c["n"] for c in of(events, "citations")[0].sources] == [
        1,
        2,
    ]  # [9] is not a real source
    assert of(events, "run_finished")[0].reason == "answered"
    fc_requests, ans_requests = s.requests_for("fc"), s.requests_for("ans")
    assert len(fc_requests) == 3 and len(ans_requests) == 1
    assert fc_requests[0].tools[0]["function"]["name"] == "web_search"
    assert not ans_requests[0].tools  # the answer model gets no tools, only verified results
    asked = ans_requests[0].messages[-1]["content"]
    assert "[1] EEGNet uses depthwise" in asked and "(from: EEGNet: a compact CNN" in asked
    assert of(events, "model_switch")[0].model == "ans"


async def test_the_search_step_lists_as_many_results_as_its_title_and_the_decision_count(
    scripted_server, search
) -> None:
    from brainchat.ui import step_text

    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "motor imagery ERD"})]))
    s.queue("ans", Text("ERD is a drop in mu power [2]."))
    events = await collect(build_agent(*models(s), [search]).run("What is ERD?"))
    finished, decision = of(events, "tool_finished")[0], of(events, "evaluation")[0]
    title, body = step_text.finished_title(finished), step_text.result_text(finished)
    listed = re.findall(r"^\d+\. \[(.+?)\]\(", body, flags=re.MULTILINE)
    assert title.startswith("web_search · 4 results") and "found 4 source(s)" in decision.reason
    assert listed == [r["title"] for r in SEARCH_RESULTS]  # all 4, MNE-Python's included


async def test_no_tool_needed_still_ends_in_answer_stage(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", Text("No tools needed."))
    s.queue("ans", Text("Hello! How can I help with your EEG work?"))
    events = await collect(build_agent(*models(s), [search]).run("hi"))
    assert text(events) == "Hello! How can I help with your EEG work?"
    assert not of(events, "tool_call_started")
    # a minimal profile makes no record of the request, so the answer model reads the neutral
    # line: its own knowledge only for what needs no look-up
    asked = s.requests_for("ans")[0].messages[-1]["content"]
    assert "No tool was called in this run. Answer from your own knowledge only what needs no look-up" in asked  # fmt: skip
    assert "No tools were used" not in asked and "although the request needs tools" not in asked
    assert asked.rstrip().endswith("Write the answer in the language of the user's request.")


async def test_single_model_plays_both_roles(scripted_server, search) -> None:
    s = scripted_server
    s.queue(
        "solo",
        ToolCalls([Call("web_search", {"query": "csp"})]),
        Text("CSP maximises variance [3]."),
    )
    fc, _ = models(s, fc="solo", answer=None)
    events = await collect(build_agent(fc, None, [search]).run("what is CSP?"))
    # a search round that found sources is "enough": no second function-call round
    assert [r.model for r in s.requests] == ["solo", "solo"]
    assert s.requests[-1].tools in (None, [])  # the answer call is made without tools
    rows = {r.role: r for r in of(events, "stats")[0].rows}
    assert rows["function_call"].calls == 1 and rows["answer"].calls == 1  # separate rows per role
    assert rows["function_call"].model == rows["answer"].model == "solo"


async def test_usage_per_role_equals_what_server_reported(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "alpha"})]))  # the rule ends the loop
    s.queue("ans", Text("Alpha is 8-12 Hz [1]."))
    fc = make_chat_model(spec(s, "fc", input_price=1.0, output_price=2.0), "function_call")
    events = await collect(
        build_agent(
            fc,
            models(s)[1],
            [search],
            specs={
                "function_call": spec(s, "fc", input_price=1.0, output_price=2.0),
                "answer": spec(s, "ans"),
            },
        ).run("alpha?")
    )
    rows = {r.role: r for r in of(events, "stats")[0].rows}
    for role, model in (("function_call", "fc"), ("answer", "ans")):
        sent = [r.usage for r in s.requests_for(model)]
        assert rows[role].input_tokens == sum(u["prompt_tokens"] for u in sent)
        assert rows[role].output_tokens == sum(u["completion_tokens"] for u in sent)
        assert rows[role].estimated is False
    fc_row = rows["function_call"]
    assert fc_row.cost == pytest.approx(
        (fc_row.input_tokens * 1.0 + fc_row.output_tokens * 2.0) / 1e6
    )
    stats = of(events, "stats")[0]
    assert stats.ttft is not None and stats.ttft <= stats.total_seconds


@pytest.mark.scripted_lenient("the iteration limit stops the run before the model's queued rounds")
async def test_iteration_limit_stops_and_answers_with_notice(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", *[ToolCalls([Call("web_search", {"query": f"q{i}"})]) for i in range(5)])
    s.queue("ans", Text("Partial answer."))
    events = await collect(
        build_agent(*models(s), [search], AgentLimits(max_iterations=2, evaluation="model")).run(
            "endless"
        )
    )
    assert len(s.requests_for("fc")) == 2
    notice = of(events, "notice")[0]
    assert notice.kind == "iteration_limit" and "2 model calls" in notice.message and notice.hint
    assert of(events, "run_finished")[0].reason == "iteration_limit"
    assert text(events) == "Partial answer."


@pytest.mark.scripted_lenient("the deadline stops the run before the model's next turn")
async def test_timeout_keeps_partial_results_and_answers(scripted_server, search) -> None:
    s = scripted_server
    log: list = []
    s.queue(
        "fc",
        ToolCalls([Call("web_search", {"query": "eegnet"})]),
        ToolCalls([Call("slow", {"tag": "x"})]),
        Text("never reached"),
    )
    s.queue("ans", Text("From what I found [1]."))
    agent = build_agent(
        *models(s),
        [search, sleeper("slow", 8.0, log)],
        AgentLimits(max_execution_time=2.5, evaluation="model"),
    )
    events = await collect(agent.run("slow question"))
    assert not log  # bounded: the slow tool was stopped before it could finish
    statuses = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert statuses == [("web_search", "success"), ("slow", "error")]
    assert of(events, "notice")[-1].kind == "timeout"
    assert of(events, "run_finished")[0].reason == "timeout"
    assert (
        "EEGNet" in s.requests_for("ans")[0].messages[-1]["content"]
    )  # partial results reach the answer
    assert text(events) == "From what I found [1]."


@pytest.mark.scripted_lenient("the loop check stops the run before the last queued repeat")
async def test_loop_is_detected_not_reexecuted_and_stops(scripted_server, search) -> None:
    s = scripted_server
    same = ToolCalls([Call("web_search", {"query": "EEGNet"})])
    s.queue("fc", same, ToolCalls([Call("web_search", {"query": "  eegnet "})]), same, same)
    s.queue("ans", Text("Answer."))
    events = await collect(
        build_agent(*models(s), [search], AgentLimits(evaluation="model")).run("loop")
    )
    statuses = [e.status for e in of(events, "tool_finished")]
    assert statuses == ["success", "skipped", "skipped"]
    tool_replies = [m for m in s.requests_for("fc")[2].messages if m["role"] == "tool"]
    assert "already called" in tool_replies[-1]["content"]  # the model hears it is a repeat
    assert "reused the result" in of(events, "tool_finished")[1].summary  # and the step says so
    assert of(events, "run_finished")[0].reason == "loop"
    notice = of(events, "notice")[0]
    assert notice.kind == "loop" and "written from the results found" in notice.hint
    assert "ephrase" not in notice.hint  # what to do, not "rephrase"
    assert notice.message.startswith("The agent repeated web_search(query='EEGNet') 3 times")


async def test_tool_errors_become_messages_not_exceptions(scripted_server, search) -> None:
    async def broken(x: int) -> str:
        raise RuntimeError("disk on fire")

    async def refuses(x: int) -> str:
        raise ToolException("no data loaded: call load_data first")

    tools = [
        search,
        StructuredTool.from_function(coroutine=broken, name="broken", description="b"),
        StructuredTool.from_function(coroutine=refuses, name="refuses", description="r"),
    ]
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls(
            [
                Call("nope", {}),
                Call("web_search", {"query": "x" * 2, "max_results": 50}),
                Call("broken", {"x": 1}),
                Call("refuses", {"x": 1}),
                Call("web_search", "{not json"),
            ]
        ),
        Text("give up"),
    )
    s.queue("ans", Text("Sorry."))
    events = await collect(build_agent(*models(s), tools).run("break things"))
    finished = of(events, "tool_finished")
    assert [e.status for e in finished] == ["error"] * 5
    errors = [e.error for e in finished]
    assert "unknown tool 'nope'" in errors[0] and "web_search" in errors[0]
    assert "invalid arguments for web_search" in errors[1] and "max_results" in errors[1]
    assert "broken failed: RuntimeError: disk on fire" in errors[2]
    assert errors[3] == "no data loaded: call load_data first"
    assert "not valid JSON" in errors[4]
    tool_msgs = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"]
    assert len(tool_msgs) == 5 and all(m["content"].startswith("Error:") for m in tool_msgs)
    assert of(events, "run_finished")[0].reason == "answered"


async def test_tool_timeout_is_an_error_for_the_model(scripted_server) -> None:
    log: list = []
    s = scripted_server
    s.queue("fc", ToolCalls([Call("slow", {})]), Text("ok"))
    s.queue("ans", Text("done"))
    events = await collect(
        build_agent(*models(s), [sleeper("slow", 5, log)], AgentLimits(tool_timeout=0.5)).run("q")
    )
    finished = of(events, "tool_finished")[0]
    assert finished.status == "error" and "did not finish within" in finished.error


async def test_read_only_calls_run_in_parallel_others_in_order(scripted_server) -> None:
    log: list = []
    tools = [sleeper(f"ro{i}", 1.0, log) for i in range(3)] + [
        sleeper(f"rw{i}", 0.3, log, read_only=False) for i in range(2)
    ]
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls([Call(f"ro{i}", {"tag": str(i)}) for i in range(3)]),
        ToolCalls([Call("rw0", {}), Call("ro0", {"tag": "z"}), Call("rw1", {})]),
        Text("done"),
    )
    s.queue("ans", Text("ok"))
    await collect(build_agent(*models(s), tools).run("parallel"))
    first = {n: (a, b) for n, a, b in log[:3]}
    assert max(a for a, _ in first.values()) < min(
        b for _, b in first.values()
    )  # all three overlapped
    second = log[3:]
    assert [n for n, _, _ in second] == ["rw0", "ro0", "rw1"]
    assert all(
        second[i][2] <= second[i + 1][1] for i in range(2)
    )  # sequential when one changes state
    tool_msgs = [m for m in s.requests_for("fc")[1].messages if m["role"] == "tool"]
    assert [m["content"].split()[0] for m in tool_msgs] == ["ro0", "ro1", "ro2"]  # original order


@pytest.mark.scripted_lenient(
    "single-step mode stops the run before the model's second queued round"
)
async def test_single_step_mode_allows_one_tool_round(scripted_server, search) -> None:
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls([Call("web_search", {"query": "one"})]),
        ToolCalls([Call("web_search", {"query": "two"})]),
    )
    s.queue("ans", Text("ok"))
    events = await collect(
        build_agent(*models(s), [search], AgentLimits(execution_mode="single_step")).run("q")
    )
    assert len(of(events, "tool_finished")) == 1 and len(s.requests_for("fc")) == 1
    assert "single-step" in of(events, "evaluation")[-1].reason


@pytest.mark.scripted_lenient("the round cap stops the run before the model's queued rounds")
async def test_auto_mode_caps_successful_rounds(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", *[ToolCalls([Call("web_search", {"query": f"q{i}"})]) for i in range(8)])
    s.queue("ans", Text("ok"))
    events = await collect(
        build_agent(*models(s), [search], AgentLimits(max_auto_rounds=3, evaluation="model")).run(
            "q"
        )
    )
    assert len(of(events, "tool_finished")) == 3
    assert "3 successful tool rounds done" in of(events, "evaluation")[-1].reason
    assert of(events, "run_finished")[0].reason == "round_limit"


async def test_short_results_are_not_enough_and_custom_evaluator(scripted_server, tmp_path) -> None:
    from brainchat.agent.policy import Verdict

    empty = make_search_tool(FixtureBackend(write_fixture(tmp_path / "e.json", [])), {})
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "nothing"})]), Text("stop"))
    s.queue("ans", Text("none"))
    events = await collect(build_agent(*models(s), [empty]).run("q"))
    reason = of(events, "evaluation")[0].reason
    assert "too short" in reason and "try another way" in reason
    s.queue("fc", ToolCalls([Call("web_search", {"query": "nothing"})]), Text("stop"))
    s.queue("ans", Text("none"))
    agent = build_agent(*models(s), [empty], evaluator=lambda e: Verdict(True, "custom says fine"))
    events = await collect(agent.run("q"))
    assert "custom says fine" in of(events, "evaluation")[0].reason


async def test_destructive_tools_ask_first(scripted_server) -> None:
    wiped: list = []

    async def wipe() -> str:
        wiped.append(1)
        return "study cleared"

    tool = set_flags(
        StructuredTool.from_function(
            coroutine=wipe, name="clear_everything", description="destructive"
        ),
        destructive=True,
    )
    s = scripted_server
    for _ in range(3):
        s.queue("fc", ToolCalls([Call("clear_everything", {})]), Text("ok"))
        s.queue("ans", Text("ok"))
    events = await collect(build_agent(*models(s), [tool]).run("wipe"))  # headless: refused
    assert of(events, "tool_finished")[0].status == "refused" and not wiped
    asked: list = []

    async def approve(name, args):
        asked.append(name)
        return True

    events = await collect(build_agent(*models(s), [tool], confirm=approve).run("wipe"))
    assert (
        asked == ["clear_everything"]
        and wiped == [1]
        and of(events, "tool_finished")[0].status == "success"
    )

    async def reject(name, args):
        return False

    events = await collect(build_agent(*models(s), [tool], confirm=reject).run("wipe"))
    assert of(events, "tool_finished")[0].status == "refused" and wiped == [1]
    assert (
        "did not approve"
        in [m for m in s.requests_for("fc")[-1].messages if m["role"] == "tool"][0]["content"]
    )
    # the same call sent again is not asked again: the user said no once in this run
    told: list = []

    async def reject_once(name, args):
        told.append(name)
        return False

    s.queue("fc", ToolCalls([Call("clear_everything", {})]), ToolCalls([Call("clear_everything", {})]), Text("ok"))  # fmt: skip
    s.queue("ans", Text("I did not clear it."))
    events = await collect(build_agent(*models(s), [tool], confirm=reject_once).run("wipe"))
    assert told == ["clear_everything"] and wiped == [1]
    assert [e.status for e in of(events, "tool_finished")] == ["refused", "skipped"]
    assert "was refused in round 1" in of(events, "tool_finished")[1].error


async def test_model_api_failure_stops_with_friendly_message(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", Fault(500))
    events = await collect(build_agent(*models(s), [search]).run("q"))
    notice = of(events, "notice")[0]
    assert notice.kind == "error" and "HTTP 500" in notice.message and "fc" in notice.message
    assert "kept" not in notice.hint  # nothing was gathered, so nothing is "kept"
    assert of(events, "run_finished")[0].reason == "error"
    assert of(events, "stats") and not s.requests_for("ans")


async def test_cancellation_stops_promptly_and_closes_every_call(scripted_server) -> None:
    log: list = []
    s = scripted_server
    s.queue("fc", ToolCalls([Call("slow", {})]))
    agent = build_agent(*models(s), [sleeper("slow", 30, log)])
    seen: list = []

    async def consume():
        async for event in agent.run("q"):
            seen.append(event)

    task = asyncio.create_task(consume())
    await wait_for_event(seen, "tool_call_started")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)  # bounded: a stop that hangs fails here, not in CI's limit
    assert not log  # the slow tool never completed
    assert agent.last_run is not None
    assert [e.status for e in agent.last_run.ledger.entries] == ["cancelled"]
    assert not agent.last_run.ledger.pending()


@pytest.mark.scripted_lenient(
    "the deadline passes while the tool runs: the model is not asked again"
)
async def test_long_running_tool_outlives_the_run_deadline_then_answers(scripted_server) -> None:
    log: list = []
    trainer = sleeper("train", 1.5, log, read_only=False)
    set_flags(trainer, long_running=True, timeout=10)
    s = scripted_server
    s.queue("fc", ToolCalls([Call("train", {"tag": "eegnet"})]), Text("never asked"))
    s.queue("ans", Text("Trained."))
    events = await collect(
        build_agent(*models(s), [trainer], AgentLimits(max_execution_time=0.5)).run("train")
    )
    assert of(events, "tool_finished")[0].status == "success" and log
    assert (
        of(events, "run_finished")[0].reason == "timeout"
    )  # the deadline still ends the tool loop
    assert len(s.requests_for("fc")) == 1 and text(events) == "Trained."


async def test_prompt_variant_from_the_model_spec_is_used(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", Text("no tools"))
    s.queue("ans", Text("hi"))
    fc_spec = spec(s, "fc", prompt_variant="terse")
    agent = build_agent(
        make_chat_model(fc_spec, "function_call"),
        models(s)[1],
        [search],
        specs={
            "function_call": fc_spec,
            "answer": spec(s, "ans", prompt_variant="no-such-variant"),
        },
    )
    await collect(agent.run("hello"))
    assert s.requests_for("fc")[0].messages[0]["content"].startswith("You gather facts for an EEG")
    assert (
        s.requests_for("ans")[0].messages[0]["content"].startswith("You are brainchat")
    )  # unknown variant: default


async def test_context_summary_reaches_the_function_call_prompt(scripted_server, search) -> None:
    s = scripted_server
    s.queue("fc", Text("no tools"), Text("no tools"))
    s.queue("ans", Text("hi"), Text("hi"))
    await collect(
        build_agent(
            *models(s), [search], context=lambda: "stage=epoched, 120 epochs (left 60, right 60)"
        ).run("q")
    )
    assert (
        "Current EEG study: stage=epoched, 120 epochs"
        in s.requests_for("fc")[0].messages[0]["content"]
    )

    def broken() -> str:
        raise RuntimeError("boom")

    events = await collect(build_agent(*models(s), [search], context=broken).run("q"))
    assert of(events, "run_finished")[0].reason == "answered"
    assert "EEG study summary unavailable: boom" in s.requests_for("fc")[1].messages[0]["content"]


async def test_reasoning_content_streams_as_thinking(scripted_server, search) -> None:
    s = scripted_server
    s.queue(
        "fc", ToolCalls([Call("web_search", {"query": "erd"})], reasoning="I should look up ERD.")
    )
    s.queue("ans", Text("ERD is a power drop [2]."))
    events = await collect(build_agent(*models(s), [search]).run("erd?"))
    first = [e for e in of(events, "thinking_token") if e.round == 1]
    assert "".join(e.text for e in first) == "I should look up ERD."
    assert of(events, "thinking_done")[0].text == "I should look up ERD."


async def test_short_numeric_or_structured_results_count_as_enough(scripted_server) -> None:
    async def add(a: int, b: int) -> str:
        return str(a + b)

    tool = set_flags(
        StructuredTool.from_function(coroutine=add, name="add", description="add"), read_only=True
    )
    s = scripted_server
    s.queue("fc", ToolCalls([Call("add", {"a": 2, "b": 40})]), Text("ok"))
    s.queue("ans", Text("42"))
    events = await collect(build_agent(*models(s), [tool]).run("2+40"))
    reason = of(events, "evaluation")[0].reason
    assert "add returned 42 (a numeric result)" in reason and "too short" not in reason
