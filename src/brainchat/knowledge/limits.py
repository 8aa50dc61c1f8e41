"""The knowledge store's refusal, and the bounds read from the environment."""

from __future__ import annotations

import os


class KnowledgeError(Exception):
    """A document refused, or an action on the knowledge store refused; the message says why
    and what to do."""


def env_int(name: str, default: int) -> int:
    """A positive whole number from the environment; a bad value is a KnowledgeError naming it."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise KnowledgeError(f"{name}={raw[:20]!r} is not valid; allowed: a whole number above 0")
    return value


def max_chars() -> int:
    return env_int("BRAINCHAT_KNOWLEDGE_MAX_CHARS", 20_000_000)
