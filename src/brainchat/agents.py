"""The application service behind Agent mode: which tools a session gets, and its agent.

The agent (its models, bound tool schemas and compiled graph) is built once per effective
settings and tool set and reused for every turn until one of them changes: a settings-panel
change, an MCP server connected or dropped. The per-turn parts (question, history, confirm hook)
go to `Agent.run`.

Which tools the function-call model sees is chosen before every decide round by one rule
(`eeg_rule`): web search, MCP tools and the EEG tools that list, load and describe data are
always offered; the other EEG tools (preprocessing, ICA, epochs, decoding, plots, clear) only
once the study has data loaded. A chat about the mu rhythm thus sends no EEG analysis schemas,
and a turn that loads data sees the analysis tools from its next round on. Each subset is bound
once per agent (`brainchat.agent.offer.ToolOffer`), so the agent cache is unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from brainchat.agent.approval import Confirm
from brainchat.events import Event
from brainchat.redact import get_logger
from brainchat.settings import Settings
from brainchat.tools.registry import ToolFailure, ToolSet
from brainchat.tools.search import backend_from_settings, make_search_tool

if TYPE_CHECKING:
    from brainchat.agent.graph import Agent
    from brainchat.eeg.study import Study

log = get_logger("brainchat.agent")  # masks secrets in records
EEG_ALWAYS = frozenset({"list_data_files", "load_data", "get_study_state"})
LOCAL_NOT_EEG = frozenset({"web_search"})


def eeg_rule(study: Study, local_names: Collection[str]) -> Callable[[], frozenset[str]]:
    """The tools to hide in a round: EEG tools beyond list/load/state while the study is empty."""
    needs_data = frozenset(local_names) - EEG_ALWAYS - LOCAL_NOT_EEG
    return lambda: needs_data if study.stage == "empty" else frozenset()


def local_toolset(settings: Settings, study: Study, search_cache: dict[str, Any]) -> ToolSet:
    """Web search and the EEG tools over `study`; a family that fails is listed, never raised."""
    tools: list[BaseTool] = []
    failures: list[ToolFailure] = []
    try:
        backend = backend_from_settings(settings.search_backend, settings.search_fixture)
        cache = search_cache if settings.limits.enable_cache else None
        tools.append(make_search_tool(backend, cache))
    except Exception as exc:  # noqa: BLE001 - one broken family never takes the others down
        failures.append(ToolFailure("web_search", str(exc)))
    try:
        from brainchat.eeg.tools import build_eeg_tools

        tools.extend(build_eeg_tools(study))
    except Exception as exc:  # noqa: BLE001
        failures.append(ToolFailure("eeg", f"EEG tools unavailable: {type(exc).__name__}: {exc}"))
    return ToolSet(tools=tools, failures=failures)


@dataclass
class AgentCache:
    """One agent per (effective settings, tool set); a change of either builds a new one."""

    key: tuple[Any, ...] | None = None
    agent: Agent | None = None
    builds: int = 0  # how many agents were built (tests and benches read it)
    _local: tuple[tuple[Any, ...], ToolSet] | None = field(default=None, repr=False)

    def local_tools(
        self, settings: Settings, study: Study, search_cache: dict[str, Any]
    ) -> ToolSet:
        """The local tool families, rebuilt only when what they depend on changes."""
        key = (
            settings.search_backend,
            settings.search_fixture,
            settings.limits.enable_cache,
            id(study),
            settings.data_dir,
        )
        if self._local is None or self._local[0] != key:
            self._local = (key, local_toolset(settings, study, search_cache))
        return self._local[1]

    def agent_for(
        self,
        settings: Settings,
        tools: list[BaseTool],
        context: Callable[[], str] | None,
        facts: Callable[[], dict[str, Any]] | None = None,
        hidden: Callable[[], Collection[str]] | None = None,
        told: Callable[[str], None] | None = None,
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
