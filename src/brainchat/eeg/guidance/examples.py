"""The worked examples nearest a request: BM25 (bm25s) over words and CJK character pairs.

Latin-script text is split into lower-cased words; Han, kana and Hangul runs, which have no
spaces, into their characters and character pairs, so "滤波" in a request meets "滤波" in an
example. The index is built once per process (a few dozen examples, milliseconds).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from brainchat.domain import Example
from brainchat.eeg.guidance.worked import EXAMPLES, calls_text, record_of

WORD = re.compile(r"[a-z0-9][a-z0-9+_-]*|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def tokens(text: str) -> list[str]:
    """Words, and the characters and character pairs of CJK runs."""
    out: list[str] = []
    for word in WORD.findall(text.lower()):
        if CJK.match(word):
            out += list(word) + [word[i : i + 2] for i in range(len(word) - 1)]
        elif len(word) > 1 or word.isdigit():
            out.append(word)
    return out


@functools.cache
def _index() -> Any:
    import bm25s

    index = bm25s.BM25()
    index.index([tokens(request) for request, _ in EXAMPLES], show_progress=False)
    return index


# an example scoring under this share of the best one is more unlike the request than like it
# (it shares a common word, "does", "data"): a small model copies what it is shown, so it is
# left out
RELATIVE = 0.6


def nearest(request: str, k: int) -> list[Example]:
    """The `k` examples most like `request`, best first (none that shares no word with it, none
    far below the best)."""
    query = tokens(request)
    if not query or k < 1:
        return []
    scores = _index().get_scores(query)
    ranked = sorted(range(len(EXAMPLES)), key=lambda i: -scores[i])[:k]
    found = []
    for i in ranked:
        if scores[i] <= 0 or scores[i] < RELATIVE * scores[ranked[0]]:
            break
        request_i, calls = EXAMPLES[i]
        found.append(Example(request_i, calls_text(calls), record_of(calls)))
    return found
