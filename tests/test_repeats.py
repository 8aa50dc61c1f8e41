"""A reply that repeats itself is ended early, kept once, and said (issue #23: a small model
repeated one line until its length limit)."""

from __future__ import annotations

import pytest

from brainchat.agent.graph import build_agent
from brainchat.chat import stream_chat
from brainchat.llm import make_chat_model
from brainchat.repeats import RepeatGuard, find_repetition, without_repeats
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, of, spec, text, wait_until

LOOP = "As an AI language model I cannot access files. "
NOT_LOOPS = [
    "| channel | mean | sd |\n|---|---|---|\n"
    + "".join(f"| EEG {i:03d} | 0.{i} | 1.{i} |\n" for i in range(60)),
    ", ".join(f"EEG {i:03d}" for i in range(64)),
    " ".join(f"[{i}]" for i in range(1, 200)),
    "The accuracy was 0.935 on the test split. " + "=" * 60 + "\n" + "-" * 100,
]


@pytest.mark.parametrize("sample", NOT_LOOPS)
def test_varied_text_is_not_a_loop(sample: str) -> None:
    guard = RepeatGuard()
    assert not any(guard.feed(sample[i : i + 5]) for i in range(0, len(sample), 5))


def test_one_phrase_over_and_over_is_a_loop_and_is_kept_once() -> None:
    reply = "Here is what I found. " + LOOP * 20
    guard = RepeatGuard()
    found = next(r for i in range(0, len(reply), 4) if (r := guard.feed(reply[i : i + 4])))
    assert found.unit.strip() == LOOP.strip() or LOOP.strip() in found.unit * 2
    kept = without_repeats(reply[: len(reply)], find_repetition(reply))  # type: ignore[arg-type]
    assert kept.count("cannot access files") == 1 and kept.startswith("Here is what I found.")


def stream_closed(server, model: str) -> bool:
    return [r.outcome for r in server.requests if r.model == model][-1] == "disconnected"


async def test_chat_ends_a_repeating_reply_early_with_a_notice(scripted_server) -> None:
    s = scripted_server
    s.queue("chat-m", Text("Sure. " + LOOP * 150, token_delay=0.002))
    events = await collect(stream_chat(spec(s, "chat-m"), [], "which files are there?"))
    (notice,) = [n for n in of(events, "notice") if "repeating" in n.message]
    assert notice.message.startswith("chat-m's reply kept repeating “As an AI language model")
    assert "ended there" in notice.message and "temperature" in notice.hint
    answer = of(events, "run_finished")[0].answer
    assert answer.count("cannot access files") == 1  # the run kept once in the answer kept
    assert len(text(events)) < len(LOOP) * 30  # ended early, not at the length limit
    await wait_until(lambda: stream_closed(s, "chat-m"))  # and the HTTP stream was closed


async def test_agent_answer_and_function_call_replies_are_ended_too(scripted_server, tmp_path):
    from brainchat.tools.search import FixtureBackend, make_search_tool

    from support import write_fixture

    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "search.json")))
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "mu rhythm"})]))
    s.queue("fc", Text("Let me think. " + "I need more. " * 200, token_delay=0.002))
    s.queue("ans", Text("The mu rhythm [1]. " + "It is 8-12 Hz. " * 200, token_delay=0.002))
    agent = build_agent(
        make_chat_model(spec(s, "fc"), "function_call"),
        make_chat_model(spec(s, "ans"), "answer"),
        [search],
        AgentLimits(evaluation="model"),
    )
    events = await collect(agent.run("what is the mu rhythm?"))
    said = [n.message for n in of(events, "notice") if "repeating" in n.message]
    assert [m.split("'")[0] for m in said] == ["fc", "ans"]
    assert "“I need more.”" in said[0] and "“It is 8-12 Hz.”" in said[1]
    finished = of(events, "run_finished")[0]
    assert finished.reason == "answered" and finished.answer.count("It is 8-12 Hz.") == 1
    await wait_until(lambda: stream_closed(s, "ans") and stream_closed(s, "fc"))
