"""The tool loop's other nodes: plan (plan mode), act (run the calls) and evaluate (judge them)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from brainchat.agent.context import AgentContext, AgentState
from brainchat.agent.exits import Exit
from brainchat.agent.guards import in_force
from brainchat.agent.plan_run import PlanRun, plan_limits
from brainchat.agent.policy import at_round_limit, next_step
from brainchat.events import Evaluation, emit


async def plan(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Plan mode: a validated plan of the request's steps, or none (the ordinary loop)."""
    ctx = runtime.context
    return {"plan": await PlanRun(ctx.deps).create(ctx.run)}


async def act(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Run decide's calls; the round's entries go to evaluate through the state."""
    d, run = runtime.context.deps, runtime.context.run
    guards = in_force(d)
    messages, entries, looped = await d.runner.run_round(
        run,
        state.get("pending_calls", []),
        state.get("round", 0),
        state.get("last_round"),
        d.facts,  # a repeat is judged on the study's state, not only on the calls between
        lambda call: guards.before_tool(d, run, call),
    )
    return {
        "messages": [*state["messages"], *messages],
        "pending_calls": [],
        "last_round": entries,
        "looped": looped,
        "loop_hits": state.get("loop_hits", 0) + (1 if looped else 0),
    }


async def evaluate(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Judge the round just run; the verdict routes: enough -> answer, not enough -> decide."""
    d, run = runtime.context.deps, runtime.context.run
    round_, entries, plan_ = state.get("round", 0), state.get("last_round", []), state.get("plan")
    verdicts = [d.evaluator(e) for e in entries]
    verdict, found = d.round_rule(entries, verdicts, d.limits)
    tool_rounds = state.get("tool_rounds", 0) + (1 if any(v.ok for v in verdicts) else 0)
    if plan_ is not None:
        outcome, found = await PlanRun(d).after_round(run, plan_, entries)
        if outcome == "failed":
            return {
                **Exit(
                    "plan_failed",
                    f"The plan stopped: {found}. The answer says what was done and what was not.",
                    "Raise AGENT_MAX_REPLANS, or fix what the failed step needs and ask again.",
                    why=found,
                ).take(round_),
                "tool_rounds": tool_rounds,
            }
        verdict = outcome
    limits = plan_limits(in_force(d).limits(d, run, d.limits), plan_)
    if plan_ is None and verdict != "enough":
        at_limit = at_round_limit(limits, tool_rounds)
        if done := in_force(d).after_round(d, run, entries, at_limit):
            verdict, found = "enough", done  # the asked steps are done: answer, not a loop
    decision = next_step(
        run,
        limits,
        round_,
        tool_rounds,
        verdict,
        found,
        bool(state.get("looped")),
        entries,
        state.get("loop_hits", 0),
        d.runner.tools,  # a loop stop names the next concrete call
    )
    update: AgentState = {"tool_rounds": tool_rounds, "stop_reason": decision.stop_reason}
    if decision.stop_reason is not None and decision.notice:
        stop = Exit(decision.stop_reason, decision.notice, decision.hint, why=decision.reason)
        return {**stop.take(round_), **update}
    emit(Evaluation(verdict=decision.verdict, reason=decision.reason, round=round_))
    update["verdict_note"] = found if decision.verdict == "not_enough" else None
    update["last_verdict"] = decision.verdict
    return update
