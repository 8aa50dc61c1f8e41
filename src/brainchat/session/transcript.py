"""What the models see of a conversation: its answered turns, and where each user message began."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from brainchat.chat import record_turn


@dataclass
class Turn:
    """Where a user message's turn began in the history, so an edit can rewind to it."""

    message_id: str
    history_len: int
    changed_study: bool = False


@dataclass
class Transcript:
    """The model history (question, answer pairs) and the turns of the user messages with an id."""

    history: list[BaseMessage] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)  # one per user message with an id, in order

    def begin(self, message_id: str) -> tuple[Turn, list[Turn]]:
        """Start the turn of `message_id`; one seen before is an edited message, and the history
        rewinds to before it first. Returns the new turn and the turns the rewind removed."""
        removed = self.rewind(message_id)
        turn = Turn(message_id, len(self.history))
        self.turns.append(turn)
        return turn, removed

    def rewind(self, message_id: str) -> list[Turn]:
        """Drop the turn of `message_id` and every later one from the history; return them."""
        for i, turn in enumerate(self.turns):
            if turn.message_id == message_id:
                removed = self.turns[i:]
                del self.history[turn.history_len :]
                del self.turns[i:]
                return removed
        return []

    def record(self, question: str, answer: str) -> None:
        """An answered turn joins the history."""
        record_turn(self.history, question, answer)

    def replace(self, history: list[BaseMessage], turns: list[Turn]) -> None:
        """Take a history and its turns as they are (a restored snapshot)."""
        self.history = list(history)
        self.turns = [Turn(t.message_id, t.history_len, t.changed_study) for t in turns]
