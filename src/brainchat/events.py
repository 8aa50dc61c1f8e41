"""Typed events emitted by a run: the only thing the UI, the CLI and the tests see of the core."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, cast

StopReason = Literal[
    "answered",
    "iteration_limit",
    "round_limit",
    "timeout",
    "loop",
    "cancelled",
    "model_error",
    "plan_failed",
    "context_full",
    "error",
]
PlanStatus = Literal["ready", "running", "done", "failed"]
ToolStatus = Literal["success", "error", "refused", "cached", "skipped"]
Phase = Literal["starting", "restoring", "waiting", "preparing", "building", "training", "evaluating", "fitting"]  # fmt: skip


@dataclass(kw_only=True)
class Event:
    """Base of every event; `type` names the kind on the wire (JSON lines, tests)."""

    type: ClassVar[str] = "event"
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key, value in list(data.items()):
            if isinstance(value, bytes):
                data[key] = base64.b64encode(value).decode("ascii")
        return {"type": self.type, **data}


@dataclass(kw_only=True)
class RunStarted(Event):
    type: ClassVar[str] = "run_started"
    mode: Literal["chat", "agent"]
    question: str
    models: dict[str, str] = field(default_factory=dict)  # role -> model name
    tools: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class ThinkingToken(Event):
    type: ClassVar[str] = "thinking_token"
    role: str
    model: str
    text: str
    round: int = 0


@dataclass(kw_only=True)
class ThinkingDone(Event):
    type: ClassVar[str] = "thinking_done"
    role: str
    model: str
    text: str
    round: int = 0
    duration: float = 0.0
    tool_calls: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class ToolCallStarted(Event):
    type: ClassVar[str] = "tool_call_started"
    call_id: str
    name: str
    args: dict[str, Any]
    source: str = "local"
    round: int = 0


@dataclass(kw_only=True)
class ToolProgress(Event):
    """Progress of a long-running tool (training epochs, ICA fitting...)."""

    type: ClassVar[str] = "tool_progress"
    call_id: str
    name: str
    message: str  # English, for the CLI and logs
    fraction: float | None = None
    data: dict[str, Any] = field(default_factory=dict)
    phase: Phase | None = None  # what it does now: the UI names it in the user's language


@dataclass(kw_only=True)
class ToolImage(Event):
    """A PNG produced by a tool (EEG plots), to be shown under its step."""

    type: ClassVar[str] = "tool_image"
    call_id: str
    name: str
    title: str
    png: bytes
    svg: bytes = b""  # the same figure as SVG, to download (empty: none)


@dataclass(kw_only=True)
class ToolFile(Event):
    """A file a tool wrote for the user (an exported analysis), offered for download."""

    type: ClassVar[str] = "tool_file"
    call_id: str
    name: str
    path: str  # absolute path on the server, inside the data folder
    title: str  # the file's name as shown
    mime: str = "application/octet-stream"


@dataclass(kw_only=True)
class ToolFinished(Event):
    type: ClassVar[str] = "tool_finished"
    call_id: str
    name: str
    status: ToolStatus
    duration: float
    summary: str
    content: str = ""
    error: str | None = None
    cache_hit: bool = False
    result_count: int | None = None
    top: list[dict[str, str]] = field(default_factory=list)  # title, url, snippet
    structured: Any = None
    started_at: float = 0.0
    finished_at: float = 0.0


@dataclass(kw_only=True)
class Evaluation(Event):
    type: ClassVar[str] = "evaluation"
    verdict: Literal["enough", "continue", "not_enough", "answer", "stop"]
    reason: str
    round: int = 0


@dataclass(kw_only=True)
class ModelSwitch(Event):
    type: ClassVar[str] = "model_switch"
    role: str
    model: str
    reason: str


@dataclass(kw_only=True)
class AnswerToken(Event):
    type: ClassVar[str] = "answer_token"
    role: str
    model: str
    text: str


@dataclass(kw_only=True)
class AnswerChecked(Event):
    """The answer, checked against the run: `text` replaces what was streamed, with each sentence
    the run cannot show marked in place; `flags` says what was found (kind, sentence, why)."""

    type: ClassVar[str] = "answer_checked"
    text: str
    flags: list[dict[str, str]]


@dataclass(kw_only=True)
class RequestUnderstood(Event):
    """The request record a guided model made (agent/record.py): None when none could be."""

    type: ClassVar[str] = "request_understood"
    record: dict[str, Any] | None
    model: str
    duration: float = 0.0
    how: str = "schema"  # schema: a JSON-schema reply; text: JSON read from the reply's text
    problem: str = ""  # why there is no record


@dataclass(kw_only=True)
class Citations(Event):
    type: ClassVar[str] = "citations"
    sources: list[dict[str, Any]]  # n, title, url


@dataclass(kw_only=True)
class Notice(Event):
    """Something the user should know in plain words: a limit, a loop, an error, a refusal."""

    type: ClassVar[str] = "notice"
    kind: Literal[
        "iteration_limit", "round_limit", "timeout", "loop", "error", "refused", "cancelled",
        "info", "plan_failed", "unverified_claim", "ungrounded", "context_full",
        "tool_calling",  # how the function-call model's calls are read (agent/automode.py)
        "suggested",  # a call sent back with the arguments the request fixed (agent/guided.py)
    ]  # fmt: skip
    message: str
    hint: str = ""


@dataclass(kw_only=True)
class RoleStats:
    role: str
    model: str
    calls: int = 0
    failed: int = 0  # calls that ended in an error or a timeout (counted in `calls` too)
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    seconds: float = 0.0
    ttft: float | None = None
    cost: float | None = None


@dataclass(kw_only=True)
class Stats(Event):
    type: ClassVar[str] = "stats"
    rows: list[RoleStats]
    total_seconds: float
    ttft: float | None = None  # time from run start to the first answer token
    total_cost: float | None = None
    tool_seconds: float = 0.0
    unverified: int = 0  # statements of the answer the run cannot show, marked in it


@dataclass(kw_only=True)
class StudyChanged(Event):
    """The EEG study changed stage or content; the UI may refresh its view of it."""

    type: ClassVar[str] = "study_changed"
    stage: str
    summary: str
    change: str = ""  # only what this operation changed, in a researcher's words
    call_id: str = ""  # the tool call that changed it, when known


@dataclass(kw_only=True)
class StudyRestored(Event):
    """A conversation's saved EEG study was rebuilt from its log (on its first use after a resume)."""

    type: ClassVar[str] = "study_restored"
    replayed: list[str]  # what was redone, in order
    stage: str
    seconds: float
    problem: str | None = None  # why the replay stopped early
    skipped: list[str] = field(default_factory=list)  # what could not be redone


@dataclass(kw_only=True)
class PlanCreated(Event):
    """The function-call model's plan: steps (id, title, tool, status) shown as a task list."""

    type: ClassVar[str] = "plan_created"
    steps: list[dict[str, Any]]
    mode: str = "auto"  # the plan mode that asked for it
    max_replans: int = 2


@dataclass(kw_only=True)
class PlanStepUpdated(Event):
    """A plan step moved: ready -> running -> done (verified) / failed, with the evidence."""

    type: ClassVar[str] = "plan_step_updated"
    step_id: int
    title: str
    status: PlanStatus
    detail: str = ""


@dataclass(kw_only=True)
class Replanned(Event):
    """A failed or unverified step made the planner write the remaining steps again."""

    type: ClassVar[str] = "replanned"
    attempt: int
    max_attempts: int
    reason: str
    steps: list[dict[str, Any]] = field(default_factory=list)  # the whole plan after the replan


@dataclass(kw_only=True)
class RunFinished(Event):
    type: ClassVar[str] = "run_finished"
    reason: StopReason
    answer: str = ""
    error: str | None = None


# fmt: off
AnyEvent: TypeAlias = (
    RunStarted | ThinkingToken | ThinkingDone | ToolCallStarted | ToolProgress | ToolImage
    | ToolFile | ToolFinished | Evaluation | ModelSwitch | AnswerToken | AnswerChecked | Citations
    | Notice | Stats | StudyChanged | StudyRestored | PlanCreated | PlanStepUpdated | Replanned
    | RunFinished | RequestUnderstood
)
# fmt: on
"""Every kind of event. The UI and the CLI render one with a `match` over this union that ends in
`assert_never`, so mypy names an event kind that has no renderer; tests/test_events_dispatch.py
checks that the union lists every Event subclass and that both renderers handle each of them."""


def as_any(event: Event) -> AnyEvent:
    """`event` typed as the member of AnyEvent it is (every event is one; a test keeps it so)."""
    return cast(AnyEvent, event)


EventCallback = Callable[[Event], None]

_sink: contextvars.ContextVar[EventCallback | None] = contextvars.ContextVar(
    "brainchat_event_sink", default=None
)
_tool_call: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "brainchat_tool_call", default=None
)


def emit(event: Event) -> None:
    """Send an event to the current run's sink, if any (safe from worker threads too)."""
    sink = _sink.get()
    if sink is not None:
        sink(event)


def silence_after(stop: threading.Event) -> None:
    """From now on in this context, drop events once `stop` is set: a stopped step still finishing
    in its thread must not add progress under a tool call that has ended for the user."""
    sink = _sink.get()
    if sink is not None:
        _sink.set(lambda event: None if stop.is_set() else sink(event))


def current_tool_call() -> tuple[str, str]:
    """(call_id, tool name) of the tool call running in this context, or ("", "")."""
    return _tool_call.get() or ("", "")


def set_tool_call(call_id: str, name: str) -> contextvars.Token:
    return _tool_call.set((call_id, name))


class EventQueue:
    """An asyncio queue of events that worker threads may also push to."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._owner = threading.get_ident()

    def put(self, event: Event | None) -> None:
        if threading.get_ident() == self._owner:
            self.queue.put_nowait(event)
        else:
            self._loop.call_soon_threadsafe(self.queue.put_nowait, event)

    def bind(self) -> contextvars.Token:
        """Make `emit` in this context (and tasks/threads started from it) feed this queue."""
        return _sink.set(self.put)


def unbind(token: contextvars.Token) -> None:
    _sink.reset(token)


async def stream_events(work: Callable[[], Any]) -> Any:
    """Run `work()` (a coroutine function) in a task and yield the events it emits, in order.

    Cancelling the consumer cancels the work; an exception in the work is re-raised after the
    events emitted before it have been yielded.
    """
    events = EventQueue()

    async def runner() -> None:
        token = events.bind()
        try:
            await work()
        finally:
            unbind(token)
            events.put(None)

    task = asyncio.create_task(runner())
    try:
        while True:
            event = await events.queue.get()
            if event is None:
                break
            yield event
        await task
    finally:
        if not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
