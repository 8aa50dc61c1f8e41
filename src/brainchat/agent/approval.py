"""When a tool call needs the user's approval, why, and the answers a confirm hook may give.

A confirm hook is `confirm(name, args)` or `confirm(name, args, ask)`; it returns True/False or
one of "once", "always" (approve for the rest of the conversation) and "reject". Destructive
tools ask every time; MCP tools not marked read-only (by their server or mcp_servers.json) ask
before their first use in a conversation.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool

from brainchat import i18n
from brainchat.tools.registry import flags_of

Answer = Literal["once", "always", "reject"]
Reason = Literal["destructive", "server_destructive", "first_use", "unmarked", "plan_step"]
Confirm = Callable[..., Awaitable[bool | str]]


@dataclass(frozen=True)
class Ask:
    """Why one call asks, and whether "approve for this conversation" is offered."""

    reason: Reason
    server: str = ""  # the MCP server's name, "" for a local tool

    @property
    def allow_always(self) -> bool:
        return self.reason in ("first_use", "unmarked")  # a destructive tool asks every time

    def why(self, name: str) -> str:
        """One sentence for the dialog or the terminal, in the interface's language."""
        key = self.reason if self.reason in REASONS else "changes"
        return i18n.t(f"approval.{key}", name=name, server=self.server)


REASONS = ("server_destructive", "plan_step", "first_use", "unmarked")


def ask_for(tool: BaseTool) -> Ask | None:
    """The approval a call of this tool needs, or None to run it at once."""
    flags = flags_of(tool)
    server = flags.source.removeprefix("mcp:") if flags.source.startswith("mcp:") else ""
    if flags.destructive:
        hints = (tool.metadata or {}).get("mcp_annotations") or {}
        return Ask(
            "server_destructive" if hints.get("destructiveHint") is True else "destructive", server
        )
    if not flags.ask_first:
        return None
    configured = (tool.metadata or {}).get("mcp_configured") is True
    return Ask("unmarked" if configured else "first_use", server)


async def request(confirm: Confirm, name: str, args: dict[str, Any], ask: Ask) -> Answer:
    """Ask the hook; True means "once", an unknown reply means "reject"."""
    reply = await (confirm(name, args, ask) if _takes_ask(confirm) else confirm(name, args))
    if reply is True or reply == "once":
        return "once"
    if reply == "always":
        return "always" if ask.allow_always else "once"
    return "reject"


def remembering(confirm: Confirm | None, approved: set[tuple[str, str]]) -> Confirm | None:
    """Wrap a conversation's hook: tools approved "for this conversation" are not asked again."""
    if confirm is None:
        return None  # headless without a hook: nothing is approved, not even remembered ones

    async def confirm_once(name: str, args: dict[str, Any], ask: Ask) -> Answer:
        if ask.allow_always and (ask.server, name) in approved:
            return "always"
        answer = await request(confirm, name, args, ask)
        if answer == "always":
            approved.add((ask.server, name))
        return answer

    return confirm_once


def _takes_ask(confirm: Confirm) -> bool:
    """Hooks written before `ask` existed take (name, args) only; they still work."""
    try:
        params = list(inspect.signature(confirm).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) >= 3
