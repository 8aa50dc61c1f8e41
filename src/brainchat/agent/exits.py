"""How a node ends the tool loop or the run: one typed value, said once, routed by the state.

Every early end (a limit, a full window, a failed model, a failed plan, a failed answer) is an
`Exit`: the notice the user reads, the Evaluation that closes the loop when there is one, and the
stop reason the routers and the answer request read. `reason="error"` means nothing can be
answered: the run finishes with `message` as its error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from brainchat.agent.context import AgentState
from brainchat.events import Evaluation, Notice, StopReason, emit

NoticeKind = Literal[
    "error", "timeout", "context_full", "plan_failed", "loop", "round_limit", "iteration_limit"
]
KIND: dict[StopReason, NoticeKind] = {  # a stop's notice is of its own kind, never a timeout's
    "timeout": "timeout",
    "context_full": "context_full",
    "plan_failed": "plan_failed",
    "loop": "loop",
    "round_limit": "round_limit",
    "iteration_limit": "iteration_limit",
}


@dataclass(frozen=True)
class Exit:
    """One early end: why (`reason`), what the user reads, and the loop's closing verdict."""

    reason: StopReason
    message: str
    hint: str = ""
    kind: NoticeKind | None = None  # the notice's kind: the reason's own (KIND), else "error"
    why: str | None = None  # the Evaluation that closes the tool loop, when it says why

    @property
    def error(self) -> str | None:
        """The run's error: only when nothing can be answered."""
        return self.message if self.reason == "error" else None

    def say(self, round_: int = 0) -> None:
        """The Evaluation that closes the loop (when there is one), then the notice."""
        if self.why is not None:
            emit(Evaluation(verdict="answer", reason=self.why, round=round_))
        kind = self.kind or KIND.get(self.reason, "error")
        emit(Notice(kind=kind, message=self.message, hint=self.hint))

    def take(self, round_: int) -> AgentState:
        """The tool loop ends here: say it, and the state it leaves (routed to the answer, or
        to the end when nothing can be answered)."""
        self.say(round_)
        return {
            "round": round_,
            "stop_reason": self.reason,
            "error": self.error,
            "last_verdict": "answer",
        }

    def ended(self, answer: str) -> AgentState:
        """The answer ends here: say it, and keep what arrived."""
        self.say()
        return {"answer": answer, "stop_reason": self.reason, "error": self.error}
