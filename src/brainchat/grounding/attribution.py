"""Citations for an answer that used the run's web sources and cited none.

An answer model, small ones most often, may copy what a source says ("MNE-Python reads EDF, BDF,
FIF ...") and leave out its number. The reader then cannot tell which sentence came from where.
Each sentence whose own words come from one source, clearly more than from any other, gets that
source's number after it, and the user is told that brainchat, not the model, placed them.

Words are read the same way in every language: Latin letters and digits as words, Chinese,
Japanese and Korean text as pairs of characters. Words the request itself uses show nothing
about a source, and neither do words that every source has.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

CITE = re.compile(r"\[(\d{1,3})\]")
WORD = re.compile(r"[0-9A-Za-zÀ-ɏ]+(?:[.,-][0-9A-Za-zÀ-ɏ]+)*")
CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
MIN_SHARED = 3  # distinctive words a sentence must share with a source
END = re.compile(r"[\s.!?。！？;；:：]*$")


def words(text: str) -> set[str]:
    """The words of `text`: Latin words of three letters or more (or with a digit), lowercased,
    and every pair of neighbouring CJK characters."""
    out = {w.lower() for w in WORD.findall(text) if len(w) >= 3 or any(c.isdigit() for c in w)}
    for run in CJK_RUN.findall(text):
        out |= {run[i : i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
    return out


def source_of(sentence: str, sources: Sequence[dict[str, Any]], asked: set[str]) -> int | None:
    """The number of the one source whose words the sentence uses, if one clearly does."""
    texts = {int(s["n"]): words(f"{s.get('title', '')} {s.get('snippet', '')}") for s in sources}
    common = set.intersection(*texts.values()) if len(texts) > 1 else set()
    own = words(sentence) - asked - common
    shared = sorted(((len(own & t), n) for n, t in texts.items()), reverse=True)
    if not shared or shared[0][0] < MIN_SHARED:
        return None
    if len(shared) > 1 and shared[1][0] * 2 > shared[0][0]:
        return None  # two sources share as much: which one the sentence used is not clear
    return shared[0][1]


def attribute(
    text: str, sentences: Sequence[str], sources: Sequence[dict[str, Any]], question: str
) -> tuple[str, list[int]]:
    """`text` with a source's number after each sentence drawn from it, when the answer cites
    no source at all (an answer that cites is left as its model wrote it); and the numbers
    placed, in order."""
    if not sources or CITE.search(text):
        return text, []
    asked, placed, cursor = words(question), [], 0
    for sentence in sentences:
        n = source_of(sentence, sources, asked)
        at = text.find(sentence, cursor)
        if n is None or at < 0:
            continue
        body = END.sub("", sentence)
        end = at + len(body)
        text = f"{text[:end]} [{n}]{text[end:]}"
        cursor = end + len(f" [{n}]")
        placed.append(n)
    return text, placed
