"""Run one scenario against one model pair: set up a fresh session, ask, record what happened."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from brainchat.evals.checks import RunRecord
from brainchat.evals.pairs import ModelPair, scripted_specs
from brainchat.evals.scenario import Scenario
from brainchat.events import Event
from brainchat.settings import AgentLimits, Settings, parse_tool_calling

LIMIT_KEYS = {f for f in AgentLimits.__dataclass_fields__}
GRACE = 60.0  # seconds past the run's own time limit before the harness gives up on it


def answer_share(limit: float) -> float:
    """What the agent keeps of its time limit for the answer (agent/graph.py's answer_reserve)."""
    return min(limit * 0.2, 15.0)


def harness_wait(limit: float) -> float:
    """How long the harness waits for a run: its limit, the answer's share on top (an answer
    stage that outlasts the tool loop's deadline is the run's to report), and a grace."""
    return limit + answer_share(limit) + GRACE


async def run_scenario(
    scenario: Scenario, pair: ModelPair, server: Any = None, time_limit: float | None = None
) -> RunRecord:
    """A fresh session in a temporary data folder; the scripted pair gets the scenario's script.

    `time_limit` is the run's own limit (AGENT_MAX_EXECUTION_TIME or `--scenario-timeout`; the
    app's default when None); a scenario's `setup.limits` still overrides it."""
    with tempfile.TemporaryDirectory(prefix="brainchat-eval-") as tmp:
        try:
            return await _run(scenario, pair, server, Path(tmp), time_limit)
        except Exception as exc:  # noqa: BLE001 - one broken scenario never stops the suite
            return RunRecord(events=[], error=f"{type(exc).__name__}: {exc}")


async def _run(
    scenario: Scenario, pair: ModelPair, server: Any, tmp: Path, time_limit: float | None
) -> RunRecord:
    from brainchat.session import Session

    setup = scenario.setup
    settings = await _settings(scenario, pair, server, tmp, time_limit)
    session = Session(settings)
    session.set_mode("agent")
    if setup.get("knowledge"):
        await _knowledge(session, setup["knowledge"], scenario.path.parent, tmp)
    approve = bool(setup.get("approve", False))

    async def confirm(name: str, args: dict[str, Any], ask: Any) -> bool:
        return approve

    events: list[Event] = []
    hub = _mcp_hub(setup.get("mcp"), tmp)
    async with hub if hub is not None else _Nothing():
        if hub is not None:
            session.use_configured_tools(hub.toolset(reserved_names=set(session.toolset().names())))
        await _prepare_study(session, setup.get("study", []))
        limit = harness_wait(settings.limits.max_execution_time)

        async def consume() -> None:
            async for event in session.ask(scenario.question, confirm=confirm):
                events.append(event)

        try:
            await asyncio.wait_for(consume(), limit)
        except TimeoutError:
            return RunRecord(events=events, error=f"the run did not finish within {limit:g} s")
        schemas = {row["name"]: row["args_schema"] for row in session.toolset().describe()}
    facts = session.study.facts()
    return RunRecord(
        events=events,
        stage=facts["stage"],
        steps=list(facts["steps"]),
        recordings=len(facts["files"]),
        schemas=schemas,
    )


class _Nothing:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


async def _settings(
    scenario: Scenario, pair: ModelPair, server: Any, tmp: Path, time_limit: float | None
) -> Settings:
    setup = scenario.setup
    data_dir = tmp / "data"
    data_dir.mkdir()
    demo = setup.get("demo_data")
    if demo:
        from brainchat.eeg.io.synthetic import write_demo_set

        opts = {
            "subjects": 1,
            "sessions": 1,
            "trials": 20,
            **(demo if isinstance(demo, dict) else {}),
        }
        await asyncio.to_thread(write_demo_set, data_dir / "demo", **opts)
    fixture = _search_fixture(setup.get("search_fixture"), scenario.path.parent, tmp)
    limits = AgentLimits()  # the time limit is the settings' (or the flag's), not a fixed one
    if time_limit is not None:
        limits = replace(limits, max_execution_time=float(time_limit))
    overrides = dict(setup.get("limits") or {})
    unknown = sorted(set(overrides) - LIMIT_KEYS)
    if unknown:
        raise ValueError(f"setup.limits: unknown field(s) {unknown}; allowed: {sorted(LIMIT_KEYS)}")
    limits = replace(limits, **overrides)
    fc, answer = pair.function_call, pair.answer
    if pair.scripted:
        if server is None:
            raise RuntimeError("the scripted pair needs the scripted server")
        fc, answer = scripted_specs(server.base_url, scenario.name)
        if setup.get("tool_calling"):  # the scripted model plays one without native tool calls
            calling = parse_tool_calling("setup.tool_calling", setup["tool_calling"])
            fc = replace(fc, tool_calling=calling)
        for role, spec in (("function_call", fc), ("answer", answer)):
            if scenario.script.get(role):
                server.queue(spec.model, *scenario.script[role])
    return Settings(
        function_call_model=fc,
        answer_model=answer,
        limits=limits,
        default_mode="agent",
        data_dir=data_dir,
        search_backend="fixture" if fixture else "ddgs",
        search_fixture=fixture,
    )


def _search_fixture(value: Any, base: Path, tmp: Path) -> Path | None:
    """A fixture file (relative to the scenario) or inline results, as a file the backend reads."""
    if not value:
        return None
    if isinstance(value, str):
        path = (base / value).resolve()
        if not path.is_file():
            raise ValueError(f"setup.search_fixture: {path} does not exist")
        return path
    path = tmp / "search.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _mcp_hub(value: Any, tmp: Path) -> Any:
    """MCP servers for the run: "time" is the bundled mcp-server-time; objects are config entries."""
    if not value:
        return None
    from brainchat.tools.mcp import McpHub

    entries = value if isinstance(value, dict) else {name: name for name in value}
    servers = {name: _time_server() if cfg == "time" else cfg for name, cfg in entries.items()}
    path = tmp / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return McpHub.from_config_file(path)


def _time_server() -> dict[str, Any]:
    exe = Path(sys.executable).parent / "mcp-server-time"
    command, args = (str(exe), []) if exe.exists() else (sys.executable, ["-m", "mcp_server_time"])
    return {"command": command, "args": [*args, "--local-timezone", "UTC"], "readOnly": True}


async def _prepare_study(session: Any, calls: list[dict[str, Any]]) -> None:
    """Set-up tool calls run before the question (e.g. load the demo data); a failure is fatal."""
    if not calls:
        return
    tools = {t.name: t for t in session.toolset().tools}
    for call in calls:
        name = call.get("tool")
        if name not in tools:
            raise ValueError(f"setup.study: unknown tool {name!r}")
        await tools[name].ainvoke(call.get("args") or {})


async def _knowledge(session: Any, files: list[str], base: Path, tmp: Path) -> None:
    """The user's documents (paths relative to the scenario), in a store of the run's own, and
    the session's search_knowledge tool over them; a document that is refused is fatal."""
    from brainchat.knowledge.service import Knowledge
    from brainchat.knowledge.sqlite_store import SqliteStore
    from brainchat.knowledge.tool import make_knowledge_tool

    knowledge = Knowledge(SqliteStore(tmp / "knowledge.db"))
    for name in files:
        path = (base / name).resolve()
        if not path.is_file():
            raise ValueError(f"setup.knowledge: {path} does not exist")
        for r in await asyncio.to_thread(knowledge.add, "eval", path):
            if r.status == "refused":
                raise ValueError(f"setup.knowledge: {r.name} was refused: {r.reason}")
    tool = make_knowledge_tool(knowledge, "eval")
    session.toolbox.use_knowledge(lambda: tool)
