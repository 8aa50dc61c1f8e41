"""A guard's word on a tool call before it runs: allow (None), refuse, or suggest (guards.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Refuse:
    """The call does not run; the model reads why."""

    why: str


@dataclass(frozen=True)
class Suggest:
    """The call does not run this time; the model reads the conflict and the arguments
    suggested, and decides: the suggested call, or the same call again, which then runs."""

    args: dict[str, Any]
    why: str


Decision = Refuse | Suggest | None  # None: allow
