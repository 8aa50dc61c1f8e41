"""The language an answer is written in: the user's.

The request's record names it when a guided model made one (any language, as the model reads
it). Otherwise the request's script says it where a script belongs to few languages (Han
characters: Chinese; kana: Japanese; Hangul: Korean; Cyrillic, Arabic, Greek, Hebrew, Thai,
Devanagari); a request in Latin letters is answered "in the language of the request", which a
model reads as well as brainchat could guess it.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Any

NAMES = {
    "zh": "Chinese",
    "zh-cn": "Simplified Chinese",
    "zh-hans": "Simplified Chinese",
    "zh-tw": "Traditional Chinese",
    "zh-hant": "Traditional Chinese",
    "zh-hk": "Traditional Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "ru": "Russian",
}
SCRIPTS = {  # the first word of a character's Unicode name -> the language(s) it writes
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "HANGUL": "Korean",
    "CJK": "Chinese",
    "CYRILLIC": "the language of the request (Cyrillic script)",
    "ARABIC": "the language of the request (Arabic script)",
    "GREEK": "Greek",
    "HEBREW": "Hebrew",
    "THAI": "Thai",
    "DEVANAGARI": "the language of the request (Devanagari script)",
}


def script_language(text: str) -> str | None:
    """The language the text's letters point to, when a script other than Latin leads."""
    counts: Counter[str] = Counter()
    for ch in text[:2000]:
        if ch.isalpha():
            word = unicodedata.name(ch, "").split(" ")[0]
            counts[word if word in SCRIPTS else "LATIN"] += 1
    if not counts:
        return None
    if counts["HIRAGANA"] + counts["KATAKANA"] > 0 and counts["CJK"]:
        return "Japanese"  # kanji with kana: Japanese
    others = [(c, s) for s, c in counts.items() if s != "LATIN"]
    if not others:
        return None
    n, script = max(others)
    # a technical request in Chinese holds Latin words (EEGNet, CSP, sub-01): a Han character
    # says about as much as a word, so it weighs as three letters; the script leads at a third
    weight = 3 if script in ("CJK", "HANGUL", "HIRAGANA", "KATAKANA") else 1
    return SCRIPTS[script] if n * weight * 2 >= counts["LATIN"] else None


def answer_language(question: str, record: Any = None) -> str:
    """The answer request's line on the language of the answer."""
    code = str(getattr(record, "language", "") or "").strip().lower()
    name = NAMES.get(code) or NAMES.get(code.split("-")[0]) if code else None
    name = name or script_language(question)
    if name is None:
        return "Write the answer in the language of the user's request."
    # a translated measure is another measure ("ROC AUC" written as 准确率, accuracy): the
    # results' own names for measures, tests and methods stay as written, like tool names
    return (
        f"Write the answer in {name}, the language of the user's request; keep tool names, file "
        "names, figures and the results' names of measures, tests and methods as they are written."
    )
