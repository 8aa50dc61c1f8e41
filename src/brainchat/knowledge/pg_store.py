"""KnowledgeStore on Postgres (DATABASE_URL=postgresql://...): full-text search over a tsvector
of the retrieval tokens (words, and CJK characters and character pairs: Postgres' own parser
does not split Chinese), and pgvector's cosine distance when the `vector` extension can be
created; without it vectors are float4[] and ranked in Python (a log line says so).

asyncpg is the project's Postgres driver and is async only, while the store's methods are
synchronous (callers run them in a worker thread): the store runs its own event loop in a
thread and each method waits on it."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from brainchat.knowledge.model import Chunk, Document, Passage
from brainchat.knowledge.pg_schema import PASSAGE, create_schema, tsquery, tsvector
from brainchat.redact import mask, mask_url

log = logging.getLogger(__name__)
T = TypeVar("T")
CONNECT_TIMEOUT = 10.0  # seconds to connect
QUERY_TIMEOUT = 60.0  # seconds a statement may take: a stuck server fails, never hangs


class PgStore:
    """The knowledge store in a Postgres database; `close()` when done."""

    def __init__(self, url: str, *, pgvector: bool | None = None) -> None:
        """`pgvector`: None uses the extension when it can be created; False never does."""
        self.url = re.sub(r"^postgres(?:ql)?(?:\+\w+)?://", "postgresql://", url)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="knowledge-postgres", daemon=True
        )
        self._thread.start()
        try:
            self._pool, self.pgvector = self._run(self._open(pgvector))
        except Exception as exc:
            self._stop_loop()
            where = mask_url(self.url, drop_query=True)
            raise ConnectionError(
                f"knowledge store: cannot use Postgres at {where} ({type(exc).__name__}: "
                f"{mask(str(exc))}); check DATABASE_URL and that the server is running"
            ) from None

    async def _open(self, pgvector: bool | None) -> tuple[Any, bool]:
        import asyncpg

        pool = await asyncpg.create_pool(
            self.url, min_size=1, max_size=4, timeout=CONNECT_TIMEOUT, command_timeout=QUERY_TIMEOUT
        )
        async with pool.acquire() as conn:
            vector = await create_schema(conn, pgvector)
        if not vector:
            log.info(
                "knowledge on %s: no pgvector extension; vectors as float4[], ranked in Python",
                mask_url(self.url, drop_query=True),
            )
        return pool, vector

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        if self._loop.is_running():
            self._run(self._pool.close())
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        async with self._pool.acquire() as conn:
            return list(await conn.fetch(sql, *args))

    # -- documents ---------------------------------------------------------------------------
    def add_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        self._run(self._add(doc, chunks))

    async def _add(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM knowledge_documents WHERE id = $1", doc.id)
            await conn.execute(
                "INSERT INTO knowledge_documents (id, collection, owner, name, title, pages, "
                "size, sha256, added, chunks) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
                *(doc.id, doc.collection, doc.owner, doc.name, doc.title, doc.pages),
                *(doc.size, doc.sha256, doc.added, len(chunks)),
            )
            await conn.executemany(
                "INSERT INTO knowledge_chunks (doc_id, ordinal, text, page, heading, tsv) "
                "VALUES ($1, $2, $3, $4, $5, $6::tsvector)",
                [
                    (doc.id, c.ordinal, c.text, c.page, c.heading, tsvector(c.heading, c.text))
                    for c in chunks
                ],
            )

    def remove_document(self, doc_id: str) -> bool:
        rows = self._run(
            self._fetch("DELETE FROM knowledge_documents WHERE id = $1 RETURNING id", doc_id)
        )
        return bool(rows)

    def documents(self, collections: Sequence[str]) -> list[Document]:
        rows = self._run(
            self._fetch(
                "SELECT * FROM knowledge_documents WHERE collection = ANY($1::text[]) "
                "ORDER BY added DESC, id",
                list(collections),
            )
        )
        return [_document(r) for r in rows]

    def find_sha(self, collection: str, sha256: str) -> Document | None:
        rows = self._run(
            self._fetch(
                "SELECT * FROM knowledge_documents WHERE collection = $1 AND sha256 = $2 "
                "ORDER BY added DESC LIMIT 1",
                collection,
                sha256,
            )
        )
        return _document(rows[0]) if rows else None

    # -- sharing -----------------------------------------------------------------------------
    def share(self, collection: str, users: Sequence[str]) -> None:
        self._run(self._share(collection, sorted(set(users))))

    async def _share(self, collection: str, users: list[str]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM knowledge_readers WHERE collection = $1", collection)
            await conn.executemany(
                "INSERT INTO knowledge_readers (collection, reader) VALUES ($1, $2)",
                [(collection, user) for user in users],
            )

    def readers(self, collection: str) -> list[str]:
        sql = "SELECT reader FROM knowledge_readers WHERE collection = $1 ORDER BY reader"
        return [r["reader"] for r in self._run(self._fetch(sql, collection))]

    def shared_with(self, user: str) -> list[str]:
        sql = "SELECT collection FROM knowledge_readers WHERE reader = $1 ORDER BY collection"
        return [r["collection"] for r in self._run(self._fetch(sql, user))]

    # -- retrieval ---------------------------------------------------------------------------
    def text_search(self, query: str, collections: Sequence[str], k: int) -> list[Passage]:
        q = tsquery(query)
        if not q or k < 1:
            return []
        sql = (
            f"SELECT {PASSAGE}, ts_rank(c.tsv, $1::tsquery) AS score {FROM} "
            "AND c.tsv @@ $1::tsquery ORDER BY score DESC, c.row_id LIMIT $3"
        )
        return [_passage(r) for r in self._run(self._fetch(sql, q, list(collections), k))]

    def chunks(self, collections: Sequence[str]) -> list[tuple[int, Chunk]]:
        sql = f"SELECT c.row_id, {PASSAGE} {FROM.replace('$2', '$1')} ORDER BY c.row_id"
        rows = self._run(self._fetch(sql, list(collections)))
        return [(r["row_id"], _passage(r, 0.0).chunk) for r in rows]

    def set_vectors(self, rows: Sequence[tuple[int, list[float]]], model: str) -> None:
        cast = "$3::vector" if self.pgvector else "$3::float4[]"
        sql = (
            f"INSERT INTO knowledge_vectors (row_id, model, embedding) VALUES ($1, $2, {cast}) "
            "ON CONFLICT (row_id, model) DO UPDATE SET embedding = EXCLUDED.embedding"
        )
        values = [(row, model, _vector_value(v, self.pgvector)) for row, v in rows]
        self._run(self._executemany(sql, values))

    async def _executemany(self, sql: str, values: list[tuple[Any, ...]]) -> None:
        async with self._pool.acquire() as conn:
            await conn.executemany(sql, values)

    def vector_search(
        self, vector: list[float], model: str, collections: Sequence[str], k: int
    ) -> list[Passage]:
        if k < 1:
            return []
        if not self.pgvector:
            from brainchat.knowledge.pg_schema import python_cosine

            return python_cosine(self, vector, model, collections, k)
        sql = (
            f"SELECT {PASSAGE}, 1 - (v.embedding <=> $1::vector) AS score {FROM_BASE} "
            "JOIN knowledge_vectors v ON v.row_id = c.row_id AND v.model = $4 "
            "AND vector_dims(v.embedding) = $5 WHERE d.collection = ANY($2::text[]) "
            "ORDER BY v.embedding <=> $1::vector, c.row_id LIMIT $3"
        )
        args = (_vector_value(vector, True), list(collections), k, model, len(vector))
        return [_passage(r) for r in self._run(self._fetch(sql, *args))]

    def missing_vectors(self, model: str, collections: Sequence[str]) -> list[tuple[int, str]]:
        sql = (
            "SELECT c.row_id, c.text FROM knowledge_chunks c JOIN knowledge_documents d "
            "ON d.id = c.doc_id LEFT JOIN knowledge_vectors v ON v.row_id = c.row_id "
            "AND v.model = $1 WHERE d.collection = ANY($2::text[]) AND v.row_id IS NULL "
            "ORDER BY c.row_id"
        )
        rows = self._run(self._fetch(sql, model, list(collections)))
        return [(r["row_id"], r["text"]) for r in rows]


FROM_BASE = "FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.doc_id"
FROM = f"{FROM_BASE} WHERE d.collection = ANY($2::text[])"


def _vector_value(vector: Sequence[float], pgvector: bool) -> Any:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]" if pgvector else list(vector)


def _document(r: Any) -> Document:
    return Document(
        id=r["id"], collection=r["collection"], owner=r["owner"], name=r["name"],
        title=r["title"], pages=r["pages"], size=r["size"], sha256=r["sha256"],
        added=r["added"], chunks=r["chunks"],
    )  # fmt: skip


def _passage(r: Any, score: float | None = None) -> Passage:
    chunk = Chunk(r["doc_id"], r["ordinal"], r["text"], r["page"], r["heading"])
    return Passage(
        chunk, r["title"], r["collection"], float(r["score"] if score is None else score)
    )
