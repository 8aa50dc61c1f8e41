"""One conversation, headless: the entry point of every turn, over parts with one job each.

- `ModelsInForce` (models.py): the mode, settings, panel overrides and the user's connections;
- `Toolbox` (toolbox.py): local, configured and user MCP tools, renaming, approvals;
- `AgentCache` (agent_cache.py): the agent built once per settings and tool set;
- `Transcript` (transcript.py): the model history and the turns an edit rewinds to;
- `StudySlot` (study_slot.py): the EEG study, made on first use.

The UI, the CLI and evals change a session through its methods and `snapshot()` / `restore()`,
never by writing its fields (tests/test_session_boundary.py checks it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from brainchat.agent.approval import Confirm, remembering
from brainchat.chat import stream_chat
from brainchat.connections import Connection
from brainchat.events import Event, Notice, RoleStats, RunFinished, StudyChanged
from brainchat.session.agent_cache import AgentCache, stream_agent
from brainchat.session.models import ModelsInForce
from brainchat.session.snapshot import Snapshot
from brainchat.session.study_slot import (
    StudySlot,
    restore_study,
    saved_log,
    study_facts,
    use_folders,
)
from brainchat.session.toolbox import Toolbox, eeg_domain, eeg_rule
from brainchat.session.transcript import Transcript, Turn
from brainchat.settings import ConfigError, ModelSpec, Settings
from brainchat.tools.registry import ToolSet

if TYPE_CHECKING:
    from brainchat.agent.graph import Agent
    from brainchat.eeg.study.study import Study
    from brainchat.tools.mcp_user import UserServer

EDIT_KEEPS_STUDY = (
    "You edited an earlier message: the conversation goes on from there, but the EEG study is "
    "not rolled back. What the removed turns did to it (loading, filtering, epoching, training) "
    "still applies; ask for get_study_state to see it, or reset_preprocessing / clear_study."
)


class Session:
    """The state of one conversation and the entry point of every turn."""

    def __init__(self, settings: Settings, *, extra_tools: ToolSet | None = None) -> None:
        self.models = ModelsInForce(settings)
        self.toolbox = Toolbox(configured=extra_tools or ToolSet())
        self.agents = AgentCache()
        self.transcript = Transcript()
        self._study = StudySlot()
        self._chat_usage: Any = None  # the UsageCallback of the latest chat turn (for a stop)

    # -- what the rest of the app reads (read-only: change it through the methods) ----------
    @property
    def settings(self) -> Settings:
        return self.models.settings

    @property
    def base_settings(self) -> Settings:
        return self.models.base

    @property
    def mode(self) -> Literal["chat", "agent"]:
        return self.models.mode

    @property
    def overrides(self) -> dict[str, Any]:
        return self.models.overrides

    @property
    def connections(self) -> dict[str, Connection]:
        return self.models.connections

    @property
    def history(self) -> list[BaseMessage]:
        return self.transcript.history

    @property
    def turns(self) -> list[Turn]:
        return self.transcript.turns

    @property
    def extra_tools(self) -> ToolSet:
        return self.toolbox.configured

    @property
    def approved(self) -> set[tuple[str, str]]:
        return self.toolbox.approved

    @property
    def last_agent(self) -> Agent | None:
        """The agent of the latest agent turn (its ledger, for a stop and tests)."""
        return self.agents.agent

    @property
    def study(self) -> Study:
        return self._study.get(self.settings, self.export_settings)

    @property
    def has_study(self) -> bool:
        """Whether the study was made (reading `study` makes it)."""
        return self._study.made

    # -- snapshot -----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The conversation as one value: mode, panel values, history, study, approvals."""
        study = self.study
        return Snapshot(
            mode=self.mode,
            overrides=dict(self.overrides),
            history=list(self.history),
            turns=[Turn(t.message_id, t.history_len, t.changed_study) for t in self.turns],
            study=saved_log(study),
            uploads=list(study.uploads),
            approved=frozenset(self.approved),
        )

    def restore(self, snap: Snapshot) -> list[str]:
        """Take a snapshot's state; a saved value that no longer fits (a mode, a panel value, a
        pick of a connection that is gone) is left out and named in the list returned."""
        problems = []
        try:
            self.models.set_mode(snap.mode or self.mode)
            if gone := self.models.restore(snap.overrides):
                problems.append(f"saved model picks of a connection that is gone dropped: {gone}")
        except (ValueError, ConfigError) as exc:
            problems.append(f"saved settings not restored: {exc}")
        self.transcript.replace(list(snap.history), list(snap.turns))
        restore_study(self.study, list(snap.study), list(snap.uploads))
        self.toolbox.approved = set(snap.approved)
        return problems

    # -- models in force ----------------------------------------------------------------------
    def forget_upload(self, name: str) -> None:
        """A removed recording leaves the list of this conversation's uploads ("name (8 ch, ...)")."""
        prefix = name + " ("
        self.study.uploads[:] = [u for u in self.study.uploads if not u.startswith(prefix)]

    def set_mode(self, mode: str) -> None:
        self.models.set_mode(mode)

    def apply_settings(self, overrides: Mapping[str, Any]) -> Settings:
        """Apply settings-panel values from the next message on; a bad value changes nothing."""
        return self.models.apply(overrides)

    def restore_settings(self, saved: Mapping[str, Any]) -> list[str]:
        """Re-apply a thread's saved panel values; returns the dropped picks."""
        return self.models.restore(saved)

    def connection_models(self) -> dict[str, ModelSpec]:
        return self.models.connection_models()

    def add_connection(self, conn: Connection) -> None:
        self.models.add_connection(conn)

    def remove_connection(self, name: str) -> Connection | None:
        return self.models.remove_connection(name)

    def roles(self) -> dict[str, str]:
        return self.models.roles()

    def config_problem(self) -> str | None:
        return self.models.config_problem()

    def export_settings(self) -> dict[str, Any]:
        return self.models.export_settings()

    def use_data_folder(self, folder: Path, model_dir: Path | None, key: bytes) -> None:
        """The user's own data folder, and where the study saves trained models (signed)."""
        self.models.use_data_folder(folder)
        use_folders(self.study, model_dir, key)

    # -- tools --------------------------------------------------------------------------------
    def toolset(self) -> ToolSet:
        """Every tool an agent turn gets now: web search, EEG, configured and user MCP tools."""
        return self.toolbox.toolset(self.settings, self.study)

    def use_configured_tools(self, toolset: ToolSet) -> None:
        """The configured MCP servers' tools (the process's hub, refreshed before a turn)."""
        self.toolbox.configured = toolset

    async def connect_user_server(
        self,
        server: str,
        client: Any,
        follow: Callable[[str], Coroutine[Any, Any, None]] | None = None,
    ) -> list[BaseTool]:
        """A server the user connected (Chainlit's plug button) as tools that ask first; told
        this conversation's data folder as its roots; its lists followed when they change
        (`follow(kind)` too, in the caller's context: the page's menu)."""
        from brainchat.tools import mcp_user
        from brainchat.tools.mcp_plugged import bind
        from brainchat.tools.mcp_tools import tools_from_session

        self.remove_user_tools(server)  # a reconnect replaces the old tools and their approvals
        await bind(client, self.settings.data_dir)  # first: its roots/list may be waiting
        user = await mcp_user.UserServer.open(server, client)  # before the tools: a change
        user.follow(lambda kind: self._relisted(user, client, kind))  # from now on is seen
        if follow is not None:
            user.follow(follow)
        tools = await tools_from_session(server, client, reserved_names=self.toolset().names())
        self.add_user_tools(server, tools)
        self.toolbox.user_servers[server] = user
        return tools

    async def _relisted(self, user: UserServer, client: Any, kind: str) -> None:
        """A plugged server's tools changed (list_changed): take them anew; an unchanged tool
        keeps its object and its approval (Toolbox.replace_user_tools)."""
        from brainchat.tools.mcp_tools import tools_from_session

        if kind != "tools" or self.toolbox.user_servers.get(user.name) is not user:
            return  # disconnected, or replaced by a reconnect
        own = {t.name for t in self.toolbox.user_tools.get(user.name, [])}
        reserved = [n for n in self.toolset().names() if n not in own]
        tools = await tools_from_session(user.name, client, reserved_names=reserved)
        self.toolbox.replace_user_tools(user.name, tools, changed=user.changed_tools())

    def use_configured_servers(
        self,
        servers: Callable[[], Mapping[str, Any]],
        tools: Callable[[], ToolSet] | None = None,
    ) -> None:
        """Where the configured servers are (the UI's hub), for their prompts and resources, and
        (`tools`) their tools now, which a run reads again when a server's list changed."""
        self.toolbox.configured_servers = servers
        self.toolbox.configured_now = tools

    def mcp_servers(self) -> dict[str, Any]:
        """Connected servers with prompts or resources: configured, and connected by the user."""
        return self.toolbox.feature_servers()

    def mcp_prompt_commands(self) -> list[Any]:
        return self.toolbox.prompt_commands()

    async def render_mcp_prompt(self, command_id: str, text: str) -> str:
        return await self.toolbox.render_prompt(command_id, text)

    def add_user_tools(self, server: str, tools: list[BaseTool]) -> None:
        self.toolbox.add_user_tools(server, tools)

    def remove_user_tools(self, server: str) -> None:
        self.toolbox.remove_user_tools(server)

    def with_failure(self, source: str, reason: str) -> None:
        self.toolbox.with_failure(source, reason)

    def agent(self) -> Agent:
        """The agent for the current settings and tools (built again only when they change)."""
        study, settings = self.study, self.settings
        toolset = self.toolset()
        eeg = "load_data" in toolset.names()
        hidden = eeg_rule(study, self.toolbox.local(settings, study).names())
        return self.agents.agent_for(
            settings,
            toolset.tools,
            study.context if eeg else None,
            self.study_facts if eeg else None,
            hidden,
            study.told if eeg else None,
            eeg_domain() if eeg else None,
            tools_now=lambda: self.toolbox.tools_now(self.settings, self.study),
        )

    def study_facts(self) -> dict[str, Any]:
        """What plan verification reads: the study's stage, recorded steps and trained models."""
        return study_facts(self.study)

    # -- turns --------------------------------------------------------------------------------
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
        return self.transcript.rewind(message_id)

    async def _ask(
        self, question: str, confirm: Confirm | None, message_id: str | None
    ) -> AsyncIterator[Event]:
        turn: Turn | None = None
        if message_id is not None:
            turn, removed = self.transcript.begin(message_id)
            if any(t.changed_study for t in removed):
                yield Notice(kind="info", message=EDIT_KEEPS_STUDY)
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
            stream = self._chat_turn(question)
        else:
            stream = self._agent_turn(question, remembering(confirm, self.approved))
        async for event in stream:
            if isinstance(event, StudyChanged) and turn is not None:
                turn.changed_study = True
            if isinstance(event, RunFinished) and event.answer and event.reason != "error":
                self.transcript.record(question, event.answer)
            yield event

    def _chat_turn(self, question: str) -> AsyncIterator[Event]:
        from brainchat.usage import UsageCallback, UsageLedger

        spec = self.settings.model_for("chat")
        assert spec is not None
        self._chat_usage = UsageCallback(UsageLedger({"chat": spec}))
        return stream_chat(spec, self.history, question, self._chat_usage)

    def _agent_turn(self, question: str, confirm: Confirm | None) -> AsyncIterator[Event]:
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
