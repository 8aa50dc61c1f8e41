"""One conversation, headless: mode, effective settings, history, EEG study, tools. No Chainlit.

The Chainlit app keeps one `Session` per browser session; the CLI makes one per command; tests
make them directly. `ask` dispatches a question to Chat or Agent mode and yields events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from brainchat.agent.approval import Confirm, remembering
from brainchat.agents import AgentCache, eeg_rule
from brainchat.chat import record_turn, stream_chat
from brainchat.connections import Connection
from brainchat.events import Event, Notice, RoleStats, RunFinished, StudyChanged
from brainchat.settings import MODEL_VARS, ConfigError, ModelSpec, Settings, with_overrides
from brainchat.tools.registry import ToolFailure, ToolSet, flags_of

if TYPE_CHECKING:
    from brainchat.agent.graph import Agent
    from brainchat.eeg.study import Study

NOT_CONFIGURED = (
    "No model is configured. Set CHAT_MODEL (or AGENT_FUNCTION_CALL_MODEL) to a JSON model spec, "
    'e.g. CHAT_MODEL=\'{"provider": "openai", "model": "gpt-4o-mini"}\' with OPENAI_API_KEY set, '
    "or just OPENAI_API_KEY for the default model; then restart. See README.md, Configuration."
)


EDIT_KEEPS_STUDY = (
    "You edited an earlier message: the conversation goes on from there, but the EEG study is "
    "not rolled back. What the removed turns did to it (loading, filtering, epoching, training) "
    "still applies; ask for get_study_state to see it, or reset_preprocessing / clear_study."
)


@dataclass
class Turn:
    """Where a user message's turn began in the history, so an edit can rewind to it."""

    message_id: str
    history_len: int
    changed_study: bool = False


class Session:
    """The state of one conversation and the entry point of every turn."""

    def __init__(self, settings: Settings, *, extra_tools: ToolSet | None = None) -> None:
        self.base_settings = settings
        self.settings = settings
        self.mode: Literal["chat", "agent"] = settings.default_mode
        self.history: list[BaseMessage] = []
        self.overrides: dict[str, Any] = {}
        self.connections: dict[str, Connection] = {}  # the user's own servers, by name
        self.extra_tools = extra_tools or ToolSet()  # configured MCP servers, shared
        self.user_tools: dict[str, list[BaseTool]] = {}  # user-connected MCP servers, by name
        self.approved: set[tuple[str, str]] = set()  # (server, tool) approved for this conversation
        self.search_cache: dict[str, Any] = {}
        self._study: Study | None = None
        self.last_agent: Any = (
            None  # the Agent of the latest agent turn (its ledger, for /tools and tests)
        )
        self._chat_usage: Any = None  # the UsageCallback of the latest chat turn (for a stop)
        self.turns: list[Turn] = []  # one per user message with an id, in order
        self.agents = AgentCache()
        self._renames: dict[int, tuple[BaseTool, BaseTool]] = {}

    @property
    def study(self) -> Study:
        if self._study is None:
            from brainchat.eeg.study import Study

            self._study = Study(self.settings.data_dir, self.settings.max_operation_mb)
            self._study.settings_info = self.export_settings
        return self._study

    @property
    def has_study(self) -> bool:
        """Whether the study was made (reading `study` makes it)."""
        return self._study is not None

    def export_settings(self) -> dict[str, Any]:
        """The model and agent settings an exported report shows: names, never keys or
        credentials (a server's address without its user, password and query)."""
        from dataclasses import asdict

        from brainchat.redact import mask_url

        models = {}
        for role in ("chat", "function_call", "answer"):
            spec = self.settings.model_for(role)
            if spec is not None:
                models[role] = {
                    "model": spec.name,
                    "provider": spec.provider,
                    "server": mask_url(spec.base_url, drop_query=True) if spec.base_url else None,
                    "temperature": spec.temperature,
                    "max_tokens": spec.max_tokens,
                }
        return {"mode": self.mode, "models": models, "limits": asdict(self.settings.limits)}

    def set_mode(self, mode: str) -> None:
        if mode not in ("chat", "agent"):
            raise ValueError(f"mode {mode!r} is not valid; allowed: chat, agent")
        self.mode = "chat" if mode == "chat" else "agent"

    def apply_settings(self, overrides: Mapping[str, Any]) -> Settings:
        """Apply settings-panel values from the next message on; a bad value changes nothing."""
        merged = {**self.overrides, **{k: v for k, v in overrides.items() if v is not None}}
        settings = with_overrides(self.base_settings, merged, self.connection_models())
        self.overrides, self.settings = merged, settings  # with_overrides raised if it was bad
        return settings

    def restore_settings(self, saved: Mapping[str, Any]) -> list[str]:
        """Re-apply a thread's saved panel values; a pick of a connection model that is gone (the
        connection was removed, or its key no longer decrypts) is dropped, not the whole set.
        Returns the dropped picks."""
        known = self.connection_models()
        gone = [
            f"{k}={v}"
            for k, v in saved.items()
            if k.endswith("_model") and " @ " in str(v) and str(v) not in known
        ]
        kept = {k: v for k, v in saved.items() if f"{k}={v}" not in gone}
        self.apply_settings(kept)
        return gone

    def connection_models(self) -> dict[str, ModelSpec]:
        """Every model of the user's connections, by the name the settings panel shows."""
        return {label: spec for c in self.connections.values() for label, spec in c.specs().items()}

    def add_connection(self, conn: Connection) -> None:
        """Add (or replace, by name) a connection; a role using one of its models gets the new
        URL and key from the next turn, and a role whose model it no longer lists keeps the
        model it had before that choice."""
        self.connections[conn.name] = conn
        pool = {**self.base_settings.models, **self.connection_models()}
        for role in ("function_call", "answer", "chat"):
            name = self.overrides.get(f"{role}_model")
            if str(name) not in pool and str(name).endswith(conn.label("")):
                self.overrides.pop(f"{role}_model")
        try:
            self.settings = with_overrides(
                self.base_settings, self.overrides, self.connection_models()
            )
        except ConfigError:  # an override that no longer fits: start from the base settings
            self.overrides, self.settings = {}, self.base_settings

    def remove_connection(self, name: str) -> Connection | None:
        """Forget a connection; a role that used one of its models goes back to the configured
        model (or to none, which the next turn says)."""
        conn = self.connections.pop(name, None)
        if conn is None:
            return None
        gone = set(conn.specs())
        self.overrides = {k: v for k, v in self.overrides.items() if str(v) not in gone}
        try:
            self.settings = with_overrides(
                self.base_settings, self.overrides, self.connection_models()
            )
        except ConfigError:  # an override that no longer fits: start from the base settings
            self.overrides, self.settings = {}, self.base_settings
        return conn

    def toolset(self) -> ToolSet:
        """Every tool an agent turn gets now: web search, EEG, configured and user MCP tools."""
        local = self.agents.local_tools(self.settings, self.study, self.search_cache)
        tools = list(local.tools)
        failures = list(local.failures) + list(self.extra_tools.failures)
        taken = {t.name for t in tools}
        for tool in [*self.extra_tools.tools, *(t for ts in self.user_tools.values() for t in ts)]:
            if tool.name in taken:
                tool = self._renamed(tool)
            taken.add(tool.name)
            tools.append(tool)
        return ToolSet(tools=tools, failures=failures)

    def _renamed(self, tool: BaseTool) -> BaseTool:
        """A clashing MCP tool as `server__name`; the same copy every turn (the agent cache)."""
        copy = self._renames.get(id(tool))
        if copy is None or copy[0] is not tool:
            source = flags_of(tool).source.removeprefix("mcp:")
            copy = (tool, tool.model_copy(update={"name": f"{source}__{tool.name}"}))
            self._renames[id(tool)] = copy
        return copy[1]

    def roles(self) -> dict[str, str]:
        """Which model plays which role, by name."""
        out = {}
        for role in ("function_call", "answer"):
            spec = self.settings.model_for(role)
            out[role] = spec.name if spec else "(none)"
        return out

    def ask(
        self, question: str, confirm: Confirm | None = None, *, message_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Run one turn in the current mode and yield its events; history grows on success.

        A `message_id` seen before is an edited message: the history rewinds to before its
        turn, as the page does, so the models never see the removed turns.
        """
        return self._ask(question, confirm, message_id)

    def rewind(self, message_id: str) -> list[Turn]:
        """Drop the turn of `message_id` and every later one from the history; return them."""
        for i, turn in enumerate(self.turns):
            if turn.message_id == message_id:
                removed = self.turns[i:]
                del self.history[turn.history_len :]
                del self.turns[i:]
                return removed
        return []

    async def _ask(
        self, question: str, confirm: Confirm | None, message_id: str | None
    ) -> AsyncIterator[Event]:
        turn: Turn | None = None
        if message_id is not None:
            removed = self.rewind(message_id)
            if any(t.changed_study for t in removed):
                yield Notice(kind="info", message=EDIT_KEEPS_STUDY)
            turn = Turn(message_id, len(self.history))
            self.turns.append(turn)
        problem = self.config_problem()
        if problem:
            yield Notice(
                kind="error",
                message=problem,
                hint="Fix the configuration and restart the app, or add a model connection "
                "in the settings panel.",
            )
            yield RunFinished(reason="error", error=problem)
            return
        if self.mode == "chat":
            spec = self.settings.model_for("chat")
            assert spec is not None
            from brainchat.usage import UsageCallback, UsageLedger

            self._chat_usage = UsageCallback(UsageLedger({"chat": spec}))
            stream = stream_chat(spec, self.history, question, self._chat_usage)
        else:
            stream = self._agent_turn(question, remembering(confirm, self.approved))
        async for event in stream:
            if isinstance(event, StudyChanged) and turn is not None:
                turn.changed_study = True
            if isinstance(event, RunFinished) and event.answer and event.reason != "error":
                record_turn(self.history, question, event.answer)
            yield event

    def agent(self) -> Agent:
        """The agent for the current settings and tools (built again only when they change)."""
        toolset = self.toolset()
        eeg = "load_data" in toolset.names()
        context = self.study.context if eeg else None
        facts = self.study_facts if eeg else None
        local = self.agents.local_tools(self.settings, self.study, self.search_cache).names()
        hidden = eeg_rule(self.study, local)
        told = self.study.told if eeg else None
        self.last_agent = self.agents.agent_for(
            self.settings, toolset.tools, context, facts, hidden, told
        )
        return self.last_agent

    def study_facts(self) -> dict[str, Any]:
        """What plan verification reads: the study's stage, recorded steps and trained models."""
        state = self.study.state
        steps = [{"op": s.op, "params": dict(s.params)} for s in state.history]
        return {"stage": state.stage, "steps": steps, "models": sorted(state.models)}

    def _agent_turn(self, question: str, confirm: Confirm | None) -> AsyncIterator[Event]:
        from brainchat.agents import stream_agent

        agent = self.agent()
        return stream_agent(
            agent, question, self.history, confirm, verbose=self.settings.limits.verbose
        )

    def usage_so_far(self) -> list[RoleStats]:
        """Per-role usage of the current (or last) turn, in-flight calls estimated: for a stop."""
        if self.mode == "agent":
            run = getattr(self.last_agent, "last_run", None)
            return run.callback.snapshot() if run is not None and run.callback else []
        return self._chat_usage.snapshot() if self._chat_usage is not None else []

    def config_problem(self) -> str | None:
        """The message a user sees instead of an answer when the configuration is unusable.

        A bad model variable (CHAT_MODEL, OPENAI_MODEL...) stops mattering once every model this
        mode uses is one the user picked from a connection of theirs: the newcomer who fixes a
        broken set-up in the browser can chat without a restart. Other problems still count.
        """
        errors = self.settings.errors
        if errors and self._models_picked_from_connections():
            errors = tuple(e for e in errors if not _model_variable(e.variable))
        if errors:
            lines = "\n".join(f"- {err}" for err in errors)
            return f"The configuration has {len(errors)} problem(s):\n{lines}"
        if not self.settings.configured:
            return NOT_CONFIGURED
        return None

    def _models_picked_from_connections(self) -> bool:
        picked = list(self.connection_models().values())
        roles = ("chat",) if self.mode == "chat" else ("function_call", "answer")
        return bool(picked) and all(self.settings.model_for(r) in picked for r in roles)

    async def connect_user_server(self, server: str, client: Any) -> list[BaseTool]:
        """A server the user connected (Chainlit's plug button) as tools that ask first."""
        from brainchat.tools.mcp_tools import tools_from_session

        self.remove_user_tools(server)  # a reconnect replaces the old tools and their approvals
        tools = await tools_from_session(server, client, reserved_names=self.toolset().names())
        self.add_user_tools(server, tools)
        return tools

    def add_user_tools(self, server: str, tools: list[BaseTool]) -> None:
        self.remove_user_tools(server)
        self.user_tools[server] = tools

    def remove_user_tools(self, server: str) -> None:
        self.user_tools.pop(server, None)
        self.approved = {k for k in self.approved if k[0] != server}

    def with_failure(self, source: str, reason: str) -> None:
        self.extra_tools = replace(
            self.extra_tools, failures=[*self.extra_tools.failures, ToolFailure(source, reason)]
        )


def _model_variable(variable: str) -> bool:
    """A variable (or one of its fields, `CHAT_MODEL.timeout`) that configures a model."""
    return variable.split(".")[0] in (
        *MODEL_VARS,
        "OPENAI_MODEL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    )
