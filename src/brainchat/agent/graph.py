"""build_agent: the dual-LLM LangGraph state machine decide -> act -> evaluate -> ... -> answer."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from brainchat.agent import automode, decide, loop, pace
from brainchat.agent.answer import answer as write_answer
from brainchat.agent.approval import Confirm
from brainchat.agent.build import ROLES, budgets, names, retag
from brainchat.agent.context import AgentContext, AgentState, Deps, no_room
from brainchat.agent.guided import GUIDED
from brainchat.agent.offer import ToolOffer
from brainchat.agent.policy import Evaluator, RoundRule, default_evaluator, default_round_rule
from brainchat.agent.state import RunContext
from brainchat.agent.toolrun import ToolRunner
from brainchat.agent.understand import understand
from brainchat.domain import Domain, NoDomain
from brainchat.events import (
    Event,
    Notice,
    RunFinished,
    RunStarted,
    Stats,
    StopReason,
    ToolFinished,
    emit,
    stream_events,
)
from brainchat.redact import get_logger
from brainchat.settings import AgentLimits, ModelSpec
from brainchat.tools import mcp_sampling
from brainchat.tools.schemas import openai_schema
from brainchat.usage import UsageCallback, UsageLedger, count_tokens

log = get_logger("brainchat.agent")  # masks secrets in records


def after_start(
    state: AgentState, runtime: Runtime[AgentContext]
) -> Literal["understand", "plan", "decide"]:
    """A guided model first makes its record of the request; plan mode off (the default) goes
    straight to decide, since the plan node would only say "no plan", at the cost of a step."""
    d = runtime.context.deps
    if d.profile.guided and d.domain.steps():
        return "understand"
    return "decide" if d.limits.plan_mode == "off" else "plan"


def after_understand(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["plan", "decide"]:  # fmt: skip
    return "decide" if runtime.context.deps.limits.plan_mode == "off" else "plan"


def after_decide(state: AgentState) -> Literal["act", "answer", "finish", "decide"]:
    """Tool calls -> act; a reminder of asked steps never run -> decide again; nothing left to
    ask (or a stop with results) -> answer; else end."""
    if state.get("pending_calls"):
        return "act"
    if state.get("reminded") and not state.get("error") and not state.get("stop_reason"):
        messages = state.get("messages") or []
        if messages and isinstance(messages[-1], HumanMessage):  # the reminder, not yet read
            return "decide"
    return "finish" if state.get("error") else "answer"


def after_evaluate(state: AgentState) -> Literal["decide", "answer"]:
    """The verdict routes: enough or a limit -> answer; continue or not enough -> decide."""
    return "answer" if state.get("last_verdict") in ("enough", "answer") else "decide"


def _route(path: Callable[..., str]) -> Any:
    """A conditional edge's router as langgraph runs it best: a plain function is run in a worker
    thread on every step of an async run (7 thread trips in a 3-round turn) and traced through
    the callback manager; this one is called inline on the loop, untraced (as create_agent's)."""
    from langgraph._internal._runnable import RunnableCallable

    async def inline(state: AgentState, **injected: Any) -> str:
        return path(state, **injected)  # `runtime`, when the router asks for it

    return RunnableCallable(path, inline, name=path.__name__, trace=False)


async def _act_and_evaluate(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """act, then evaluate on the state act leaves, as one step of the graph: the same calls,
    events and state as two nodes (every key of AgentState is last-value), one graph step less
    per tool round (a LangGraph step costs ~0.1-0.2 ms of CPU)."""
    acted = await loop.act(state, runtime)
    judged = await loop.evaluate({**state, **acted}, runtime)
    return {**acted, **judged}


async def _decide(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """decide, with the tools as they are now: a server's tools/list_changed reaches the request."""
    await runtime.context.deps.follow_tools()
    return await decide.decide(state, runtime)


@functools.cache
def _graph() -> Any:
    """The graph, compiled once per process: each run brings its deps and record in the runtime
    context (`context=AgentContext(...)`), so one compiled graph serves every agent."""
    graph = StateGraph(AgentState, context_schema=AgentContext)
    graph.add_node("understand", understand)
    graph.add_node("plan", loop.plan)
    graph.add_node("decide", _decide)
    graph.add_node("act", _act_and_evaluate)  # act -> evaluate, in one step
    graph.add_node("answer", write_answer)
    graph.add_conditional_edges(
        START,
        _route(after_start),
        {"understand": "understand", "plan": "plan", "decide": "decide"},
    )
    graph.add_conditional_edges(
        "understand", _route(after_understand), {"plan": "plan", "decide": "decide"}
    )
    graph.add_edge("plan", "decide")
    graph.add_conditional_edges(
        "decide",
        _route(after_decide),
        {"act": "act", "answer": "answer", "finish": END, "decide": "decide"},
    )
    graph.add_conditional_edges(
        "act", _route(after_evaluate), {"decide": "decide", "answer": "answer"}
    )
    graph.add_edge("answer", END)
    return graph.compile()


class Agent:
    """A configured agent; `run` yields the events of one turn. Build one per settings change."""

    def __init__(self, deps: Deps, specs: dict[str, ModelSpec]) -> None:
        self.deps = deps
        self.specs = specs
        self.graph = _graph()  # one per process; a run's deps and record go in its context
        self.last_run: RunContext | None = None

    def run(
        self,
        question: str,
        history: list[BaseMessage] | None = None,
        *,
        confirm: Confirm | None = None,
    ) -> AsyncIterator[Event]:
        """The events of one turn; `confirm` asks this turn's user (else the build-time hook)."""
        return stream_events(lambda: self._run(question, list(history or []), confirm))

    async def _run(
        self, question: str, history: list[BaseMessage], confirm: Confirm | None = None
    ) -> None:
        d = self.deps
        started = time.perf_counter()
        limit = d.limits.max_execution_time
        usage = UsageLedger(self.specs, d.names)
        ctx = RunContext(
            question=question,
            started=started,
            deadline=started + limit,
            answer_reserve=min(limit * 0.2, 15.0),  # the tool loop stops early enough to answer
            usage=usage,
            callback=UsageCallback(usage, answer_roles=("answer",)),
            confirm=confirm,  # this run's user; else the build-time hook
            history=history,
        )
        self.last_run = ctx
        pace.keep_for_answer(d, ctx)  # the answer's time from its model's speed
        emit(
            RunStarted(
                mode="agent", question=question, models=dict(d.names), tools=list(d.runner.tools)
            )
        )
        reason: StopReason = "answered"
        answer, error = "", None
        refused = self._too_long(question)
        if refused:
            too_long, hint = refused
            emit(Notice(kind="error", message=too_long, hint=hint))
            self._emit_stats(ctx, started)
            emit(RunFinished(reason="error", answer="", error=too_long))
            return
        try:
            state = await self._invoke(question, ctx)
            answer, error = state.get("answer", ""), state.get("error")
            reason = "error" if error else state.get("stop_reason") or "answered"
        except asyncio.CancelledError:
            self._close_cancelled(ctx)
            self._emit_stats(ctx, started)
            emit(RunFinished(reason="cancelled", answer="", error=None))
            raise
        except Exception as exc:  # noqa: BLE001 - the graph never crashes the app
            log.exception("agent run failed")
            error = f"The agent failed unexpectedly ({type(exc).__name__}: {exc}). Your conversation is kept."
            emit(
                Notice(
                    kind="error",
                    message=error,
                    hint="Send the message again, or switch to Chat mode.",
                )
            )
            reason = "error"
        self._emit_stats(ctx, started)
        emit(RunFinished(reason=reason, answer=answer, error=error))

    async def _invoke(self, question: str, ctx: RunContext) -> AgentState:
        """The graph over this run; an MCP server's sampling request made during one of its
        calls is served by this run's function-call model (tools/mcp_sampling)."""
        d = self.deps
        model = mcp_sampling.Model(
            d.function_call_llm, d.names["function_call"], [ctx.callback], ctx.remaining
        )
        with mcp_sampling.serving(model):
            state: AgentState = await self.graph.ainvoke(
                {"messages": [HumanMessage(question)], "round": 0, "tool_rounds": 0},
                {"recursion_limit": 5 * d.limits.max_iterations + 10},
                context=AgentContext(d, ctx),
            )
        return state

    def _too_long(self, question: str) -> tuple[str, str] | None:
        """The first request of each role, checked whole before anything is sent.

        System prompt + the tools offered this round + the question must fit the window less the
        reply's reserve. When the fixed parts alone do not, the message says which part is too big
        (the user's text is not to blame); otherwise it reports the question's own size.
        """
        from langchain_core.messages import SystemMessage

        from brainchat.agent.budget import message_tokens, text_bound
        from brainchat.prompts import load_prompt
        from brainchat.usage import count_message_tokens

        d = self.deps
        prompts = {
            "function_call": decide.system_prompt(d),
            "answer": SystemMessage(load_prompt("answer", d.prompt_variants.get("answer"))),
        }
        for role in ("function_call", "answer"):
            budget = d.budget(role)
            name, window, reserve = d.names[role], budget.window, budget.reserve
            room = window - reserve  # input tokens one request may use
            # A cheap upper bound first (exact only when it could matter): no count in the common case
            system = message_tokens([prompts[role]], room - budget.tools - 16)
            fixed = system + budget.tools
            if fixed + 16 > room and (refused := no_room(d, role, system)) is not None:
                return refused  # `system` is exact here: the bound exceeded its limit
            if text_bound(question) + fixed + 3 <= room:  # 3: the question's own framing
                continue
            fixed = count_message_tokens([prompts[role]]) + budget.tools  # exact, to be fair
            limit = room - fixed - 3
            if (tokens := count_tokens(question)) > limit:
                return (
                    f"Your message is about {tokens:,} tokens; {name} has room for about "
                    f"{max(limit, 0):,} (context window {window:,} tokens, less {fixed:,} for "
                    f"the instructions and tool definitions and {reserve:,} for the reply). "
                    "Nothing was sent to the model.",
                    "Shorten the message, or attach the text as a file in the data folder.",
                )
        return None

    def _close_cancelled(self, ctx: RunContext) -> None:
        for entry in ctx.ledger.entries:
            if entry.status in ("pending", "cancelled"):
                entry.finish("cancelled", error="the run was cancelled")
                emit(
                    ToolFinished(
                        call_id=entry.call_id,
                        name=entry.name,
                        status="error",
                        duration=0.0,
                        summary="stopped",
                        error="the run was cancelled",
                        started_at=entry.started_at,
                        finished_at=time.time(),
                    )
                )
        emit(
            Notice(
                kind="cancelled",
                message="Stopped. Partial results stay above; the next message starts afresh.",
            )
        )

    def _emit_stats(self, ctx: RunContext, started: float) -> None:
        ttft = (
            None if ctx.first_answer_token is None else round(ctx.first_answer_token - started, 4)
        )
        emit(
            Stats(
                rows=ctx.usage.stats(),
                total_seconds=round(time.perf_counter() - started, 4),
                ttft=ttft,
                total_cost=ctx.usage.total_cost(),
                tool_seconds=round(ctx.tool_seconds, 4),
                unverified=ctx.unverified,
            )
        )


def build_agent(
    function_call_llm: BaseChatModel,
    answer_llm: BaseChatModel | None = None,
    tools: list[BaseTool] | None = None,
    limits: AgentLimits | None = None,
    *,
    confirm: Confirm | None = None,
    context: Callable[[], str] | None = None,
    told: Callable[[str], None] | None = None,
    hidden: Callable[[], Collection[str]] | None = None,
    evaluator: Evaluator | None = None,
    specs: dict[str, ModelSpec] | None = None,
    round_rule: RoundRule | None = None,
    facts: Callable[[], dict[str, Any]] | None = None,
    domain: Domain | None = None,
    tools_now: Callable[[], Awaitable[list[BaseTool]]] | None = None,
) -> Agent:
    """Assemble an agent; answer_llm defaults to function_call_llm (one model plays both roles).

    `hidden()`, asked before each decide round, names tools not offered to the model that round
    (they stay runnable; their schemas are just not sent); a guided profile's guards may hide
    more. `domain` is the field's knowledge (brainchat.domain; none by default). `tools_now()`,
    asked before each request, gives the tools as they are now (an MCP server's list_changed).
    """
    limits = limits or AgentLimits()
    answer_llm = answer_llm or retag(function_call_llm, "answer")
    tools = list(tools or [])
    specs = specs or {}
    fc_spec = specs.get("function_call")
    tool_calling = fc_spec.tool_calling if fc_spec is not None else "native"
    tool_calling = automode.learned(fc_spec, tool_calling)  # auto, as learned for this model
    schemas = [openai_schema(t) for t in tools]  # converted once per process
    offer = ToolOffer(function_call_llm, tools, schemas, hidden, plain=tool_calling == "prompt")
    deps = Deps(
        function_call_llm=function_call_llm,
        answer_llm=answer_llm,
        bound_llm=offer,
        tool_calling=tool_calling,
        names=names(specs, function_call_llm, answer_llm),
        limits=limits,
        runner=ToolRunner(
            tools, limits.tool_timeout, confirm, limits.confirm_timeout, limits.max_calls_per_reply
        ),
        evaluator=evaluator or default_evaluator(limits.min_result_chars),
        context=context,
        told=told,
        prompt_variants={r: specs[r].prompt_variant if r in specs else None for r in ROLES},
        budgets=budgets(specs),
        specs=specs,
        round_rule=round_rule or default_round_rule,
        facts=facts,
        domain=domain or NoDomain(),
        guided=GUIDED,
        tools_now=tools_now,
    )
    return Agent(deps, specs)
