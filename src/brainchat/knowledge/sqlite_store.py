"""The knowledge store on SQLite in the state folder: documents, chunks, readers, an FTS5 index
ranked by bm25(), and embeddings as float32 BLOBs compared by cosine in numpy.

FTS5's unicode61 tokenizer keeps a run of Chinese characters as one token, and trigram cannot
match a two-character word, so the index holds a copy of each passage with every CJK run
written as its overlapping character pairs (运动想象 -> 运动 动想 想象); a query is written the
same way, so a Chinese query matches inside a sentence. Latin words are stemmed (porter).
sqlite-vec (on PyPI) is not used: numpy over a matrix cached per (model, collections) until
the next write (a version row bumped by every write, so other processes' writes count too)
answers a query at 10,000 chunks in milliseconds, with no native extension to load. WAL mode; one connection per
thread (the service runs in worker threads)."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from brainchat.knowledge.model import Chunk, Document, Passage

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
  id TEXT PRIMARY KEY, collection TEXT NOT NULL, owner TEXT NOT NULL, name TEXT NOT NULL,
  title TEXT NOT NULL, pages INTEGER NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
  added REAL NOT NULL, chunks INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS documents_collection ON documents (collection, sha256);
CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL, text TEXT NOT NULL, page INTEGER NOT NULL, heading TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id);
CREATE TABLE IF NOT EXISTS readers (
  collection TEXT NOT NULL, user TEXT NOT NULL, PRIMARY KEY (collection, user));
CREATE INDEX IF NOT EXISTS readers_user ON readers (user);
CREATE TABLE IF NOT EXISTS vectors (
  chunk_id INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE, model TEXT NOT NULL,
  vec BLOB NOT NULL, PRIMARY KEY (chunk_id, model));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5 (
  text, heading, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vocab USING fts5vocab (chunk_fts, 'row');
"""
DB_FILE = "knowledge.db"
PRUNE_FROM = 2000  # chunks in the store from which a query's commonest words are left out...
COMMON = 0.1  # ...those in more than this share of the chunks (see `search_terms`)
CACHED_MATRICES = 4  # vector matrices kept (per model and set of collections)
CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
WORD = re.compile(r"\w+")


def cjk_pairs(run: str) -> str:
    return run if len(run) < 2 else " ".join(run[i : i + 2] for i in range(len(run) - 1))


def index_text(text: str) -> str:
    """The text as indexed: each CJK run as its overlapping character pairs."""
    return CJK_RUN.sub(lambda m: f" {cjk_pairs(m.group())} ", text)


def query_terms(query: str) -> list[str]:
    """The query's words (CJK as pairs), lower-cased, each once."""
    return list(dict.fromkeys(t.lower() for t in WORD.findall(index_text(query))))


def match_query(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of these words, each quoted: the user's text is never FTS5
    syntax."""
    return " OR ".join(f'"{t}"' for t in terms)


def marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


class SqliteStore:
    """`KnowledgeStore` on one SQLite file (see the module's docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._matrices: dict[tuple[str, tuple[str, ...], int], tuple[int, list[int], Any]] = {}
        with self.db() as db:
            db.executescript(SCHEMA)

    def db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    # documents
    def close(self) -> None:
        """Close this thread's connection (others close with their threads)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def version(self) -> int:
        row = self.db().execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        return int(row[0]) if row else 0

    def add_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        with self.db() as db:
            self._delete(db, doc.id)
            db.execute(
                "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?)",
                (doc.id, doc.collection, doc.owner, doc.name, doc.title, doc.pages, doc.size,
                 doc.sha256, doc.added, len(chunks)),
            )  # fmt: skip
            for c in chunks:
                cur = db.execute(
                    "INSERT INTO chunks (doc_id, ordinal, text, page, heading) VALUES (?,?,?,?,?)",
                    (doc.id, c.ordinal, c.text, c.page, c.heading),
                )
                db.execute(
                    "INSERT INTO chunk_fts (rowid, text, heading) VALUES (?,?,?)",
                    (cur.lastrowid, index_text(c.text), index_text(c.heading)),
                )

    def _delete(self, db: sqlite3.Connection, doc_id: str) -> int:
        db.execute(
            "DELETE FROM chunk_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = ?)",
            (doc_id,),
        )
        bump(db)
        # chunks and their vectors go by ON DELETE CASCADE
        return db.execute("DELETE FROM documents WHERE id = ?", (doc_id,)).rowcount

    def remove_document(self, doc_id: str) -> bool:
        with self.db() as db:
            return self._delete(db, doc_id) > 0

    def documents(self, collections: Sequence[str]) -> list[Document]:
        rows = self.db().execute(
            f"SELECT * FROM documents WHERE collection IN ({marks(collections)}) "
            "ORDER BY added DESC, name",
            list(collections),
        )
        return [Document(*row) for row in rows]

    def document(self, doc_id: str) -> Document | None:
        row = self.db().execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return Document(*row) if row else None

    def find_sha(self, collection: str, sha256: str) -> Document | None:
        row = (
            self.db()
            .execute(
                "SELECT * FROM documents WHERE collection = ? AND sha256 = ? LIMIT 1",
                (collection, sha256),
            )
            .fetchone()
        )
        return Document(*row) if row else None

    # sharing
    def share(self, collection: str, users: Sequence[str]) -> None:
        with self.db() as db:
            db.execute("DELETE FROM readers WHERE collection = ?", (collection,))
            db.executemany(
                "INSERT OR IGNORE INTO readers VALUES (?, ?)", [(collection, u) for u in users]
            )

    def readers(self, collection: str) -> list[str]:
        rows = self.db().execute(
            "SELECT user FROM readers WHERE collection = ? ORDER BY user", (collection,)
        )
        return [r[0] for r in rows]

    def shared_with(self, user: str) -> list[str]:
        rows = self.db().execute(
            "SELECT collection FROM readers WHERE user = ? ORDER BY collection", (user,)
        )
        return [r[0] for r in rows]

    # retrieval
    def text_search(self, query: str, collections: Sequence[str], k: int) -> list[Passage]:
        expr = match_query(self.search_terms(query_terms(query)))
        if not expr or not collections or k <= 0:
            return []
        rows = self.db().execute(
            "SELECT c.id, c.doc_id, c.ordinal, c.text, c.page, c.heading, d.title, d.collection,"
            " bm25(chunk_fts) AS rank FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid"
            " JOIN documents d ON d.id = c.doc_id WHERE chunk_fts MATCH ?"
            f" AND d.collection IN ({marks(collections)}) ORDER BY rank LIMIT ?",
            [expr, *collections, k],
        )
        return [passage(row[1:-1], -row[-1]) for row in rows]

    def search_terms(self, terms: list[str]) -> list[str]:
        """The terms worth matching: in a large store, a word found in more than a tenth of
        all chunks ('the', 'what', 的...: found by counting, in any language) is left out,
        since bm25 would score every chunk holding it for almost no weight (a query at
        10,000 chunks: 21 -> 7 ms median); the two rarest stay if all are that common."""
        db = self.db()
        total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if total < PRUNE_FROM or len(terms) < 2:
            return terms
        docs = dict(
            db.execute(f"SELECT term, doc FROM chunk_vocab WHERE term IN ({marks(terms)})", terms)
        )
        rare = [t for t in terms if docs.get(t, 0) <= COMMON * total]
        return rare or sorted(terms, key=lambda t: docs.get(t, 0))[:2]

    def chunks(self, collections: Sequence[str]) -> list[tuple[int, Chunk]]:
        rows = self.db().execute(
            "SELECT c.id, c.doc_id, c.ordinal, c.text, c.page, c.heading FROM chunks c"
            f" JOIN documents d ON d.id = c.doc_id WHERE d.collection IN ({marks(collections)})"
            " ORDER BY c.id",
            list(collections),
        )
        return [(row[0], Chunk(*row[1:])) for row in rows]

    def set_vectors(self, rows: Sequence[tuple[int, list[float]]], model: str) -> None:
        import numpy as np

        with self.db() as db:
            bump(db)
            db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(i, model, np.asarray(v, dtype=np.float32).tobytes()) for i, v in rows],
            )

    def vector_search(
        self, vector: list[float], model: str, collections: Sequence[str], k: int
    ) -> list[Passage]:
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        ids, matrix = self._matrix(model, collections, query.size)
        norm = float(np.linalg.norm(query))
        if not ids or k <= 0 or norm == 0:
            return []
        scores = matrix @ (query / norm)
        best = np.argsort(-scores)[:k]
        chosen = [ids[i] for i in best]
        rows = {
            r[0]: r[1:]
            for r in self.db().execute(
                "SELECT c.id, c.doc_id, c.ordinal, c.text, c.page, c.heading, d.title,"
                " d.collection FROM chunks c JOIN documents d ON d.id = c.doc_id"
                f" WHERE c.id IN ({marks(chosen)})",
                chosen,
            )
        }
        return [passage(rows[ids[i]], float(scores[i])) for i in best if ids[i] in rows]

    def _matrix(self, model: str, collections: Sequence[str], size: int) -> tuple[list[int], Any]:
        """(chunk ids, unit-length vectors as rows) of `model` in `collections`, of `size`
        dimensions (another size: another model's), cached until the next write."""
        import numpy as np

        names = tuple(sorted(set(collections)))
        key = (model, names, size)
        version = self.version()
        with self._lock:
            cached = self._matrices.get(key)
        if cached is None or cached[0] != version:
            rows = (
                self.db()
                .execute(
                    "SELECT v.chunk_id, v.vec FROM vectors v JOIN chunks c ON c.id = v.chunk_id"
                    f" JOIN documents d ON d.id = c.doc_id WHERE v.model = ?"
                    f" AND d.collection IN ({marks(names)}) ORDER BY v.chunk_id",
                    [model, *names],
                )
                .fetchall()
            )
            rows = [r for r in rows if len(r[1]) == 4 * size]  # another size: another model's
            raw = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            raw = raw.reshape(len(rows), size)
            norms = np.linalg.norm(raw, axis=1, keepdims=True)
            cached = (version, [r[0] for r in rows], raw / np.where(norms == 0, 1, norms))
            with self._lock:
                while len(self._matrices) >= CACHED_MATRICES:
                    self._matrices.pop(next(iter(self._matrices)))
                self._matrices[key] = cached
        return cached[1], cached[2]

    def missing_vectors(self, model: str, collections: Sequence[str]) -> list[tuple[int, str]]:
        rows = self.db().execute(
            "SELECT c.id, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id"
            f" WHERE d.collection IN ({marks(collections)}) AND NOT EXISTS"
            " (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id AND v.model = ?) ORDER BY c.id",
            [*collections, model],
        )
        return [(r[0], r[1]) for r in rows]

    def counts(self) -> dict[str, int]:
        """Rows per table (the tests count what a removal leaves)."""
        tables: Iterable[str] = ("documents", "chunks", "chunk_fts", "vectors", "readers")
        db = self.db()
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def bump(db: sqlite3.Connection) -> None:
    """Mark a write (cached vector matrices are stale after it)."""
    db.execute(
        "INSERT INTO meta VALUES ('version', 1) ON CONFLICT (key) DO UPDATE SET value = value + 1"
    )


def passage(row: Sequence[Any], score: float) -> Passage:
    """(doc_id, ordinal, text, page, heading, title, collection) and a score as a Passage."""
    doc_id, ordinal, text, page, heading, title, collection = row
    return Passage(Chunk(doc_id, ordinal, text, page, heading), title, collection, score)
