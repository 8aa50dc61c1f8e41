"""What a stored thread gives back to the models: the answered turns, and the usage so far.

An answered turn is a user message plus the assistant message that carries a `brainchat_turn`
mark in its metadata (written when the turn was recorded in the live history). Unanswered
questions (a stop, an error, a process killed mid-turn) have no mark and are left out, as the
live history leaves them out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

TURN_MARK = "brainchat_turn"


def turn_mark(question_id: str, answer: str, shown: str) -> dict[str, Any]:
    """The mark for an answer message: its length when the shown text starts with it (the
    footer follows), else the answer itself."""
    if shown.startswith(answer):
        return {"question_id": question_id, "chars": len(answer)}
    return {"question_id": question_id, "answer": answer}


def answered_turns(steps: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(question id, question, answer) of every answered turn, oldest first."""
    questions = {s["id"]: s.get("output") or "" for s in steps if s.get("type") == "user_message"}
    found: dict[str, tuple[str, str, str]] = {}
    for step in steps:
        mark = (step.get("metadata") or {}).get(TURN_MARK)
        if step.get("type") != "assistant_message" or not isinstance(mark, dict):
            continue
        qid = str(mark.get("question_id"))
        if qid not in questions:
            continue  # its question was deleted (an edit removed it)
        answer = mark.get("answer")
        if answer is None:
            answer = (step.get("output") or "")[: int(mark.get("chars") or 0)]
        found.pop(qid, None)  # a later answer to the same question replaces the earlier one
        found[qid] = (qid, questions[qid], answer)
    return list(found.values())


def rebuild(
    steps: list[dict[str, Any]], budget: int
) -> tuple[list[BaseMessage], list[tuple[str, int]]]:
    """The model history (latest turns within `budget` tokens) and (question id, history length)
    of each kept turn, so an edit after the resume still rewinds to the right place."""
    from brainchat.usage import count_message_tokens

    kept: list[tuple[str, str, str]] = []
    used = 0
    for turn in reversed(answered_turns(steps)):
        cost = count_message_tokens([HumanMessage(turn[1]), AIMessage(turn[2])])
        if kept and used + cost > budget:
            break
        kept.append(turn)
        used += cost
    history: list[BaseMessage] = []
    turns: list[tuple[str, int]] = []
    for qid, question, answer in reversed(kept):
        turns.append((qid, len(history)))
        history += [HumanMessage(question), AIMessage(answer)]
    return history, turns


@dataclass
class ThreadUsage:
    """Token, call and cost totals of every turn of a thread (kept in its metadata)."""

    turns: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    estimated: bool = False

    def add(self, rows: list[Any]) -> None:
        """Add one turn's per-role stats rows (RoleStats)."""
        self.turns += 1
        for r in rows:
            self.calls += r.calls
            self.input_tokens += r.input_tokens
            self.output_tokens += r.output_tokens
            self.estimated = self.estimated or r.estimated
            if r.cost is not None:
                self.cost = (self.cost or 0.0) + r.cost

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> ThreadUsage:
        if not isinstance(data, dict):
            return cls()
        try:
            return cls(
                int(data.get("turns", 0)),
                int(data.get("calls", 0)),
                int(data.get("input_tokens", 0)),
                int(data.get("output_tokens", 0)),
                None if data.get("cost") is None else float(data["cost"]),
                bool(data.get("estimated")),
            )
        except (TypeError, ValueError):
            return cls()

    def text(self) -> str:
        est = " (some estimated)" if self.estimated else ""
        cost = f" · ${self.cost:.4f}" if self.cost is not None else ""
        return (
            f"{self.turns} turn(s) · {self.calls} model call(s) · {self.input_tokens:,} in / "
            f"{self.output_tokens:,} out tokens{est}{cost}"
        )
