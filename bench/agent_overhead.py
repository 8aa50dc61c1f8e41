"""Agent overhead per model round-trip: brainchat's graph vs LangChain's create_agent vs a raw SDK loop.

All three talk to the same scripted server (zero latency) over real HTTP and run a turn of three
tool rounds plus the answer. The floor is a minimal hand-written openai-SDK streaming loop making
the same HTTP calls; the peer is `langchain.agents.create_agent`. Run:

    .venv/bin/python bench/agent_overhead.py [--turns 30]

    .venv/bin/python bench/agent_overhead.py --turns 30 --ttft 0.05   # 50 ms server latency

Prints median seconds per turn, overhead per round-trip over the floor, and the ratio to it.
With zero latency the ratio mostly measures the floor's tiny cost; the overhead in ms is the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from langchain_core.tools import StructuredTool  # noqa: E402

from brainchat.agent.graph import build_agent  # noqa: E402
from brainchat.llm import make_chat_model  # noqa: E402
from brainchat.settings import AgentLimits, ModelSpec  # noqa: E402
from brainchat.testing.scripted_server import Call, ScriptedServer, Text, ToolCalls  # noqa: E402
from brainchat.tools.registry import set_flags  # noqa: E402

ROUNDS = 3
ANSWER = "EEGNet reached 0.91 accuracy on the held-out subjects according to the tool results."


async def lookup(topic: str) -> str:
    """Look a topic up (instant)."""
    return f"Result for {topic}: a sufficiently long deterministic tool result text."


TOOL_SCHEMA = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a topic up.",
            "parameters": {
                "type": "object",
                "properties": {"topic": {"type": "string"}},
                "required": ["topic"],
            },
        },
    }
]


TTFT = 0.0  # seconds of server latency before each response (--ttft)


def script(server: ScriptedServer, fc: str, answer: str | None) -> None:
    calls = [ToolCalls([Call("lookup", {"topic": f"t{i}"})], ttft=TTFT) for i in range(ROUNDS)]
    server.queue(fc, *calls)
    if answer is None:
        server.queue(fc, Text(ANSWER, ttft=TTFT))
    else:
        server.queue(fc, Text("enough", ttft=TTFT))
        server.queue(answer, Text(ANSWER, ttft=TTFT))


async def floor_turn(client, model: str, answer_model: str | None) -> None:
    """The minimum: stream each response, run the tool, append, repeat; optionally one answer call."""
    messages: list[dict] = [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": "q"},
    ]
    while True:
        stream = await client.chat.completions.create(
            model=model,
            messages=messages,
            tools=TOOL_SCHEMA,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, calls = "", {}
        async for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for tc in delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": tc.id, "name": "", "args": ""})
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["args"] += (tc.function.arguments or "") if tc.function else ""
        if not calls:
            break
        messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["args"]},
                    }
                    for c in calls.values()
                ],
            }
        )
        for c in calls.values():
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": c["id"],
                    "content": await lookup(**json.loads(c["args"])),
                }
            )
    if answer_model:
        stream = await client.chat.completions.create(
            model=answer_model,
            messages=messages[:2] + [{"role": "user", "content": "results"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass


def spec(server: ScriptedServer, model: str) -> ModelSpec:
    return ModelSpec(
        model=model,
        provider="openai-compatible",
        base_url=server.base_url,
        api_key="x",
        max_retries=0,
    )


async def measure(turns: int) -> dict[str, list[float]]:
    import openai
    from langchain.agents import create_agent

    tool = set_flags(
        StructuredTool.from_function(
            coroutine=lookup, name="lookup", description="Look a topic up."
        ),
        read_only=True,
    )
    times: dict[str, list[float]] = {"floor5": [], "floor4": [], "peer": [], "brainchat": []}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    with ScriptedServer() as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        ours = build_agent(
            make_chat_model(spec(server, "b-fc"), "function_call"),
            make_chat_model(spec(server, "b-ans"), "answer"),
            [tool],
            AgentLimits(max_iterations=10),
        )
        peer = create_agent(
            make_chat_model(spec(server, "p-fc"), "function_call"),
            [tool],
            system_prompt="Use tools.",
        )
        for i in range(turns + 3):  # the first 3 turns warm up connections and caches
            script(server, "f5-fc", "f5-ans")
            script(server, "f4-fc", None)
            script(server, "p-fc", None)
            script(server, "b-fc", "b-ans")
            runs = {
                "floor5": lambda: floor_turn(client, "f5-fc", "f5-ans"),
                "floor4": lambda: floor_turn(client, "f4-fc", None),
                "peer": lambda: peer.ainvoke({"messages": [{"role": "user", "content": "q"}]}),
                "brainchat": lambda: _drain(ours.run("q")),
            }
            names = list(runs)
            names = names[i % 4 :] + names[: i % 4]  # rotated: no contestant always runs first
            for name in names:
                run = runs[name]
                started, cpu_started = time.perf_counter(), time.thread_time()
                await run()
                if i >= 3:
                    times[name].append(time.perf_counter() - started)
                    cpu[name].append(time.thread_time() - cpu_started)
            server.clear()
    return times, cpu


async def _drain(events) -> None:
    async for _ in events:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--ttft", type=float, default=0.0, help="server latency per response, s")
    args = parser.parse_args()
    global TTFT
    TTFT, turns = args.ttft, args.turns
    times, cpu = asyncio.run(measure(turns))
    med = {k: statistics.median(v) for k, v in times.items()}
    ours_calls, peer_calls = ROUNDS + 2, ROUNDS + 1
    ours_over = (med["brainchat"] - med["floor5"]) / ours_calls * 1000
    peer_over = (med["peer"] - med["floor4"]) / peer_calls * 1000
    print(
        f"turn = {ROUNDS} tool rounds + answer; server latency {TTFT * 1000:.0f} ms per response; median of {turns} turns (s per turn)"
    )
    print(
        f"floor (openai SDK loop, {ours_calls} calls): {med['floor5']:.4f}   ({peer_calls} calls): {med['floor4']:.4f}"
    )
    print(
        f"peer  (langchain create_agent, {peer_calls} calls): {med['peer']:.4f}  overhead {peer_over:.2f} ms/round-trip  ratio {med['peer'] / med['floor4']:.3f}"
    )
    print(
        f"brainchat graph ({ours_calls} calls, events+ledger+stats): {med['brainchat']:.4f}  overhead {ours_over:.2f} ms/round-trip  ratio {med['brainchat'] / med['floor5']:.3f}"
    )
    ratio = med["brainchat"] / med["floor5"]
    print(f"brainchat minus peer: {ours_over - peer_over:+.2f} ms per round-trip")
    # The client's own CPU time (this thread's; the server runs in another): what each framework
    # spends per round-trip, far less moved by other processes on the machine than wall time.
    c = {k: statistics.median(v) for k, v in cpu.items()}
    print(
        f"client CPU per round-trip over the floor: peer "
        f"{(c['peer'] - c['floor4']) / peer_calls * 1000:.2f} ms, brainchat "
        f"{(c['brainchat'] - c['floor5']) / ours_calls * 1000:.2f} ms"
    )
    # Each turn's four runs are back to back: their difference is less touched by the load of
    # the moment (other processes) than a difference of medians taken over the whole run.
    paired = [
        (b - f5) / ours_calls * 1000 - (p - f4) / peer_calls * 1000
        for b, f5, p, f4 in zip(
            times["brainchat"], times["floor5"], times["peer"], times["floor4"], strict=True
        )
    ]
    print(
        f"brainchat minus peer, median of the {turns} turns' own differences: "
        f"{statistics.median(paired):+.2f} ms per round-trip"
    )
    print(
        f"target overhead <= 6 ms per round-trip: {'met' if ours_over <= 6.0 else 'NOT met'}; "
        f"ratio to floor <= 1.12: {'met' if ratio <= 1.12 else 'NOT met'} "
        "(the ratio depends on server latency: use --ttft 0.05 for a realistic one)"
    )


if __name__ == "__main__":
    main()
