"""The plan's life in a run: create it, show it, verify each round, replan, check the answer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from brainchat.agent.approval import Ask, request
from brainchat.agent.budget import Budget, fit_run
from brainchat.agent.context import Deps
from brainchat.agent.plan import (
    Plan,
    PlanStep,
    answer_section,
    parse_plan,
    planner_messages,
    unverified_claims,
    verify,
)
from brainchat.agent.policy import RoundVerdict
from brainchat.agent.state import ERROR_CHARS, LedgerEntry, RunContext, clip
from brainchat.events import (
    AnswerToken,
    Notice,
    PlanCreated,
    PlanStepUpdated,
    Replanned,
    emit,
)
from brainchat.llm import describe_error
from brainchat.modelclient import ModelClient, ModelTimeout
from brainchat.usage import tools_tokens


class PlanRun:
    """Planning for one agent (deps injected); a run's plan lives in its graph state."""

    def __init__(self, deps: Deps) -> None:
        self.d = deps

    def _tools(self) -> dict[str, str]:
        return {name: tool.description or "" for name, tool in self.d.runner.tools.items()}

    def _study(self) -> str:
        if self.d.context is None:
            return ""
        try:
            return "Current EEG study: " + self.d.context()
        except Exception:  # noqa: BLE001 - a hint only
            return ""

    async def _ask_planner(
        self, ctx: RunContext, messages: list[Any], round_: int = 0
    ) -> tuple[Any, str]:
        llm: Any = self.d.function_call_llm
        if self.d.tool_calling == "prompt":  # a model that cannot call tools writes the JSON
            messages = [*messages[:-1], _as_text_request(messages[-1])]
        else:
            llm = llm.bind_tools([_plan_tool()])
        spec = self.d.specs.get("function_call")
        name = self.d.names["function_call"]
        # Fitted like decide's requests: its own tool (submit_plan) counted, nothing over sent.
        own = self.d.budgets["function_call"]
        tools = 0 if self.d.tool_calling == "prompt" else tools_tokens([_plan_tool()])
        budget = Budget(own.window, own.reserve, tools)
        fitted = fit_run(messages[0], [], messages[1:], budget)
        if not fitted.fits:
            return None, (
                f"the planner's request needs about {fitted.tokens:,} tokens, more than the "
                f"{budget.tokens:,} that {name}'s context window of {budget.window:,} tokens "
                "leaves for input"
            )
        messages = fitted.messages
        try:  # the way decide asks: stream_options refusal, "stream_tool_calls": false
            reply = await ModelClient(llm, spec, name).ask(messages, [ctx.callback], round_=round_)
        except Exception as exc:  # noqa: BLE001 - no plan: the ordinary loop runs
            error = exc.error if isinstance(exc, ModelTimeout) else exc
            return None, f"the planner call failed: {describe_error(error, spec, name=name)}"
        return parse_plan(reply, set(self.d.runner.tools))

    async def create(self, ctx: RunContext) -> Plan | None:
        """A validated plan, or None (plan mode off, no plan needed, or no usable plan)."""
        mode = self.d.limits.plan_mode
        if mode == "off" or not self.d.runner.tools:
            return None
        messages = planner_messages(ctx.question, self._tools(), self._study(), mode)
        spec, why = await self._ask_planner(ctx, messages)
        if spec is None:
            emit(
                Notice(
                    kind="info",
                    message=f"No plan was made ({why}); the agent works step by step without one.",
                )
            )
            return None
        if not spec.needs_plan or (mode == "auto" and len(spec.steps) < 2):
            return None
        plan = Plan([PlanStep(i + 1, s.title, s.tool) for i, s in enumerate(spec.steps)])
        emit(
            PlanCreated(
                steps=[s.to_dict() for s in plan.steps],
                mode=mode,
                max_replans=self.d.limits.max_replans,
            )
        )
        return plan

    def prompt(self, plan: Plan) -> str:
        """What decide adds for the function-call model: progress and the step to do now."""
        step = plan.current()
        if step is None:
            return ""
        if step.status == "ready":
            step.status = "running"
            emit(PlanStepUpdated(step_id=step.id, title=step.title, status="running"))
        lines = [f"{s.id}. {s.title} [{s.status}]" for s in plan.steps]
        tool = f" with {step.tool}" if step.tool else ""
        return (
            "(Plan progress:\n" + "\n".join(lines) + f"\nNow carry out step {step.id}: "
            f"{step.title}{tool}. Call only what this step needs.)"
        )

    def _mark(self, step: PlanStep, status: Any, detail: str) -> None:
        # The detail goes into the replan request, every decide prompt and the answer: bounded.
        detail = clip(detail, ERROR_CHARS)
        step.status, step.detail = status, detail
        emit(PlanStepUpdated(step_id=step.id, title=step.title, status=status, detail=detail))

    async def after_round(
        self, ctx: RunContext, plan: Plan, entries: list[LedgerEntry]
    ) -> tuple[RoundVerdict | Literal["failed"], str]:
        """Verify the round: ("enough"|"continue"|"not_enough"|"failed", reason)."""
        pool = list(entries)
        verified = []
        while (step := plan.current()) is not None:
            status, detail, used = verify(step, pool, self.d.facts, self.d.domain.shows)
            if status == "pending":
                break
            if status == "failed":
                self._mark(step, "failed", detail)
                round_ = entries[0].round if entries else 0  # the replan's tokens are this round's
                return await self._replan(ctx, plan, step, detail, round_)
            self._mark(step, "done", detail)
            verified.append(step)
            if used is not None:
                pool.remove(used)
        if plan.done():
            verified_all = sum(s.status == "done" for s in plan.steps)
            return "enough", f"all {verified_all} plan steps verified"
        done = (
            f"verified step(s) {[s.id for s in verified]}"
            if verified
            else "no step verified this round"
        )
        if verified and self.d.limits.execution_mode == "single_step":
            if not await self._next_confirmed(ctx, plan):
                return "enough", f"single-step mode: {done}; the next step waits for you"
        return "continue", done

    async def _next_confirmed(self, ctx: RunContext, plan: Plan) -> bool:
        """Single-step mode: one planned step per user confirmation (headless: stop here)."""
        confirm = ctx.confirm or self.d.runner.confirm
        step = plan.current()
        if confirm is None or step is None:
            return False
        answer = await request(
            confirm, f"plan step {step.id}: {step.title}", {"tool": step.tool}, Ask("plan_step")
        )
        return answer != "reject"

    async def _replan(
        self, ctx: RunContext, plan: Plan, step: PlanStep, why: str, step_round: int
    ) -> tuple[RoundVerdict | Literal["failed"], str]:
        limit = self.d.limits.max_replans
        reason = f"step {step.id} ({step.title}) failed: {why}"
        if plan.replans >= limit:
            plan.failed_reason = reason
            return "failed", f"{reason}; no replans left ({limit} used)"
        done = "\n".join(f"{s.id}. {s.title}: {s.status} {s.detail}" for s in plan.steps)
        messages = planner_messages(
            ctx.question, self._tools(), self._study(), "always", done=f"Progress so far:\n{done}"
        )
        spec, problem = await self._ask_planner(ctx, messages, step_round)
        plan.replans += 1
        plan.history.append(reason)
        if spec is None or not spec.steps:
            plan.failed_reason = (
                f"{reason}; the replanner gave no usable plan ({problem or 'no steps'})"
            )
            return "failed", plan.failed_reason
        plan.replaced.add(step.id)
        next_id = max(s.id for s in plan.steps) + 1
        plan.steps += [PlanStep(next_id + i, s.title, s.tool) for i, s in enumerate(spec.steps)]
        emit(
            Replanned(
                attempt=plan.replans,
                max_attempts=limit,
                reason=reason,
                steps=[s.to_dict() for s in plan.steps],
            )
        )
        return (
            "not_enough",
            f"{reason}; replanned ({plan.replans}/{limit}): continue with the new steps",
        )

    def answer_input(self, plan: Plan | None) -> str:
        return "" if plan is None else "\n" + answer_section(plan)

    def check_answer(self, plan: Plan | None, text: str, model: str) -> str:
        """Correct an answer that claims a step the run did not verify; returns the final text."""
        if plan is None:
            return text
        claims = unverified_claims(text, plan)
        if not claims:
            return text
        lines = [
            f'step {s.id} "{s.title}" was not done ({s.status}{": " + s.detail if s.detail else ""})'
            for s, _ in claims
        ]
        note = (
            "\n\n⚠️ Correction: "
            + "; ".join(lines)
            + ". Disregard any claim above that it was done."
        )
        emit(AnswerToken(role="answer", model=model, text=note))
        emit(
            Notice(
                kind="unverified_claim",
                message="The answer claimed step(s) the run did not verify: "
                + "; ".join(f'"{sentence[:120]}"' for _, sentence in claims),
                hint="Only the steps marked done in the plan happened; ask again to retry the others.",
            )
        )
        return text + note


def _as_text_request(message: Any) -> Any:
    """The planner's last message, asking for the plan as a JSON object in the reply's text."""
    from langchain_core.messages import HumanMessage

    return HumanMessage(
        f"{message.content}\n\nReply with only the JSON object "
        '{"needs_plan": ..., "steps": [...]} (no tool call).'
    )


def _plan_tool() -> dict[str, Any]:
    from brainchat.agent.plan import PLAN_TOOL

    return PLAN_TOOL


def plan_limits(limits: Any, plan: Plan | None) -> Any:
    """A plan of n steps may take n successful rounds (plus replans) even past auto mode's limit."""
    if plan is None:
        return limits
    need = len(plan.steps) + limits.max_replans
    return replace(limits, max_auto_rounds=max(limits.max_auto_rounds, need))
