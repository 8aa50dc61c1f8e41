"""What the app and a study's kernel say to each other over their one connection.

The app sends `Start` once, then `Call`s (a tool by name, or the export) and `Stop`s; the kernel
answers each call with the events it emits (`Emitted`), then `Done` with the tool's text or its
error and the study as the app mirrors it (`Mirror`). A stopped call is answered `Done`
(cancelled) at once and `Settled` when the step's thread has ended and the study is free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Mirror:
    """What the app keeps of the study: what it shows, saves and tells the agent."""

    stage: str = "empty"
    summary: str = "EEG study: empty."
    facts: dict[str, Any] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] | None = None
    emptied: str | None = None  # a note for the user, said once


@dataclass(frozen=True)
class Start:
    data_dir: str
    max_operation_mb: int | None
    model_dir: str | None
    key: bytes
    pending: list[dict[str, Any]] | None


@dataclass(frozen=True)
class Call:
    id: int
    tool: str  # a tool's name, or EXPORT
    args: dict[str, Any]
    call_id: str  # the agent's tool-call id: the events' call_id
    name: str  # the tool name the events carry
    info: dict[str, Any] = field(default_factory=dict)  # the settings an export reports


EXPORT = "(export)"


@dataclass(frozen=True)
class Stop:
    id: int


@dataclass(frozen=True)
class Emitted:
    id: int
    event: Any


@dataclass(frozen=True)
class Done:
    id: int
    ok: bool
    value: Any  # the tool's text, the Exported, or the error (a ToolException, or its text)
    mirror: Mirror
    cancelled: bool = False


@dataclass(frozen=True)
class Settled:
    id: int
    mirror: Mirror
