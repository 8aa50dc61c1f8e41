"""Sections into passages of about 800-1,200 characters, cut at paragraph, then sentence, then
(for text with no sentence marks, such as a long Chinese run without punctuation) character
boundaries. A passage never spans two sections, so never two pages: it cites one page."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from brainchat.knowledge.model import Chunk, Section

TARGET = 800  # a passage closes once it holds this many characters...
LIMIT = 1200  # ...and never grows past this many

# after a sentence mark: Latin ones need the space that follows; CJK ones end a sentence alone
SENTENCE = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])\s*")
PARAGRAPH = re.compile(r"\n\s*\n")


def pieces(text: str, limit: int = LIMIT) -> Iterator[str]:
    """The text's paragraphs, each cut into sentences (and hard cuts) no longer than `limit`."""
    for paragraph in PARAGRAPH.split(text):
        paragraph = " ".join(paragraph.split()) if is_spaced(paragraph) else paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= limit:
            yield paragraph
            continue
        for sentence in SENTENCE.split(paragraph):
            sentence = sentence.strip()
            while len(sentence) > limit:
                cut = soft_cut(sentence, limit)
                yield sentence[:cut].strip()
                sentence = sentence[cut:].strip()
            if sentence:
                yield sentence


def is_spaced(text: str) -> bool:
    """Whether the text separates words with spaces (line breaks inside it can be joined)."""
    return text.count(" ") * 20 >= len(text)


def soft_cut(text: str, limit: int) -> int:
    """Where to cut an over-long run: the last space or comma before `limit`, else at it."""
    window = text[:limit]
    at = max(window.rfind(" "), window.rfind("，"), window.rfind(","), window.rfind("、"))
    return at + 1 if at > limit // 2 else limit


def joiner(a: str, b: str) -> str:
    """Between two pieces: a space, or nothing between two CJK characters."""
    return "" if a and b and is_cjk(a[-1]) and is_cjk(b[0]) else " "


def is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef"


def section_passages(text: str) -> list[str]:
    """One section's passages: pieces gathered until TARGET, never past LIMIT."""
    out: list[str] = []
    current = ""
    for piece in pieces(text):
        if current and len(current) + 1 + len(piece) > LIMIT:
            out.append(current)
            current = ""
        current = f"{current}{joiner(current, piece)}{piece}" if current else piece
        if len(current) >= TARGET:
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return out


def chunk_sections(doc_id: str, sections: Sequence[Section]) -> list[Chunk]:
    """The document's passages in order, each with its section's page and heading."""
    chunks: list[Chunk] = []
    for section in sections:
        for text in section_passages(section.text):
            chunks.append(Chunk(doc_id, len(chunks), text, section.page, section.heading))
    return chunks
