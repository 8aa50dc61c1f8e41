"""Per-call latency of an MCP tool through the agent: kept session (McpHub) vs a fresh session per call.

The fresh-session baseline is langchain-mcp-adapters' `MultiServerMCPClient.get_tools()`, whose
tools open a new session (a new stdio process) on every call. Both run in the same process, through
the same agent graph, driven by the scripted model server; the figure is the tool step's duration
(`ToolFinished.duration`), plus the same call made directly on the LangChain tool (no agent).

    .venv/bin/python bench/mcp_latency.py [--calls 20] [--server lab|time]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "tests" / "mcp_servers" / "eeg_lab.py"
TIME_EXE = Path(sys.executable).parent / "mcp-server-time"


def server(kind: str) -> tuple[dict[str, Any], str, Any]:
    """(stdio command spec, tool name, args for call i)."""
    if kind == "time":
        spec = {"command": str(TIME_EXE), "args": ["--local-timezone", "UTC"]}
        zones = ["UTC", "Europe/Paris", "Asia/Tokyo", "America/New_York"]
        return spec, "get_current_time", lambda i: {"timezone": zones[i % len(zones)]}
    return {"command": sys.executable, "args": [str(LAB)]}, "add", lambda i: {"a": i, "b": 1}


async def agent_durations(tool: Any, name: str, args_for: Any, calls: int) -> list[float]:
    """Run `calls` agent turns, each making one call of `tool`; return the tool steps' durations."""
    from brainchat.agent.graph import build_agent
    from brainchat.llm import make_chat_model
    from brainchat.settings import ModelSpec
    from brainchat.testing.scripted_server import Call, ScriptedServer, Text, ToolCalls

    out: list[float] = []
    with ScriptedServer() as s:
        spec = ModelSpec(provider="openai-compatible", model="m", base_url=s.base_url, api_key="x")
        agent = build_agent(make_chat_model(spec, "function_call"), tools=[tool])
        for i in range(calls):
            s.queue("m", ToolCalls([Call(name, args_for(i))]), Text("enough"), Text("answer"))
            async for event in agent.run(f"call {i}"):
                if event.type == "tool_finished":
                    if event.status != "success":
                        raise RuntimeError(f"{name} failed through the agent: {event.error}")
                    out.append(event.duration)
    return out


async def direct_durations(tool: Any, args_for: Any, calls: int) -> list[float]:
    out = []
    for i in range(calls):
        t = time.perf_counter()
        await tool.ainvoke(args_for(i))
        out.append(time.perf_counter() - t)
    return out


def row(label: str, xs: list[float]) -> str:
    xs_ms = sorted(x * 1000 for x in xs)
    p90 = xs_ms[min(len(xs_ms) - 1, int(0.9 * len(xs_ms)))]
    return (
        f"{label:<34} median {statistics.median(xs_ms):8.1f} ms   mean {statistics.mean(xs_ms):8.1f} ms"
        f"   p90 {p90:8.1f} ms   (n={len(xs_ms)})"
    )


async def main(calls: int, kind: str) -> None:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from brainchat.tools.mcp import McpHub
    from brainchat.tools.mcp_config import McpServerConfig

    spec, name, args_for = server(kind)
    # read-only by config: the eeg-lab test server's tools declare no hints, so they would ask
    hub = McpHub([McpServerConfig(name=kind, read_only=True, **spec)])
    t = time.perf_counter()
    await hub.start()
    start_s = time.perf_counter() - t
    kept = {t.name: t for t in hub.toolset().tools}[name]
    client = MultiServerMCPClient({kind: {"transport": "stdio", **spec}})
    fresh = {t.name: t for t in await client.get_tools()}[name]
    try:
        await kept.ainvoke(args_for(0))  # warm both paths once (imports, caches)
        await fresh.ainvoke(args_for(0))
        results = {
            "agent, kept session": await agent_durations(kept, name, args_for, calls),
            "agent, fresh session per call": await agent_durations(fresh, name, args_for, calls),
            "direct, kept session": await direct_durations(kept, args_for, calls),
            "direct, fresh session per call": await direct_durations(fresh, args_for, calls),
        }
    finally:
        await hub.close()
    print(
        f"MCP tool `{name}` on server `{kind}` (stdio), {calls} calls per path; hub start {start_s:.2f} s"
    )
    for label, xs in results.items():
        print(row(label, xs))
    for where in ("agent", "direct"):
        kept_m = statistics.median(results[f"{where}, kept session"])
        fresh_m = statistics.median(results[f"{where}, fresh session per call"])
        print(f"{where}: fresh/kept median ratio = {fresh_m / kept_m:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--server", choices=["lab", "time"], default="lab")
    ns = parser.parse_args()
    asyncio.run(main(ns.calls, ns.server))
