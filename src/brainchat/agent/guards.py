"""Guards: every rule that steers the function-call model, each at one of a few hook points.

The run loop asks its guards at fixed points and nowhere else (as pydantic-ai's capabilities
and LangGraph's tool wrappers give each rule one place):

- `offer`       which tools the model sees this round;
- `shape`       which of their arguments a prompt-mode model is shown and may write;
- `opening`     calls brainchat makes itself before the model's first request;
- `guide`       text added to the system prompt (worked examples);
- `notes`       notes added after the run's messages, newest last (the next step);
- `before_tool` a call about to run: allow it, refuse it with a reason, or send it back with
                suggested arguments that the model may take or leave (a correctable error);
- `after_round` a round that ran: a reason the request is done, or nothing;
- `closing`     the model called nothing more: calls brainchat makes itself (once), or none;
- `stopped`     the model called nothing more: a reminder to send once, or nothing;
- `limits`      the limits in force for this request.

Which guards run is the model's profile (agent/profile.py): a minimal profile has none of these
(its loop limits, approvals and answer check are the run's own); a guided one has
agent/guided.py's. A guard reads the run's record of the request, never the request's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brainchat.agent.verdicts import Decision, Refuse, Suggest
from brainchat.settings import AgentLimits

if TYPE_CHECKING:
    from brainchat.agent.context import Deps
    from brainchat.agent.state import LedgerEntry, RunContext


class Guard:
    """A rule with any of the hook points (see the module docstring); each default does nothing."""

    def offer(self, d: Deps, run: RunContext, names: list[str]) -> list[str]:
        return names

    def shape(
        self, d: Deps, run: RunContext, schemas: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        return schemas

    def opening(self, d: Deps, run: RunContext) -> list[dict[str, Any]]:
        return []

    def guide(self, d: Deps, run: RunContext) -> str:
        return ""

    def notes(self, d: Deps, run: RunContext) -> list[str]:
        return []

    def before_tool(self, d: Deps, run: RunContext, call: dict[str, Any]) -> Decision:
        return None

    def after_round(
        self, d: Deps, run: RunContext, entries: list[LedgerEntry], at_limit: bool
    ) -> str:
        return ""

    def closing(self, d: Deps, run: RunContext) -> list[dict[str, Any]]:
        return []

    def stopped(self, d: Deps, run: RunContext) -> str | None:
        return None

    def limits(self, d: Deps, run: RunContext, limits: AgentLimits) -> AgentLimits:
        return limits


@dataclass(frozen=True)
class Guards:
    """The guards in force, asked in order; the first that decides a point decides it."""

    guards: Sequence[Guard] = ()

    def offer(self, d: Deps, run: RunContext, names: list[str]) -> list[str]:
        for guard in self.guards:
            names = guard.offer(d, run, names)
        return names

    def shape(
        self, d: Deps, run: RunContext, schemas: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        for guard in self.guards:
            schemas = guard.shape(d, run, schemas)
        return schemas

    def opening(self, d: Deps, run: RunContext) -> list[dict[str, Any]]:
        return [call for guard in self.guards for call in guard.opening(d, run)]

    def guide(self, d: Deps, run: RunContext) -> str:
        return "\n\n".join(text for guard in self.guards if (text := guard.guide(d, run)))

    def notes(self, d: Deps, run: RunContext) -> list[str]:
        return [note for guard in self.guards for note in guard.notes(d, run)]

    def before_tool(self, d: Deps, run: RunContext, call: dict[str, Any]) -> Decision:
        for guard in self.guards:
            if (decision := guard.before_tool(d, run, call)) is not None:
                return decision
        return None

    def after_round(
        self, d: Deps, run: RunContext, entries: list[LedgerEntry], at_limit: bool
    ) -> str:
        """Why the request is done after this round ("": it goes on). `at_limit`: the round
        limit is reached, so a done request is answered as done, not as cut short."""
        return next(
            (why for g in self.guards if (why := g.after_round(d, run, entries, at_limit))), ""
        )

    def closing(self, d: Deps, run: RunContext) -> list[dict[str, Any]]:
        return [call for guard in self.guards for call in guard.closing(d, run)]

    def stopped(self, d: Deps, run: RunContext) -> str | None:
        return next((note for g in self.guards if (note := g.stopped(d, run))), None)

    def limits(self, d: Deps, run: RunContext, limits: AgentLimits) -> AgentLimits:
        for guard in self.guards:
            limits = guard.limits(d, run, limits)
        return limits


NONE = Guards()


def in_force(d: Deps) -> Guards:
    """The guards in force for the function-call model's profile now: a guided profile's (its
    tool calling may have switched to prompt mid-run), else none."""
    return d.guided if d.profile.guided and d.guided is not None else NONE


__all__ = ["NONE", "Decision", "Guard", "Guards", "Refuse", "Suggest", "in_force"]
