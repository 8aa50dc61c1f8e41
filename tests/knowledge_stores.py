"""The knowledge stores the behaviour tests run against: Postgres (embedded, with pgvector and
without it) and, once it exists, SQLite. Each test gets an empty store."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from brainchat.knowledge.model import Chunk, Document

_names = itertools.count()
BACKENDS = ["postgres", "postgres-float4"]
try:  # another part of #41: tested here as soon as it lands
    from brainchat.knowledge import sqlite_store

    BACKENDS.append("sqlite")
except ImportError:  # pragma: no cover - until then
    sqlite_store = None  # type: ignore[assignment]


def open_store(kind: str, embedded_pg: Any, tmp_path: Path) -> Iterator[Any]:
    if kind == "sqlite":
        store = sqlite_store.SqliteStore(tmp_path / "knowledge.db")  # type: ignore[union-attr]
        yield store
        getattr(store, "close", lambda: None)()
        return
    from brainchat.knowledge.pg_store import PgStore

    url = embedded_pg.new_database(f"kn_{next(_names)}")
    with PgStore(url, pgvector=kind == "postgres") as store:
        assert store.pgvector == (kind == "postgres")
        yield store


def document(
    doc_id: str, collection: str, *texts: str, added: float = 1.0
) -> tuple[Document, list[Chunk]]:
    """A document of these chunk texts (page i+1 each)."""
    owner = collection.split("/")[0]
    doc = Document(doc_id, collection, owner, f"{doc_id}.pdf", f"Title {doc_id}", len(texts), 100,
                   f"sha-{doc_id}", added, len(texts))  # fmt: skip
    return doc, [Chunk(doc_id, i, t, i + 1, f"H{i}") for i, t in enumerate(texts)]
