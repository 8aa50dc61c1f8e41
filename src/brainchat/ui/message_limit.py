"""The size limit on one chat message, and the notice a user gets past it.

Chainlit's socket (engine.io) drops a packet over 1,000,000 characters/bytes without a word.
200,000 characters keeps a message well under that even with JSON escaping (quotes, newlines:
2 characters each) or 3-byte UTF-8 text, and is still ~50,000 tokens for the model.
`public/brainchat.js` stops a longer paste or send in the browser with the same limit; this
check is for a message that gets past the browser.
"""

from __future__ import annotations

from brainchat import i18n

MAX_MESSAGE_CHARS = 200_000


def _megabytes(text: str) -> str:
    size = len(text.encode("utf-8", "replace"))
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} KB"


def too_long_notice(text: str) -> str | None:
    """A notice naming the size and the limit when `text` is over it, else None."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return None
    return i18n.t(
        "session.too_long",
        size=_megabytes(text),
        chars=f"{len(text):,}",
        limit=f"{MAX_MESSAGE_CHARS:,}",
    )
