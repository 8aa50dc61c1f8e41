"""The types every part of knowledge/ shares (the contract between parsing, storage, retrieval,
the tool, the UI and the CLI)."""

from __future__ import annotations

from dataclasses import dataclass, field

PERSONAL = "personal"  # every user's own collection's name


@dataclass(frozen=True)
class Section:
    """A run of a document's text on one page under one heading (page 1-based; 0: no pages)."""

    text: str
    page: int = 0
    heading: str = ""


@dataclass(frozen=True)
class Parsed:
    """A parsed document: its title, its sections in order, its page count (0: no pages) and
    notes a user should read (a scanned PDF with no text, pages left out by a bound)."""

    title: str
    sections: list[Section]
    pages: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Chunk:
    """One passage as indexed: its document, its place in it, page and heading."""

    doc_id: str
    ordinal: int
    text: str
    page: int = 0
    heading: str = ""


@dataclass(frozen=True)
class Document:
    """A document in a collection, as listed (title, pages, size, when added, by whom)."""

    id: str
    collection: str  # "<owner>/<name>"; a user's own is "<user>/personal"
    owner: str
    name: str  # the file's name as uploaded
    title: str
    pages: int
    size: int  # bytes of the original file
    sha256: str  # of the original file: the same bytes again are not re-indexed
    added: float  # unix time
    chunks: int = 0


@dataclass(frozen=True)
class Passage:
    """A retrieved passage: the chunk, its document's title and collection, and its score."""

    chunk: Chunk
    title: str
    collection: str
    score: float
