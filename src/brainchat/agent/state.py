"""The record of one agent run: the tool-call ledger, usage, the deadline (graph state: context.py)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from brainchat.agent.approval import Confirm
from brainchat.usage import UsageCallback, UsageLedger

ANSWER_GRACE = 3.0  # seconds the answer may take when the deadline has already passed
ERROR_CHARS = 600  # a failed call's error as summaries repeat it (verdicts, plan, answer input)
CallStatus = Literal["pending", "success", "error", "refused", "skipped", "cancelled"]


@dataclass(frozen=True)
class Seen:
    """An earlier call of this run whose outcome still holds (nothing state-changing ran since)."""

    status: CallStatus  # "success" or "error"
    text: str  # the result, or the error
    round: int
    batch: bool = False  # the whole batch of the last round, state-changing calls included
    changed: bool = False  # a state-changing call that succeeded: running it again applies it twice
    mark: str | None = None  # the study's facts right after it ran (None: no study facts)
    fix: dict[str, Any] | None = None  # the call its failure names as the fix (tools/errors.py)


@dataclass
class LedgerEntry:
    """One tool call, from request to result: the verification record."""

    call_id: str
    name: str
    args: dict[str, Any]
    round: int
    status: CallStatus = "pending"
    result: str = ""
    error: str | None = None  # bounded (ERROR_CHARS): summaries repeat it
    error_text: str | None = None  # the whole error, for the call's own tool message and the UI
    sources: list[dict[str, Any]] = field(default_factory=list)  # numbered search results
    structured: Any = None
    cache_hit: bool = False
    reused: Seen | None = None  # set when an identical earlier call's outcome was handed back
    invalid: bool = False  # the reply broke the call (bad JSON, unknown tool, bad arguments)
    fix: dict[str, Any] | None = None  # the call its failure names as the fix (tools/errors.py)
    declined: bool = False  # not approved: by the user, or in a run with no one to ask
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None

    def finish(self, status: CallStatus, result: str = "", error: str | None = None) -> None:
        """Record the outcome. A tool's error can be a whole traceback (an MCP server's isError
        text has no limit): `error` keeps its head and tail, since the verdict note, the plan's
        step detail and the answer input all repeat it; `error_text` keeps it whole."""
        self.status, self.result = status, result
        self.error_text, self.error = error, None if error is None else clip(error, ERROR_CHARS)
        self.finished_at = time.time()


def clip(text: str, limit: int) -> str:
    """At most about `limit` characters: the head and the tail, with a marker of what was cut."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[len(text) - limit // 3 :]
    return f"{head} [... {len(text) - len(head) - len(tail):,} characters cut ...] {tail}"


class ToolLedger:
    """Every tool call of a run; the answer stage reads only what really came back."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []
        self.sources: list[dict[str, Any]] = []  # n, title, url, snippet (global numbering)
        self._by_url: dict[str, int] = {}

    def open(self, call_id: str, name: str, args: dict[str, Any], round_: int) -> LedgerEntry:
        entry = LedgerEntry(call_id=call_id, name=name, args=args, round=round_)
        self.entries.append(entry)
        return entry

    def pending(self) -> list[LedgerEntry]:
        return [e for e in self.entries if e.status == "pending"]

    def successful(self) -> list[LedgerEntry]:
        return [e for e in self.entries if e.status == "success"]

    def number_sources(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Give search results global numbers [n], the same URL always the same number."""
        numbered = []
        for item in results:
            url = str(item.get("url") or item.get("href") or "")
            if url and url in self._by_url:
                numbered.append(self.sources[self._by_url[url] - 1])
                continue
            source: dict[str, Any] = {
                "n": len(self.sources) + 1,
                "title": str(item.get("title") or url or "untitled"),
                "url": url,
                "snippet": str(item.get("snippet") or item.get("body") or ""),
            }
            self.sources.append(source)
            if url:
                self._by_url[url] = source["n"]
            numbered.append(source)
        return numbered


def call_signature(name: str, args: dict[str, Any]) -> str:
    """Identity of a call for loop detection: tool name + normalized arguments."""
    normal = {k: (v.strip().lower() if isinstance(v, str) else v) for k, v in args.items()}
    return name + json.dumps(normal, sort_keys=True, default=str)


@dataclass
class RunContext:
    """The record of one run, kept beside the graph state (LangGraph's runtime context carries
    it to every node): the tool-call ledger, usage, the deadline and this run's confirm hook."""

    question: str
    started: float
    deadline: float
    usage: UsageLedger
    callback: UsageCallback  # tokens, usage and timings per role, for every model call
    confirm: Confirm | None = None  # asks this run's user (the tab or terminal that asked)
    ledger: ToolLedger = field(default_factory=ToolLedger)
    seen: dict[str, Seen] = field(default_factory=dict)  # signature -> outcome still valid
    tool_seconds: float = 0.0
    first_answer_token: float | None = None
    unverified: int = 0  # statements of the answer the run could not show (grounding.ground)
    history: list[BaseMessage] = field(default_factory=list)  # earlier turns of the conversation
    answer_reserve: float = 0.0  # seconds of the limit kept for the answer stage
    fit_told: set[str] = field(default_factory=set)  # reductions the user was told of (fit_run)
    learning: dict[str, Any] = field(default_factory=dict)  # automode.py's per-run marks
    record: Any = None  # the request's record (agent/record.py), when one was made
    facts_at_start: dict[str, Any] = field(default_factory=dict)  # the study when it was made
    suggested: set[str] = field(default_factory=set)  # calls sent back once with suggestions
    suggestion: dict[str, Any] | None = None  # the latest suggested call, until its tool runs
    reminded: bool = False  # a guard reminded the model of asked steps never run

    def remaining(self) -> float:
        """Seconds left for the tool loop (the answer stage keeps its reserve)."""
        return self.deadline - self.answer_reserve - time.perf_counter()

    def answer_remaining(self) -> float:
        """Seconds left for the answer: up to the run's deadline, at least a short grace.

        The grace matters only when a long-running tool (training) overran the deadline.
        """
        return max(self.deadline - time.perf_counter(), ANSWER_GRACE)

    def remember(
        self, entry: LedgerEntry, read_only: bool, key: str | None = None, mark: str | None = None
    ) -> None:
        """Record a call's outcome; a call that may have changed state invalidates everything
        seen (`read_only`: it did not, e.g. it failed and the study's facts are unchanged).
        `mark`: the study's facts now, kept to tell later whether the study is still the same."""
        if not read_only:
            self.seen.clear()
        text = entry.result if entry.status == "success" else entry.error or entry.status
        key = key or call_signature(entry.name, entry.args)
        changed = not read_only and entry.status == "success"
        self.seen[key] = Seen(
            entry.status, text, entry.round, changed=changed, mark=mark, fix=entry.fix
        )
