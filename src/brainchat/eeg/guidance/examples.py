"""The worked examples nearest a request: BM25 (bm25s) over words, CJK character pairs and the
steps and choices the text names.

Latin-script text is split into lower-cased words, and a joined word ("csp+lda", "mne-python")
into its parts as well; Han, kana and Hangul runs, which have no spaces, into their characters
and character pairs, so "滤波" in a request meets "滤波" in an example. Each step or choice the
text names by one of the field's terms (terms.py: 分段 and "epochs" are `epoch`, 跨会话 and
"across sessions" are `cross_session`) adds a token of its own: two texts that ask for the same
protocol meet on it, and words they share by chance ("机会水平" beside "跨会话") no longer
outweigh it. The index is built once per process (a few dozen examples, milliseconds).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from brainchat.domain import Example
from brainchat.eeg.guidance.terms import choices, named
from brainchat.eeg.guidance.worked import EXAMPLES, calls_text, record_of

WORD = re.compile(r"[a-z0-9][a-z0-9+_-]*|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
JOINS = re.compile(r"[+_-]")


def tokens(text: str) -> list[str]:
    """Words (a joined word's parts too), the characters and character pairs of CJK runs, and
    one token per step or choice the text names (written with a mark no word has)."""
    out: list[str] = []
    for word in WORD.findall(text.lower()):
        if CJK.match(word):
            out += list(word) + [word[i : i + 2] for i in range(len(word) - 1)]
        elif len(word) > 1 or word.isdigit():
            out.append(word)
            parts = [p for p in JOINS.split(word) if len(p) > 1 or p.isdigit()]
            out += parts if len(parts) > 1 else []
    return out + [f"§{name}" for name in named(text)]


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


@functools.cache
def _choices() -> list[set[str]]:
    return [choices(request) for request, _ in EXAMPLES]


def nearest(request: str, k: int) -> list[Example]:
    """The `k` examples most like `request`, best first (none that shares no word with it, none
    far below the best). Those that name the same choices as the request (a cross-session
    protocol) come first: the choice decides the call's arguments, and an example with another
    one would teach the wrong value however many other words it shares; so for a question for
    the web."""
    query = tokens(request)
    if not query or k < 1:
        return []
    scores = _index().get_scores(query)
    asked = choices(request)
    shared = [len(asked & theirs) for theirs in _choices()]
    ranked = sorted(range(len(EXAMPLES)), key=lambda i: (-shared[i], -scores[i]))[:k]
    found = []
    for i in ranked:
        if scores[i] <= 0 or scores[i] < RELATIVE * scores[ranked[0]]:
            break
        request_i, calls = EXAMPLES[i]
        found.append(Example(request_i, calls_text(calls), record_of(calls)))
    return found
