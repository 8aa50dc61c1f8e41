"""The title request fits the title model's window whatever the question's script."""

from __future__ import annotations

from langchain_core.messages import SystemMessage

from brainchat.settings import ModelSpec
from brainchat.ui.titles import TITLE_INPUT, TITLE_REPLY, title_messages
from brainchat.usage import count_message_tokens, count_tokens

SYSTEM = SystemMessage("Write a title of at most six words for this question.")


def test_a_cjk_question_is_cut_by_tokens_to_fit_a_small_window() -> None:
    # 2,000 characters of Chinese are ~6,000 tokens: a cut by characters overflowed the window
    spec = ModelSpec(model="m", context_window=600)
    question = "脑电图的阿尔法节律是什么" * 200
    messages = title_messages(spec, SYSTEM, question)
    assert count_message_tokens(messages) + TITLE_REPLY <= 600
    head = str(messages[1].content)
    assert head and question.startswith(head)


def test_a_long_question_keeps_its_head_within_the_title_input() -> None:
    spec = ModelSpec(model="m", context_window=16000)
    question = "What is the mu rhythm? " + "🧠 " * 3000
    head = str(title_messages(spec, SYSTEM, question)[1].content)
    assert head.startswith("What is the mu rhythm?") and count_tokens(head) <= TITLE_INPUT
    assert str(title_messages(spec, SYSTEM, "short")[1].content) == "short"
