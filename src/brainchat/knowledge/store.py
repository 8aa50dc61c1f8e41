"""The storage interface every backend implements (SQLite by default, Postgres with pgvector).

Collections are named "<owner>/<name>"; which collections a user may read is decided by the
service (their own, and those shared with them), and every read below takes that list, so a
backend never widens it. Methods are synchronous (callers run them in a worker thread)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from brainchat.knowledge.model import Chunk, Document, Passage


class KnowledgeStore(Protocol):
    # documents
    def add_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a document and its chunks at once (replacing a document with the same id)."""

    def remove_document(self, doc_id: str) -> bool:
        """Delete a document and every chunk and vector of it; False if there was none."""

    def documents(self, collections: Sequence[str]) -> list[Document]:
        """The documents of these collections, newest first."""

    def find_sha(self, collection: str, sha256: str) -> Document | None:
        """The document of this collection with these bytes (re-indexing only what changed)."""

    # sharing
    def share(self, collection: str, users: Sequence[str]) -> None:
        """Let these users read the collection (replaces the list)."""

    def readers(self, collection: str) -> list[str]: ...

    def shared_with(self, user: str) -> list[str]:
        """The collections shared with this user."""

    # retrieval
    def text_search(self, query: str, collections: Sequence[str], k: int) -> list[Passage]:
        """BM25-ranked passages (FTS5's bm25, Postgres full-text, or bm25s), best first."""

    def chunks(self, collections: Sequence[str]) -> list[tuple[int, Chunk]]:
        """(chunk row id, chunk) of these collections (for an in-memory index such as bm25s)."""

    def set_vectors(self, rows: Sequence[tuple[int, list[float]]], model: str) -> None:
        """Store chunk embeddings (row id, vector) made by `model`."""

    def vector_search(
        self, vector: list[float], model: str, collections: Sequence[str], k: int
    ) -> list[Passage]:
        """Nearest passages by cosine similarity among vectors made by `model`, best first."""

    def missing_vectors(self, model: str, collections: Sequence[str]) -> list[tuple[int, str]]:
        """(row id, text) of the chunks with no vector from `model` yet."""
