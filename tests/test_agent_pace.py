"""The answer stage keeps the time its model needs (issue #23), with the scripted server's delays.

A slow model's answer was cut at the 15 s the tool loop kept for it ("Steps done (successful tool
calls):\n\n- Load"). Now the reserve follows the answer model's measured speed, or brainchat
states the gathered facts itself when even that is not enough.
"""

from __future__ import annotations

import asyncio
import json
from itertools import count

from langchain_core.tools import StructuredTool

from brainchat.agent import habits
from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.registry import set_flags

from support import collect, of, spec, text

WORDS = " ".join(f"w{i}" for i in range(90)) + "."  # an answer of 90 words


def step_tool() -> StructuredTool:
    async def step(tag: str = "") -> str:
        await asyncio.sleep(0.5)
        return f"step {tag} measured 42 units, all channels clean"

    tool = StructuredTool.from_function(coroutine=step, name="step", description="one step")
    return set_flags(tool, read_only=True)  # type: ignore[return-value]


async def test_a_slow_models_answer_gets_the_time_its_speed_needs(scripted_server):
    """One slow model plays both roles: its function-call replies (8 tokens in about a second)
    measure ~8 tokens/s, so 100 reply tokens need over 10 s; the old reserve (a fifth of 30 s,
    6 s) cut the 9-second answer at its 60th word, and the notice said the partial answer was
    kept. Its first reply waits a second before its first token (a cold server, or a busy
    machine): the speed takes each reply's own wait, not the first one's for every reply (that
    measured ~60 tokens/s, kept 6 s and cut the answer at w59 in a suite run at load 15)."""
    s = scripted_server
    n = count()

    def respond(request):
        if request.tools:  # the function-call request: one more step, slowly
            i = next(n)
            return ToolCalls(
                [Call("step", {"tag": f"t{i}"})],
                token_delay=0.5,
                completion_tokens=8,
                ttft=1.0 if i == 0 else 0.0,
            )
        return Text(WORDS, token_delay=0.1)  # the answer: about 9 s

    s.responder = respond
    m = spec(s, "m", max_tokens=100)
    model = make_chat_model(m, "function_call")
    limits = AgentLimits(max_execution_time=30, max_iterations=100, max_auto_rounds=100)
    agent = build_agent(model, None, [step_tool()], limits, specs={"function_call": m, "answer": m})
    events = await collect(agent.run("run the steps"))
    assert of(events, "run_finished")[0].reason == "timeout"  # the loop ran until its share ended
    assert text(events) == WORDS  # the whole answer, not cut
    assert not [n for n in of(events, "notice") if "partial answer" in n.message]
    assert agent.last_run.answer_reserve > 6.0


async def test_too_little_time_for_a_remembered_slow_model_ends_with_brainchats_facts(
    scripted_server, tmp_path, monkeypatch
):
    """The answer model wrote 1 token/s in an earlier run: 100 tokens need 100 s, more than the
    run has; its answer would be cut, so brainchat writes the facts itself and asks it nothing."""
    monkeypatch.setattr(habits, "FOLDER", tmp_path)
    s = scripted_server
    fc, ans = spec(s, "fc"), spec(s, "slow", max_tokens=100)
    habits.remember(ans, answer_tps=1.0, answer_ttft=2.0)
    s.queue("fc", ToolCalls([Call("step", {"tag": "a"})]), Text("Done."))
    limits = AgentLimits(max_execution_time=20, evaluation="model")
    agent = build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        [step_tool()],
        limits,
        specs={"function_call": fc, "answer": ans},
    )
    events = await collect(agent.run("run the step"))
    assert not s.requests_for("slow")  # never asked: its answer could not have been finished
    answer = text(events)
    assert answer.startswith("brainchat writes this answer itself")
    assert "step: step a measured 42 units" in answer  # the gathered fact, stated
    (notice,) = [n for n in of(events, "notice") if n.kind == "timeout"]
    assert "1.0 tokens/s" in notice.message and "brainchat's own list" in notice.message
    assert of(events, "run_finished")[0].answer == answer


async def test_an_answer_models_speed_is_remembered(scripted_server, tmp_path, monkeypatch):
    monkeypatch.setattr(habits, "FOLDER", tmp_path)
    s = scripted_server
    fc, ans = spec(s, "fc"), spec(s, "ans")
    s.queue("fc", Text("No tools needed."))
    s.queue("ans", Text(WORDS, completion_tokens=90))
    agent = build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        [],
        AgentLimits(),
        specs={"function_call": fc, "answer": ans},
    )
    await collect(agent.run("hello"))
    stored = json.loads((tmp_path / habits.FILE).read_text())[habits.model_key(ans)]
    assert stored["answer_tps"] > 0 and "answer_ttft" in stored
