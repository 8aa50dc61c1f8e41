"""Scripted replies for the scripted OpenAI-compatible server, and how they become chunks.

A reply is one dataclass per behaviour: `Text`, `ToolCalls`, `Fault`, `Drop`, `Malformed`,
`Empty`. Calls written as text (models without native tool calls) are a `Text` whose content
`call_text` writes.
Every reply takes the keyword-only knobs `ttft`, `token_delay`, `usage`, `prompt_tokens` and
`completion_tokens`. Replies round-trip through plain dicts (`reply_to_dict` /
`reply_from_dict`), the format of script files and of the server's admin API::

    {"type": "text", "content": "Hello there", "reasoning": "User greets.", "token_delay": 0.05}
    {"type": "tool_calls", "calls": [{"name": "web_search", "args": {"query": "EEG"}}]}
    {"type": "fault", "status": 429}
    {"type": "drop", "after_chunks": 2}
    {"type": "malformed", "after_chunks": 1}
    {"type": "empty"}

Usage numbers are deterministic:

* prompt_tokens = sum over request messages of (ceil(len(text) / 4) + 3), where text is the
  message's string content (or its text parts joined); tool calls and tool schemas are not counted.
* completion_tokens = the number of streamed delta chunks that carry reasoning, content or tool-call
  arguments (the same number for a non-streamed reply). Reasoning chunks are also reported as
  `completion_tokens_details.reasoning_tokens`.
* total_tokens = prompt_tokens + completion_tokens. A reply's `prompt_tokens` /
  `completion_tokens` override the computed numbers.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(kw_only=True)
class Reply:
    """Knobs shared by every reply: latency, usage switch and usage overrides."""

    ttft: float = 0.0  # seconds before the first chunk (or the whole non-streamed body)
    token_delay: float = 0.0  # seconds between chunks
    usage: bool | None = None  # None: follow the request and the server's `send_usage`
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class Text(Reply):
    """A plain answer, streamed by words (or `chunk_size` characters); `reasoning` goes first."""

    content: str
    reasoning: str | None = None
    chunk_size: int | None = None


@dataclass
class Call:
    """One tool call; `args` is a dict (JSON-encoded for the wire) or a raw JSON string."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class ToolCalls(Reply):
    """Tool calls (indexes 0..n-1), each call's arguments split across at least two chunks."""

    calls: list[Call]
    content: str = ""
    reasoning: str | None = None


@dataclass
class Fault(Reply):
    """An HTTP error with an OpenAI-style error body; 429 also sends `Retry-After: 0`."""

    status: int = 500
    message: str = "scripted fault"


@dataclass
class Drop(Reply):
    """A stream cut after `after_chunks` content chunks: the connection closes without [DONE]."""

    after_chunks: int = 1
    content: str = "this answer is cut off before it ends"


@dataclass
class Malformed(Reply):
    """A `data: {not json` line after `after_chunks` content chunks; the rest then follows."""

    after_chunks: int = 1
    content: str = "this answer has a broken chunk in it"


@dataclass
class Empty(Reply):
    """A reply with nothing in it: a stream of only the finish chunk (and usage), or a
    non-streamed message with empty content (what a server that cannot stream tool calls sends)."""


def call_text(calls: list[Call], *, fenced: bool = True, prose: str = "") -> str:
    """Tool calls written as text, the way a model without native tool calls writes them:
    `prose`, then one ```json block per call ({"name", "arguments"}), or bare JSON objects."""
    items = [json.dumps({"name": c.name, "arguments": c.args}) for c in calls]
    body = "\n".join(f"```json\n{i}\n```" if fenced else i for i in items)
    return f"{prose}\n{body}" if prose else body


REPLY_TYPES: dict[str, type[Reply]] = {
    "text": Text,
    "tool_calls": ToolCalls,
    "fault": Fault,
    "drop": Drop,
    "malformed": Malformed,
    "empty": Empty,
}


def reply_to_dict(reply: Reply) -> dict[str, Any]:
    """The dict form of a reply: its fields plus `"type"`."""
    name = next(k for k, cls in REPLY_TYPES.items() if type(reply) is cls)
    return {"type": name, **dataclasses.asdict(reply)}


def reply_from_dict(data: dict[str, Any]) -> Reply:
    """Build a reply from its dict form; a bad type or field raises ValueError naming it."""
    data = dict(data)
    kind = data.pop("type", None)
    cls = REPLY_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"reply type {kind!r} is not one of {sorted(REPLY_TYPES)}")
    allowed = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"{kind} reply: unknown field(s) {unknown}; allowed: {sorted(allowed)}")
    try:
        if cls is ToolCalls:
            data["calls"] = [c if isinstance(c, Call) else Call(**c) for c in data.get("calls", [])]
        return cls(**data)
    except TypeError as exc:
        raise ValueError(f"{kind} reply: {exc}") from None


def split_words(text: str) -> list[str]:
    """Split text into word chunks (each keeps its trailing whitespace); joins back to text."""
    return [p for p in re.split(r"(?<=\s)(?=\S)", text) if p] or [text]


def split_size(text: str, size: int) -> list[str]:
    """Split text into chunks of `size` characters."""
    return [text[i : i + size] for i in range(0, len(text), max(1, size))] or [text]


def split_args(arguments: str) -> list[str]:
    """Split a JSON arguments string into at least two pieces (when it has two characters)."""
    return split_size(arguments, max(1, min(16, len(arguments) // 2)))


def call_arguments(call: Call) -> str:
    """The JSON arguments string sent on the wire."""
    return call.args if isinstance(call.args, str) else json.dumps(call.args)


def message_text(message: dict[str, Any]) -> str:
    """The text of a request message: its string content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def prompt_tokens_for(messages: list[dict[str, Any]]) -> int:
    """Deterministic prompt token count: ceil(len(text) / 4) + 3 per message."""
    return sum(math.ceil(len(message_text(m)) / 4) + 3 for m in messages)


def content_deltas(reply: Reply, id_prefix: str = "call") -> list[dict[str, Any]]:
    """The delta payloads a reply streams before its finish chunk (none for a Fault).

    A call without an `id` gets `f"{id_prefix}_{index}"`.
    """
    deltas: list[dict[str, Any]] = []
    reasoning = getattr(reply, "reasoning", None)
    if reasoning:
        deltas += [{"reasoning_content": p} for p in split_words(reasoning)]
    content = getattr(reply, "content", "")
    if isinstance(reply, Text) and reply.chunk_size:
        deltas += [{"content": p} for p in split_size(content, reply.chunk_size)]
    elif content or isinstance(reply, Text):
        deltas += [{"content": p} for p in split_words(content)]
    if isinstance(reply, ToolCalls):
        for index, call in enumerate(reply.calls):
            pieces = split_args(call_arguments(call))
            head = {"index": index, "id": call.id or f"{id_prefix}_{index}", "type": "function"}
            deltas.append(
                {"tool_calls": [{**head, "function": {"name": call.name, "arguments": pieces[0]}}]}
            )
            deltas += [
                {"tool_calls": [{"index": index, "function": {"arguments": p}}]} for p in pieces[1:]
            ]
    if deltas:
        deltas[0] = {"role": "assistant", **deltas[0]}
    return deltas


def usage_for(
    reply: Reply, messages: list[dict[str, Any]], deltas: list[dict[str, Any]]
) -> dict[str, Any]:
    """The usage object reported for a reply (see the module docstring for the formula)."""
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_tokens_for(messages)
    completion = reply.completion_tokens if reply.completion_tokens is not None else len(deltas)
    reasoning = sum(1 for d in deltas if "reasoning_content" in d)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


def full_message(reply: Reply, id_prefix: str = "call") -> dict[str, Any]:
    """The assistant message of a non-streamed response."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": getattr(reply, "content", "") or None,
    }
    if getattr(reply, "reasoning", None):
        message["reasoning_content"] = reply.reasoning  # type: ignore[attr-defined]
    if isinstance(reply, ToolCalls):
        message["tool_calls"] = [
            {
                "id": c.id or f"{id_prefix}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": call_arguments(c)},
            }
            for i, c in enumerate(reply.calls)
        ]
    elif message["content"] is None:
        message["content"] = ""
    return message


def describe(reply: Reply) -> str:
    """A short name for a reply in failure messages: its type and the start of what it says."""
    if isinstance(reply, ToolCalls):
        return "ToolCalls(" + ", ".join(c.name for c in reply.calls) + ")"
    if isinstance(reply, Text):
        return f"Text({reply.content[:60]!r})"
    return type(reply).__name__


def describe_message(messages: list[dict[str, Any]]) -> str:
    """The last message of a request, shortened (role and the start of its text)."""
    if not messages:
        return "(none)"
    last = messages[-1]
    return f"{last.get('role')}: {message_text(last)[:80]!r}"
