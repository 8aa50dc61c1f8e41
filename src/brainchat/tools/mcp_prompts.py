"""MCP prompts: a server's prompt templates, offered to the user as slash commands.

Each prompt becomes the command `/mcp.SERVER.PROMPT` (as VS Code names them); its arguments are
given as `key=value` words after it (quotes for spaces). The rendered messages become the
user's turn: one user message as it is, several with their roles written before them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import ToolException
from mcp import ClientSession, types

from brainchat.redact import mask

PREFIX = "mcp."
TIMEOUT = 30.0
MAX_CHOICES = 100  # the specification's most values in one completion
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class PromptCommand:
    """One server prompt as a slash command."""

    server: str
    prompt: types.Prompt

    @property
    def id(self) -> str:
        return _ID_CHARS.sub("_", f"{PREFIX}{self.server}.{self.prompt.name}")

    def usage(self) -> str:
        args = " ".join(
            f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in self.prompt.arguments or []
        )
        return f"/{self.id} {args}".strip()

    def description(self) -> str:
        about = self.prompt.description or self.prompt.title or f"prompt '{self.prompt.name}'"
        return f"{about} (MCP server '{self.server}'): {self.usage()}"[:200]


async def list_all_prompts(
    session: ClientSession, capabilities: types.ServerCapabilities | None
) -> list[types.Prompt]:
    """Every prompt of a session at connect (none if the server has no prompts capability)."""
    if capabilities is None or capabilities.prompts is None:
        return []
    prompts: list[types.Prompt] = []
    cursor: str | None = None
    try:
        for _ in range(50):
            page = await session.list_prompts(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            prompts.extend(page.prompts)
            cursor = page.nextCursor
            if not cursor:
                break
    except Exception:  # noqa: BLE001 - a server whose prompts cannot be listed offers none
        return []
    return prompts


def parse_arguments(command: PromptCommand, text: str) -> dict[str, str]:
    """`key=value` words (quotes allowed) -> arguments; ValueError says what is wrong and how."""
    args = parse_given(command, text)
    missing = missing_arguments(command, args)
    if missing:
        raise ValueError(f"missing {', '.join(missing)}; usage: {command.usage()}")
    return args


def missing_arguments(command: PromptCommand, args: Mapping[str, str]) -> list[str]:
    """The required arguments not given, in the prompt's order."""
    return [a.name for a in command.prompt.arguments or [] if a.required and a.name not in args]


def parse_given(command: PromptCommand, text: str) -> dict[str, str]:
    """The `key=value` words given (required ones may be missing); ValueError for the rest."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"{exc}; usage: {command.usage()}") from None
    known = {a.name: a for a in command.prompt.arguments or []}
    args: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            if len(known) == 1 and not args:  # a single argument may be given bare
                key, value = next(iter(known)), word
            else:
                raise ValueError(f"'{mask(word)}' is not key=value; usage: {command.usage()}")
        if key not in known:
            raise ValueError(
                f"'{command.id}' has no argument '{mask(key)}'; usage: {command.usage()}"
            )
        args[key] = value
    return args


async def complete(
    server: Any, command: PromptCommand, argument: str, typed: str, given: Mapping[str, str]
) -> list[str]:
    """The server's completions (completion/complete) of `argument` from what is `typed`, the
    arguments already `given` as context; none when the server offers no completions."""
    caps = getattr(server, "capabilities", None)
    if caps is None or caps.completions is None:
        return []
    ref = types.PromptReference(type="ref/prompt", name=command.prompt.name)
    context = {k: v for k, v in given.items() if k != argument} or None
    result = await server.request(
        f"completion of '{argument}'",
        "a completion",
        lambda s: s.complete(ref, {"name": argument, "value": typed}, context_arguments=context),
        TIMEOUT,
    )
    return [str(v) for v in result.completion.values[:MAX_CHOICES]]


def as_turn(result: types.GetPromptResult) -> str:
    """The rendered messages as the user's turn."""
    parts = [(m.role, _text(m.content)) for m in result.messages]
    if len(parts) == 1 and parts[0][0] == "user":
        return parts[0][1]
    return "\n\n".join(f"[{role}] {text}" for role, text in parts)


def _text(content: types.ContentBlock) -> str:
    if isinstance(content, types.TextContent):
        return content.text
    if isinstance(content, types.EmbeddedResource):
        res = content.resource
        if isinstance(res, types.TextResourceContents):
            return res.text
        return f"[resource {res.uri} ({res.mimeType or 'binary'})]"
    if isinstance(content, types.ResourceLink):
        return f"[resource {content.name}: {content.uri}]"
    return f"[{content.type} content, not shown]"


async def render(server: Any, command: PromptCommand, text: str) -> str:
    """The prompt rendered by its server (`server.request`, as mcp_resources' `Server`) as the
    user's turn: ValueError for bad arguments (with the usage), ToolException for the rest."""
    args = parse_arguments(command, text)
    name = command.prompt.name
    result = await server.request(
        f"prompt '{name}'", f"the prompt '{name}'", lambda s: s.get_prompt(name, args), TIMEOUT
    )
    return as_turn(result)


async def render_command(
    commands: list[PromptCommand], servers: Mapping[str, Any], command_id: str, text: str
) -> str:
    """`/mcp.SERVER.PROMPT key=value ...`: the command among `commands`, rendered by its server."""
    found = {c.id: c for c in commands}
    if command_id not in found:
        raise not_found(command_id)
    command = found[command_id]
    return await render(servers[command.server], command, text)


def not_found(command_id: str) -> ToolException:
    return ToolException(f"no MCP prompt '/{mask(command_id)}' (type / to see the commands)")
