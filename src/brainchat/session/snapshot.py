"""A conversation's state as one value: what `Session.snapshot()` gives and `restore()` takes.

The UI keeps part of it with a stored thread (`saved()`: the mode, the panel's values, the EEG
study's operation log, the uploads) and rebuilds the history from the thread's steps; the CLI and
evals hand one to a fresh session. Approvals and the history are never written to the thread's
metadata: approvals hold for the live conversation only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from brainchat.session.transcript import Turn


@dataclass(frozen=True)
class Snapshot:
    mode: str | None = None  # None: the session's own
    overrides: Mapping[str, Any] = field(default_factory=dict)  # the settings panel's values
    history: Sequence[BaseMessage] = ()
    turns: Sequence[Turn] = ()
    study: Sequence[dict[str, Any]] = ()  # the EEG study's operation log, replayed on first use
    uploads: Sequence[str] = ()
    approved: frozenset[tuple[str, str]] = frozenset()  # (server, tool) approved

    def __post_init__(self) -> None:  # one shape, whatever was given: equal states compare equal
        for name in ("history", "turns", "study", "uploads"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "overrides", dict(self.overrides))
        object.__setattr__(self, "approved", frozenset(self.approved))

    def saved(self) -> dict[str, Any]:
        """The part kept with a stored thread, as JSON values."""
        return {
            "mode": self.mode,
            "overrides": dict(self.overrides),
            "study": list(self.study),
            "uploads": list(self.uploads),
        }

    @classmethod
    def from_saved(
        cls,
        state: Mapping[str, Any],
        history: Sequence[BaseMessage] = (),
        turns: Sequence[Turn] = (),
    ) -> Snapshot:
        """A stored thread's state (as `saved()` wrote it, maybe by an older version, maybe
        damaged): values of the wrong shape are left out, never fatal."""
        overrides = state.get("overrides")
        study = state.get("study")
        uploads = state.get("uploads")
        good_study = isinstance(study, list) and all(
            isinstance(e, dict) and "op" in e for e in study
        )
        return cls(
            mode=str(state["mode"]) if state.get("mode") else None,
            overrides=dict(overrides) if isinstance(overrides, Mapping) else {},
            history=list(history),
            turns=list(turns),
            study=list(study) if good_study and isinstance(study, list) else [],
            uploads=[str(u) for u in uploads] if isinstance(uploads, list) else [],
        )
