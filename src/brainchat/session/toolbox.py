"""Which tools a conversation's agent gets: web search and EEG tools (local), the configured MCP
servers' tools (shared by the process), the servers the user connected, and the approvals given
for them in this conversation.

Which tools the function-call model sees is chosen before every decide round by one rule
(`eeg_rule`): web search, MCP tools and the EEG tools that list, load and describe data are
always offered; the other EEG tools (preprocessing, ICA, epochs, decoding, plots, clear) only
once the study has data loaded. A guided model's guards narrow it further, by the study's stage. A chat about the mu rhythm thus sends no EEG analysis schemas,
and a turn that loads data sees the analysis tools from its next round on. Each subset is bound
once per agent (`brainchat.agent.offer.ToolOffer`), so the agent cache is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool

from brainchat.settings import Settings
from brainchat.tools.registry import ToolFailure, ToolSet, flags_of
from brainchat.tools.search import backend_from_settings, make_search_tool

if TYPE_CHECKING:
    from brainchat.eeg.study.study import Study


def eeg_rule(study: Study, local_names: Collection[str]) -> Callable[[], frozenset[str]]:
    """The tools to hide in a round: the EEG tools an empty study cannot use (eeg/guidance's
    table of what each step needs), while the study is empty."""
    from brainchat.eeg.guidance.steps import allowed

    names = list(local_names)
    needs_data = frozenset(names) - frozenset(allowed(names, {"stage": "empty"}))
    return lambda: needs_data if study.stage == "empty" else frozenset()


def eeg_domain() -> Any:
    """The EEG knowledge the agent is guided by (brainchat.domain.Domain)."""
    from brainchat.eeg.guidance import EEG

    return EEG


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
        from brainchat.eeg.kernel import study_tools

        tools.extend(study_tools(study))
    except Exception as exc:  # noqa: BLE001
        failures.append(ToolFailure("eeg", f"EEG tools unavailable: {type(exc).__name__}: {exc}"))
    return ToolSet(tools=tools, failures=failures)


@dataclass
class Toolbox:
    """The tools of one conversation, assembled anew for every agent turn from cached parts."""

    configured: ToolSet = field(default_factory=ToolSet)  # configured MCP servers, shared
    user_tools: dict[str, list[BaseTool]] = field(default_factory=dict)  # user-connected, by name
    approved: set[tuple[str, str]] = field(default_factory=set)  # (server, tool) approved here
    search_cache: dict[str, Any] = field(default_factory=dict)
    # plug-button servers' prompts and resources (tools.mcp_user.UserServer), by name
    user_servers: dict[str, Any] = field(default_factory=dict)
    # the configured servers (the UI's McpHub.servers): their prompts and resources beside these
    configured_servers: Callable[[], Mapping[str, Any]] = field(default=lambda: {}, repr=False)
    # their tools now (the UI's hub.toolset), read again mid-run after a server's list_changed
    configured_now: Callable[[], ToolSet] | None = field(default=None, repr=False)
    # the user's search_knowledge tool while they can read a document (None: no document, or no
    # knowledge here): a model is never offered a search with nothing behind it (#41)
    knowledge: Callable[[], BaseTool | None] = field(default=lambda: None, repr=False)
    _local: tuple[tuple[Any, ...], ToolSet] | None = field(default=None, repr=False)
    _renames: dict[int, tuple[BaseTool, BaseTool]] = field(default_factory=dict, repr=False)
    _resource_tools: list[BaseTool] | None = field(default=None, repr=False)

    def local(self, settings: Settings, study: Study) -> ToolSet:
        """The local tool families, rebuilt only when what they depend on changes."""
        key = (
            settings.search_backend,
            settings.search_fixture,
            settings.limits.enable_cache,
            id(study),
            settings.data_dir,
        )
        if self._local is None or self._local[0] != key:
            self._local = (key, local_toolset(settings, study, self.search_cache))
        return self._local[1]

    def toolset(self, settings: Settings, study: Study) -> ToolSet:
        """Every tool an agent turn gets now: web search, EEG, the user's documents, configured
        and user MCP tools."""
        local = self.local(settings, study)
        tools = list(local.tools)
        if (own := self.knowledge()) is not None:
            tools.append(own)
        failures = list(local.failures) + list(self.configured.failures)
        taken = {t.name for t in tools}
        for tool in [
            *self._configured_tools(),
            *(t for ts in self.user_tools.values() for t in ts),
        ]:
            if tool.name in taken:
                tool = self._renamed(tool)
            taken.add(tool.name)
            tools.append(tool)
        return ToolSet(tools=tools, failures=failures)

    async def tools_now(self, settings: Settings, study: Study) -> list[BaseTool]:
        """The tools as they are now, once the servers' re-listings after a `list_changed` are
        in, configured and plugged-in ones (asked before each of a run's requests)."""
        from brainchat.tools.mcp_notify import settled

        await settled([*self.configured_servers().values(), *self.user_servers.values()])
        if self.configured_now is not None:
            self.configured = self.configured_now()
        return self.toolset(settings, study).tools

    def _configured_tools(self) -> list[BaseTool]:
        """The configured servers' tools; with a user server that has resources, the resource
        tools are this conversation's own pair, reaching the configured servers and the user's."""
        if not any(s.resources_offered for s in self.user_servers.values()):
            return list(self.configured.tools)
        from brainchat.tools import mcp_resources

        if self._resource_tools is None:  # built once: the agent cache keys on tool ids
            self._resource_tools = mcp_resources.resource_tools(self.feature_servers)
        own = [t for t in self.configured.tools if t.name not in mcp_resources.TOOL_NAMES]
        return [*own, *self._resource_tools]

    def feature_servers(self) -> dict[str, Any]:
        """The connected servers whose prompts and resources this conversation reaches: the user's
        and the configured ones (a configured server wins a name both use)."""
        found = dict(self.user_servers)
        configured = self.configured_servers().items()
        found.update({n: s for n, s in configured if s.state == "connected"})
        return found

    def prompt_commands(self) -> list[Any]:
        """Every reachable server's prompts as slash commands (mcp_prompts.PromptCommand)."""
        from brainchat.tools.mcp_prompts import PromptCommand

        return [PromptCommand(n, p) for n, s in self.feature_servers().items() for p in s.prompts]

    async def render_prompt(self, command_id: str, text: str) -> str:
        """`/mcp.SERVER.PROMPT key=value ...` rendered by its server, as the user's turn."""
        from brainchat.tools.mcp_prompts import render_command

        return await render_command(
            self.prompt_commands(), self.feature_servers(), command_id, text
        )

    def _renamed(self, tool: BaseTool) -> BaseTool:
        """A clashing MCP tool as `server__name`; the same copy every turn (the agent cache)."""
        copy = self._renames.get(id(tool))
        if copy is None or copy[0] is not tool:
            source = flags_of(tool).source.removeprefix("mcp:")
            copy = (tool, tool.model_copy(update={"name": f"{source}__{tool.name}"}))
            self._renames[id(tool)] = copy
        return copy[1]

    def use_knowledge(self, offer: Callable[[], BaseTool | None]) -> None:
        """Where the user's search_knowledge tool comes from (the same tool every turn)."""
        self.knowledge = offer

    def add_user_tools(self, server: str, tools: list[BaseTool]) -> None:
        self.remove_user_tools(server)
        self.user_tools[server] = tools

    def replace_user_tools(self, server: str, tools: list[BaseTool], changed: set[str]) -> None:
        """A user server's tools after its list changed. A tool whose definition did not change
        (its server's name not in `changed`) keeps its object (the agent's bound schema) and its
        approval; a changed one is a tool the user never approved: it asks again."""
        old = {t.name: t for t in self.user_tools.get(server, [])}
        kept = [
            old[t.name]
            if t.name in old and (t.metadata or {}).get("mcp_tool") not in changed
            else t
            for t in tools
        ]
        same = {t.name for t in kept if old.get(t.name) is t}
        same |= {f"{server}__{n}" for n in same}  # as `_renamed` offers a clashing one
        self.approved -= {k for k in self.approved if k[0] == server and k[1] not in same}
        self.user_tools[server] = kept

    def remove_user_tools(self, server: str) -> None:
        """Forget a user server's tools, prompts, resources and the approvals given for them."""
        self.user_tools.pop(server, None)
        self.user_servers.pop(server, None)
        self.approved = {k for k in self.approved if k[0] != server}

    def with_failure(self, source: str, reason: str) -> None:
        self.configured = replace(
            self.configured, failures=[*self.configured.failures, ToolFailure(source, reason)]
        )
