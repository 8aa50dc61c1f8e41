"""Agent mode's agent service: the agent built once per effective settings and tool set.

The agent (its models, bound tool schemas and compiled graph) is reused for every turn until one
of them changes: a settings-panel change, an MCP server connected or dropped. The per-turn parts
(question, history, confirm hook) go to `Agent.run`. Which tools there are is the toolbox's job
(`brainchat.session.toolbox`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from brainchat.agent.approval import Confirm
from brainchat.events import Event
from brainchat.redact import get_logger
from brainchat.settings import Settings

if TYPE_CHECKING:
    from brainchat.agent.graph import Agent

log = get_logger("brainchat.agent")  # masks secrets in records


@dataclass
class AgentCache:
    """One agent per (effective settings, tool set); a change of either builds a new one."""

    key: tuple[Any, ...] | None = None
    agent: Agent | None = None
    builds: int = 0  # how many agents were built (tests and benches read it)

    def agent_for(
        self,
        settings: Settings,
        tools: list[BaseTool],
        context: Callable[[], str] | None,
        facts: Callable[[], dict[str, Any]] | None = None,
        hidden: Callable[[], Collection[str]] | None = None,
        told: Callable[[str], None] | None = None,
        domain: Any = None,
        tools_now: Callable[[], Awaitable[list[BaseTool]]] | None = None,
    ) -> Agent:
        fc_spec = settings.model_for("function_call")
        answer_spec = settings.model_for("answer")
        assert fc_spec is not None and answer_spec is not None
        key = (
            fc_spec,
            answer_spec,
            settings.limits,
            tuple((t.name, id(t)) for t in tools),
            context is not None,
            hidden is not None,
            domain is not None,
        )
        if self.agent is None or key != self.key:
            from brainchat.agent.graph import build_agent  # langgraph: on the first agent turn
            from brainchat.llm import make_chat_model

            self.agent = build_agent(
                make_chat_model(fc_spec, "function_call"),
                make_chat_model(answer_spec, "answer"),
                tools,
                settings.limits,
                context=context,
                told=told,
                facts=facts,
                hidden=hidden,
                specs={"function_call": fc_spec, "answer": answer_spec},
                domain=domain,
                tools_now=tools_now,
            )
            self.key = key
            self.builds += 1
        return self.agent


def stream_agent(
    agent: Agent,
    question: str,
    history: list[BaseMessage],
    confirm: Confirm | None,
    *,
    verbose: bool,
) -> AsyncIterator[Event]:
    """One agent turn's events (logged one by one when AGENT_VERBOSE is on)."""
    events = agent.run(question, history, confirm=confirm)
    return _verbose(events) if verbose else events


async def _verbose(events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """AGENT_VERBOSE: log every thought, tool input/output and decision."""
    async for event in events:
        if event.type not in ("thinking_token", "answer_token"):
            log.info("%s", event.to_dict())
        yield event
