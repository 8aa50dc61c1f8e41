"""The model history a stored thread gives back: answered turns only, latest first within the
context budget, the answer as the model wrote it (not the footer the page shows); and usage totals
that survive the thread's metadata."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from brainchat.events import RoleStats
from brainchat.store.history import TURN_MARK, ThreadUsage, rebuild, turn_mark
from brainchat.usage import count_message_tokens


def question(qid: str, text: str) -> dict[str, Any]:
    return {"id": qid, "type": "user_message", "output": text}


def answer(qid: str, text: str, footer: str = "\n\n---\n| Role | Model |") -> dict[str, Any]:
    shown = text + footer
    return {"id": "a-" + qid, "type": "assistant_message", "output": shown,
            "metadata": {TURN_MARK: turn_mark(qid, text, shown)}}  # fmt: skip


def thread(n: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for i in range(n):
        steps += [question(f"q{i}", f"Question {i}?"), answer(f"q{i}", f"Answer {i}.")]
    return steps


def test_answered_turns_come_back_in_order_without_the_footer() -> None:
    history, turns = rebuild(thread(3), budget=10_000)
    assert [m.content for m in history] == [
        "Question 0?", "Answer 0.", "Question 1?", "Answer 1.", "Question 2?", "Answer 2.",
    ]  # fmt: skip
    assert [type(m) for m in history[:2]] == [HumanMessage, AIMessage]
    assert turns == [("q0", 0), ("q1", 2), ("q2", 4)]


def test_an_unanswered_question_is_left_out() -> None:
    steps = thread(2)
    steps.insert(2, question("lost", "A question whose process was killed?"))
    steps.insert(3, {"id": "partial", "type": "assistant_message", "output": "half an ans"})
    history, _ = rebuild(steps, budget=10_000)
    assert "A question whose process was killed?" not in [m.content for m in history]
    assert len(history) == 4


def test_the_history_keeps_the_latest_turns_that_fit_the_budget() -> None:
    one_turn = count_message_tokens([HumanMessage("Question 9?"), AIMessage("Answer 9.")])
    history, turns = rebuild(thread(10), budget=3 * one_turn)
    assert [m.content for m in history][-1] == "Answer 9."
    assert [qid for qid, _ in turns] == ["q7", "q8", "q9"]
    alone, _ = rebuild(thread(10), budget=1)  # the last turn is kept even over the budget
    assert [m.content for m in alone] == ["Question 9?", "Answer 9."]


def test_an_answer_shown_differently_is_stored_whole_in_its_mark() -> None:
    mark = turn_mark("q0", "The answer [1].", "The answer [¹].\n\n---")
    steps = [question("q0", "Q?"), {"id": "a", "type": "assistant_message",
                                     "output": "The answer [¹].", "metadata": {TURN_MARK: mark}}]  # fmt: skip
    history, _ = rebuild(steps, budget=10_000)
    assert history[-1].content == "The answer [1]."


def test_usage_totals_round_trip_through_the_metadata() -> None:
    usage = ThreadUsage()
    usage.add([RoleStats(role="chat", model="m", calls=2, input_tokens=120, output_tokens=30,
                         cost=0.002, estimated=False)])  # fmt: skip
    usage.add([RoleStats(role="chat", model="m", calls=1, input_tokens=80, output_tokens=20,
                         cost=None, estimated=True)])  # fmt: skip
    back = ThreadUsage.from_dict(usage.to_dict())
    assert back == usage and back.turns == 2 and back.calls == 3 and back.input_tokens == 200
    assert back.text().startswith("2 turn(s) · 3 model call(s) · 200 in / 50 out tokens")
    assert ThreadUsage.from_dict({"turns": "x"}) == ThreadUsage()  # a damaged record reads as none
