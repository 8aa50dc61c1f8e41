"""What the graph's nodes work with: the agent's dependencies and this run's record (LangGraph's
runtime context, `Runtime[AgentContext]`), and the typed state one node hands the next."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from brainchat.agent.budget import Budget
from brainchat.agent.offer import ToolOffer
from brainchat.agent.plan import Plan
from brainchat.agent.policy import Evaluator, RoundRule, default_round_rule
from brainchat.agent.profile import Profile, profile_for
from brainchat.agent.state import LedgerEntry, RunContext
from brainchat.agent.toolrun import ToolRunner
from brainchat.domain import Domain, NoDomain
from brainchat.events import StopReason
from brainchat.settings import AgentLimits, ModelSpec

Verdict = Literal["enough", "continue", "not_enough", "answer"]


@dataclass
class Deps:
    """Everything the nodes need, injected by build_agent (one per agent, shared by its runs)."""

    function_call_llm: BaseChatModel
    answer_llm: BaseChatModel
    bound_llm: ToolOffer  # function_call_llm with this round's offered tools bound
    names: dict[str, str]  # role -> model name
    limits: AgentLimits
    runner: ToolRunner
    evaluator: Evaluator
    context: Callable[[], str] | None
    told: Callable[[str], None] | None  # the context text a model has now read (notes in it said)
    prompt_variants: dict[str, str | None]
    budgets: dict[str, Budget]  # role -> what one request may use of the model's window
    specs: dict[str, ModelSpec]  # role -> spec, when known (names and URLs in error messages)
    round_rule: RoundRule = default_round_rule
    tool_calling: str = "native"  # native | prompt | auto (the function-call spec's setting)
    facts: Callable[[], dict[str, Any]] | None = None  # the study's stage and steps (plan checks)
    domain: Domain = field(default_factory=NoDomain)  # the field's knowledge (brainchat.domain)
    guided: Any = None  # the guards of a guided profile (agent/guided.py; guards.in_force)
    # the tools as they are now (an MCP server's list_changed), asked before each request
    tools_now: Callable[[], Awaitable[list[BaseTool]]] | None = None

    async def follow_tools(self) -> None:
        """Offer (and run) the tools as they are now, when they changed since the last request:
        a tool a server added during a call is in the run's next request."""
        if self.tools_now is None:
            return
        tools = await self.tools_now()
        if [id(t) for t in tools] == [id(t) for t, _ in self.bound_llm.pairs]:
            return
        from brainchat.tools.schemas import openai_schema

        known = {id(t): s for t, s in self.bound_llm.pairs}
        self.bound_llm.replace(tools, [known.get(id(t)) or openai_schema(t) for t in tools])
        self.runner.tools = {t.name: t for t in tools}

    @property
    def profile(self) -> Profile:
        """The function-call model's profile now (a model set to auto may switch mid-run)."""
        return profile_for(self.specs.get("function_call"), self.tool_calling)

    def tool_arguments(self, tool: str) -> dict[str, Any]:
        """The arguments of `tool`'s schema, each with its JSON schema (empty when unknown)."""
        for t, schema in self.bound_llm.pairs:
            if t.name == tool:
                fn = schema.get("function", schema)
                return dict((fn.get("parameters") or {}).get("properties") or {})
        return {}

    def budget(self, role: str) -> Budget:
        """What one request of `role` may use now: the function-call model's request carries
        only the tools offered this round, so its budget is taken per request, not per build."""
        if role != "function_call":
            return self.budgets[role]
        return replace(self.budgets[role], tools=self.bound_llm.tokens())

    def study_text(self) -> str:
        """The study's summary as the prompts show it ("" without a study)."""
        if self.context is None:
            return ""
        try:
            return "Current EEG study: " + self.context()
        except Exception as exc:  # noqa: BLE001 - the summary is a hint, never fatal
            return f"(EEG study summary unavailable: {exc})"


@dataclass(frozen=True)
class AgentContext:
    """LangGraph's runtime context of one run (`Runtime[AgentContext]`): the agent's deps and
    the run's record (ledger, usage, deadline), passed to every node by the graph itself."""

    deps: Deps
    run: RunContext


class AgentState(TypedDict, total=False):
    """What one node hands the next; nodes return partial updates, routers read it."""

    messages: list[BaseMessage]  # the function-call model's conversation of this run
    round: int  # model calls made by decide
    tool_rounds: int  # tool rounds with at least one useful result
    plan: Plan | None  # plan mode's plan (made by the plan node), else None
    pending_calls: list[dict[str, Any]]  # decide's tool calls, for act
    last_round: list[LedgerEntry]  # the calls act just ran, for evaluate (and the next act)
    looped: bool  # every call of the last round repeated an earlier one
    loop_hits: int  # rounds so far that only repeated earlier calls
    verdict_note: str | None  # why the last round was not enough, for the next decide prompt
    last_verdict: Verdict | None  # the evaluation's verdict that led here, if any
    reminded: bool  # decide reminded the model of asked steps never run: it asks again (once)
    stop_reason: StopReason | None  # why the tool loop stopped early
    answer: str
    error: str | None  # set only when the run ends without an answer to write


def no_room(d: Deps, role: str, system: int) -> tuple[str, str] | None:
    """When `role`'s prompt (`system` tokens) and offered tools leave no room for a message in
    its window: what takes the room (never the user's text) and what to do, else None."""
    budget = d.budget(role)
    if system + budget.tools + 16 <= budget.window - budget.reserve:
        return None
    if budget.tools >= system:
        part = f"The tool definitions offered take {budget.tools:,} tokens"
        fix = "Pick a model with a larger context window, or connect fewer MCP servers"
    else:
        with_tools = " with the tool descriptions" if d.tool_calling == "prompt" else ""
        part = f"The instructions{with_tools} take {system:,} tokens"
        fix = "Pick a model with a larger context window"
    if (spec := d.specs.get(role)) is not None and spec.max_tokens:
        fix += ", or lower its max_tokens"
    return (
        f"{part} of {d.names[role]}'s {budget.window:,}-token context window, and "
        f"{budget.reserve:,} are kept for the reply: no message fits. Nothing was sent to the "
        "model.",
        fix + ".",
    )
