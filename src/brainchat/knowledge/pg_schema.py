"""PgStore's tables, its full-text values, and its cosine ranking without pgvector."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from brainchat.knowledge.model import Chunk, Passage
from brainchat.knowledge.retrieve import tokens

log = logging.getLogger(__name__)

MAX_POSITION = 16383  # Postgres' largest tsvector position
PASSAGE = "c.doc_id, c.ordinal, c.text, c.page, c.heading, d.title, d.collection"

TABLES = """
CREATE TABLE IF NOT EXISTS knowledge_documents (
    id text PRIMARY KEY, collection text NOT NULL, owner text NOT NULL, name text NOT NULL,
    title text NOT NULL, pages integer NOT NULL, size bigint NOT NULL, sha256 text NOT NULL,
    added double precision NOT NULL, chunks integer NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS knowledge_documents_collection ON knowledge_documents (collection);
CREATE TABLE IF NOT EXISTS knowledge_chunks (
    row_id bigserial PRIMARY KEY,
    doc_id text NOT NULL REFERENCES knowledge_documents (id) ON DELETE CASCADE,
    ordinal integer NOT NULL, text text NOT NULL, page integer NOT NULL, heading text NOT NULL,
    tsv tsvector NOT NULL);
CREATE INDEX IF NOT EXISTS knowledge_chunks_doc ON knowledge_chunks (doc_id);
CREATE INDEX IF NOT EXISTS knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv);
CREATE TABLE IF NOT EXISTS knowledge_readers (
    collection text NOT NULL, reader text NOT NULL, PRIMARY KEY (collection, reader));
CREATE INDEX IF NOT EXISTS knowledge_readers_reader ON knowledge_readers (reader);
"""

VECTORS = """
CREATE TABLE IF NOT EXISTS knowledge_vectors (
    row_id bigint NOT NULL REFERENCES knowledge_chunks (row_id) ON DELETE CASCADE,
    model text NOT NULL, embedding {type} NOT NULL, PRIMARY KEY (row_id, model));
"""


async def create_schema(conn: Any, pgvector: bool | None) -> bool:
    """Create the tables (once); return whether vectors are pgvector's."""
    import asyncpg

    await conn.execute(TABLES)
    existing = await conn.fetchval(
        "SELECT udt_name FROM information_schema.columns "
        "WHERE table_name = 'knowledge_vectors' AND column_name = 'embedding'"
    )
    if existing is not None:  # made earlier: keep its type
        return bool(existing == "vector")
    vector = False
    if pgvector is not False:
        try:
            async with conn.transaction():
                await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            vector = True
        except asyncpg.PostgresError as exc:
            log.info("pgvector unavailable (%s)", type(exc).__name__)
    await conn.execute(VECTORS.format(type="vector" if vector else "float4[]"))
    return vector


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector(heading: str, text: str) -> str:
    """A chunk's tsvector literal: its retrieval tokens at their positions."""
    words = tokens(heading + "\n" + text)
    return " ".join(f"{_lexeme(w)}:{min(i, MAX_POSITION)}" for i, w in enumerate(words, 1))


def tsquery(query: str) -> str:
    """A query's tsquery literal: any of its tokens ('' when it has none)."""
    return " | ".join(_lexeme(w) for w in dict.fromkeys(tokens(query)))


def python_cosine(
    store: Any, vector: list[float], model: str, collections: Sequence[str], k: int
) -> list[Passage]:
    """Nearest passages by cosine similarity, computed here (no pgvector on the server).
    `store` is the PgStore asking (not imported: it imports this module)."""
    import numpy as np

    sql = (
        "SELECT c.row_id, v.embedding FROM knowledge_chunks c JOIN knowledge_documents d "
        "ON d.id = c.doc_id JOIN knowledge_vectors v ON v.row_id = c.row_id AND v.model = $1 "
        "WHERE d.collection = ANY($2::text[]) AND cardinality(v.embedding) = $3"
    )
    rows = store._run(store._fetch(sql, model, list(collections), len(vector)))
    if not rows:
        return []
    matrix = np.array([r["embedding"] for r in rows], dtype=np.float32)
    query = np.asarray(vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
    scores = matrix @ query / np.where(norms == 0, 1.0, norms)
    best = np.argsort(-scores, kind="stable")[:k]
    ids = [int(rows[i]["row_id"]) for i in best]
    found = store._run(
        store._fetch(
            f"SELECT c.row_id, {PASSAGE} FROM knowledge_chunks c JOIN knowledge_documents d "
            "ON d.id = c.doc_id WHERE c.row_id = ANY($1::bigint[])",
            ids,
        )
    )
    by_id = {r["row_id"]: r for r in found}
    out = []
    for i, row_id in zip(best, ids, strict=True):
        r = by_id[row_id]
        chunk = Chunk(r["doc_id"], r["ordinal"], r["text"], r["page"], r["heading"])
        out.append(Passage(chunk, r["title"], r["collection"], float(scores[i])))
    return out
