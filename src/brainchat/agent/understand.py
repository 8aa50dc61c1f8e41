"""The understand node: a guided model's record of the request, made before its first step.

A minimal profile skips it (its rules read nothing of the request); a model in `auto` tool
calling makes it only when its first reply calls nothing, to tell a request that needs tools
from one that does not (agent/automode.py).
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from brainchat.agent import record
from brainchat.agent.context import AgentContext, AgentState, Deps
from brainchat.agent.state import RunContext


async def understand(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Make the run's record (once); the state is unchanged: the record is the run's."""
    await record_of(runtime.context.deps, runtime.context.run)
    return {}


async def record_of(d: Deps, run: RunContext) -> record.RequestRecord | None:
    """The run's record, made on first use: the steps the domain knows and the offered tools'
    arguments, the study as it is, the last turn."""
    if run.learning.get("record_asked"):
        return run.record
    run.learning["record_asked"] = True
    run.facts_at_start = d.facts() if d.facts is not None else {}
    steps = list(d.domain.steps())
    lines = []
    for step in steps:
        tools = ", ".join(
            f"{t}({', '.join(sorted(d.tool_arguments(t)))})"
            for t in step.tools
            if t in d.runner.tools
        )
        if tools:
            lines.append(f"- {step.id}: {step.about}. Tools: {tools}")
    ids = [s.id for s in steps if any(t in d.runner.tools for t in s.tools)]
    request = record.messages(
        run.question, run.history, "\n".join(lines) or "(none)", d.study_text()
    )
    run.record = await record.understand(
        d.function_call_llm,
        d.specs.get("function_call"),
        d.names["function_call"],
        request,
        ids,
        sorted(d.runner.tools),
        [run.callback],
    )
    return run.record
