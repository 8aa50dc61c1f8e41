"""Ranking passages for a query: BM25 always (bm25s over the collections' chunks, words and CJK
character pairs), dense vectors when an embedder is configured, fused by reciprocal rank.

BM25 is bm25s here rather than each database's own full-text rank: Postgres' ts_rank has no
inverse document frequency (a common word counts as much as a rare one), and one tokenizer on
every backend ranks Chinese the same way everywhere. The index is built once per set of
collections and rebuilt when a document of them is added, replaced or removed."""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brainchat.knowledge.model import Chunk, Document, Passage
from brainchat.knowledge.store import KnowledgeStore

if TYPE_CHECKING:
    from brainchat.knowledge.embed import Embedder

log = logging.getLogger(__name__)

RRF_K = 60  # reciprocal-rank fusion's constant (Cormack et al. 2009)
DEPTH = 50  # passages each ranking contributes to the fusion
WORD = re.compile(r"[^\W_]+(?:\.\d+)?")  # letters and digits; "0.5" stays one
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
CJK_SPLIT = re.compile(f"({CJK.pattern})")


def tokens(text: str) -> list[str]:
    """Lower-cased words; runs of Chinese, Japanese or Korean characters (no spaces between
    words) as their characters and character pairs, so "滤波" meets "滤波器"."""
    out: list[str] = []
    for word in WORD.findall(text.lower()):
        if word.isascii() or not CJK.search(word):
            out.append(word)
            continue
        for part in CJK_SPLIT.split(word):
            if not part:
                continue
            if CJK.fullmatch(part):
                out += list(part) + [part[i : i + 2] for i in range(len(part) - 1)]
            else:
                out.append(part)
    return out


class Ranking(list[Passage]):
    """Passages best first, with a note for the reader when the ranking is less than asked for
    (the embeddings endpoint failed: BM25 alone)."""

    note: str = ""


def rank(
    store: KnowledgeStore,
    query: str,
    collections: Sequence[str],
    k: int,
    embedder: Embedder | None = None,
) -> Ranking:
    """The `k` passages of `collections` best matching `query`, each scored by fusion."""
    from brainchat.knowledge.embed import EmbeddingError

    result = Ranking()
    if k < 1 or not collections or not query.strip():
        return result
    rankings = [bm25(store, query, collections, DEPTH)]
    if embedder is not None:
        try:
            vector = embedder.embed([query])[0]
            rankings.append(store.vector_search(vector, embedder.model, collections, DEPTH))
        except EmbeddingError as exc:
            log.warning("knowledge search without embeddings: %s", exc)
            result.note = f"BM25 alone: the embeddings failed ({exc})"
    result += fuse(rankings)[:k]
    return result


def fuse(rankings: Sequence[Sequence[Passage]]) -> list[Passage]:
    """Reciprocal-rank fusion: each passage scores the sum of 1 / (60 + its rank) over the
    rankings it is in; a passage is one chunk (its document and place), kept once."""
    scores: dict[tuple[str, int], float] = {}
    first: dict[tuple[str, int], Passage] = {}
    for ranking in rankings:
        for place, passage in enumerate(ranking, start=1):
            key = (passage.chunk.doc_id, passage.chunk.ordinal)
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + place)
            first.setdefault(key, passage)
    order = sorted(scores, key=lambda key: -scores[key])
    return [_scored(first[key], scores[key]) for key in order]


def _scored(passage: Passage, score: float) -> Passage:
    return Passage(passage.chunk, passage.title, passage.collection, score)


@dataclass
class _Index:
    signature: tuple[tuple[str, str, float], ...]
    chunks: list[Chunk]
    documents: dict[str, Document]
    bm25: Any  # bm25s.BM25, or None for no chunk


_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], _Index]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
MAX_CACHED = 16  # sets of collections kept per store


def bm25(store: KnowledgeStore, query: str, collections: Sequence[str], k: int) -> list[Passage]:
    """The `k` chunks best by BM25 (none sharing no token with the query), best first."""
    words = tokens(query)
    index = _index(store, collections)
    if not words or index.bm25 is None:
        return []
    import numpy as np

    scores = index.bm25.get_scores(words)
    best = np.argsort(-scores, kind="stable")[:k]
    out = []
    for i in best:
        if scores[i] <= 0:
            break
        chunk = index.chunks[int(i)]
        doc = index.documents.get(chunk.doc_id)
        title, collection = (doc.title, doc.collection) if doc else ("", "")
        out.append(Passage(chunk, title, collection, float(scores[i])))
    return out


def _index(store: KnowledgeStore, collections: Sequence[str]) -> _Index:
    """The cached index of these collections, rebuilt when their documents changed."""
    key = tuple(sorted(set(collections)))
    docs = store.documents(key)
    signature = tuple(sorted((d.id, d.sha256, d.added) for d in docs))
    with _LOCK:
        per_store = _CACHE.setdefault(store, {})
        cached = per_store.get(key)
    if cached is not None and cached.signature == signature:
        return cached
    chunks = [chunk for _, chunk in store.chunks(key)]
    built = _Index(signature, chunks, {d.id: d for d in docs}, _build(chunks))
    with _LOCK:
        per_store.pop(key, None)
        per_store[key] = built
        while len(per_store) > MAX_CACHED:
            per_store.pop(next(iter(per_store)))
    return built


def _build(chunks: list[Chunk]) -> Any:
    if not chunks:
        return None
    import bm25s

    index = bm25s.BM25()
    # a chunk of no word still takes its place, so row i of the scores is chunks[i]
    index.index(
        [tokens(c.heading + "\n" + c.text) or ["\x00"] for c in chunks], show_progress=False
    )
    return index


def index_vectors(
    store: KnowledgeStore, embedder: Embedder, collections: Sequence[str], batch: int = 256
) -> int:
    """Embed the chunks of `collections` that have no vector from this model yet; return how
    many were embedded. Raises EmbeddingError (what was stored before the failure stays)."""
    missing = store.missing_vectors(embedder.model, collections)
    for start in range(0, len(missing), batch):
        part = missing[start : start + batch]
        vectors = embedder.embed([text for _, text in part])
        store.set_vectors(
            [(row, v) for (row, _), v in zip(part, vectors, strict=True)], embedder.model
        )
    return len(missing)
