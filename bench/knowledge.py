"""Bench: knowledge retrieval (#41) on a labelled set of self-written EEG methods text.

    .venv/bin/python bench/knowledge.py                  # recall, indexing 500 pages, 10,000 chunks
    .venv/bin/python bench/knowledge.py --parts recall   # one part: recall | index | query
    .venv/bin/python bench/knowledge.py --parts recall \
        --embeddings-url http://127.0.0.1:8080/v1 --embeddings-model NAME   # a real endpoint

The set: bench/data/knowledge/*.md (20 documents, 4 in Chinese) and questions.jsonl (80
paraphrased questions, 17 in Chinese, each with its document and the exact answering passage).
The NeuroLab protocol is rendered at run time to a multi-page PDF (one section a page, with
matplotlib) and indexed from the PDF, so its passages carry page numbers.

Every figure comes with a ratio against a baseline measured in the same run:
- recall@3 and MRR: BM25 and hybrid (BM25 + dense, reciprocal-rank fusion) against a plain
  keyword-overlap ranking. Dense vectors come from an OpenAI-compatible /v1/embeddings: the
  scripted server's deterministic one unless --embeddings-url names a real one.
- indexing 500 pages: parse + chunk + the store + the bm25s index, and the user's path
  (service.Knowledge.add, then the first search), against pypdf's bare text extraction of the
  same PDF; peak RSS of the process (each part runs in its own interpreter).
- a query at 10,000 chunks: bm25s (retrieve.rank) and the store's FTS5 text_search against a
  linear keyword-overlap scan; memory added and peak (each backend in its own interpreter).

The ranking uses brainchat.knowledge where its modules exist (parse, chunk, the SQLite store,
retrieve); where one does not, a stand-in of this file takes its place, and the output says which.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "src"), str(Path(__file__).parent)]

from brainchat.knowledge.model import Chunk  # noqa: E402
from knowledge_set import (  # noqa: E402
    COLLECTION,
    K,
    MemoryStore,
    Ranker,
    chunk,
    corpus,
    document,
    load_set,
    pages_right,
    parse,
    real,
    render_pdf,
    score,
)

STORE_MODULES = ("sqlite_store", "sqlite", "lite_store", "sqlite_fts")  # the SQLite store's name


# -- stores and rankers ---------------------------------------------------------------------------
def open_store(path: Path) -> tuple[Any, str]:
    """The product's SQLite KnowledgeStore in `path` where it exists, else the in-memory one."""
    for name in STORE_MODULES:
        mod = real(name)
        for attr in dir(mod) if mod else ():
            cls = getattr(mod, attr)
            if isinstance(cls, type) and attr.lower().endswith("store") and "sql" in attr.lower():
                return cls(path), f"{mod.__name__}.{attr}"
    return MemoryStore(), "stand-in MemoryStore (no SQLite store yet)"


def fill(store: Any, chunks: dict[str, list[Chunk]]) -> None:
    for name, its in chunks.items():
        store.add_document(document(name, its, sum(len(c.text) for c in its)), its)


def tokens(text: str) -> list[str]:
    from brainchat.knowledge.retrieve import tokens as product_tokens

    return product_tokens(text)


def overlap_ranker(chunks: list[Chunk]) -> Ranker:
    """The baseline: chunks by how many distinct query words they hold (a linear scan)."""
    bags = [set(tokens(c.text)) for c in chunks]

    def rank(query: str, k: int) -> list[Chunk]:
        q = set(tokens(query))
        scores = [len(q & bag) for bag in bags]
        return [chunks[i] for i in sorted(range(len(chunks)), key=lambda i: -scores[i])[:k]]

    return rank


def product_ranker(store: Any, embedder: Any = None) -> Ranker:
    """brainchat.knowledge.retrieve.rank: bm25s, fused with dense vectors given an embedder."""
    from brainchat.knowledge.retrieve import index_vectors, rank

    if embedder is not None:
        index_vectors(store, embedder, [COLLECTION])
    return lambda q, k: [p.chunk for p in rank(store, q, [COLLECTION], k, embedder)]


def text_search_ranker(store: Any) -> Ranker:
    """The store's own full-text search (FTS5 in the SQLite store)."""
    return lambda q, k: [p.chunk for p in store.text_search(q, [COLLECTION], k)]


def fts5_ranker(chunks: list[Chunk], db: str = ":memory:") -> Ranker:
    """Stand-in FTS5 (before the SQLite store lands): the product's tokens space-joined in an
    FTS5 table, queried with OR, ordered by FTS5's bm25()."""
    con = sqlite3.connect(db, check_same_thread=False)
    con.execute("CREATE VIRTUAL TABLE c USING fts5(body, tokenize='unicode61')")
    rows = ((i, " ".join(tokens(c.heading + "\n" + c.text))) for i, c in enumerate(chunks))
    con.executemany("INSERT INTO c(rowid, body) VALUES (?, ?)", rows)
    con.commit()

    def rank(query: str, k: int) -> list[Chunk]:
        words = sorted(set(tokens(query)))
        match = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
        sql = "SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT ?"
        return [chunks[r] for (r,) in con.execute(sql, (match, k))] if words else []

    return rank


def embedder_for(args: argparse.Namespace) -> tuple[Any, Any]:
    """(scripted server to stop or None, Embedder) of the embeddings endpoint."""
    from brainchat.knowledge.embed import Embedder
    from brainchat.settings import ModelSpec

    server = None
    url, model = args.embeddings_url, args.embeddings_model
    if not url:
        from brainchat.testing.scripted_server import ScriptedServer

        server = ScriptedServer().start()
        url, model = server.base_url, "scripted-embeddings"
    return server, Embedder(ModelSpec(model=model, base_url=url, timeout=600.0))


def memo(rank: Ranker, depth: int = 10) -> Ranker:
    """The ranker with each query's top `depth` kept."""
    seen: dict[str, list[Chunk]] = {}

    def cached(query: str, k: int) -> list[Chunk]:
        if query not in seen:
            seen[query] = rank(query, max(k, depth))
        return seen[query][:k]

    return cached


# -- recall@3 -------------------------------------------------------------------------------------
def recall_part(args: argparse.Namespace) -> dict[str, Any]:
    docs, questions = load_set()
    server, embedder = embedder_for(args)
    with tempfile.TemporaryDirectory() as tmp:
        chunks, pages = corpus(docs, Path(tmp))
        store, kind = open_store(Path(tmp) / "knowledge.sqlite")
        fill(store, chunks)
        every = [c for its in chunks.values() for c in its]
        out: dict[str, Any] = {"chunks": len(every), "store": kind}
        out["embeddings"] = f"{embedder.model} at {embedder.spec.base_url}"
        rankers = {
            "overlap (baseline)": overlap_ranker(every),
            "bm25": product_ranker(store),
            "hybrid": product_ranker(store, embedder),
        }
        if hasattr(store, "text_search"):
            rankers["store text_search"] = text_search_ranker(store)
        for name, ranker in rankers.items():
            rank = memo(ranker)  # each question asked once (all, en, zh and pages share it)
            for lang in ("all", "en", "zh"):
                out[f"{name} {lang}"] = score(
                    rank, [q for q in questions if lang in ("all", q["lang"])]
                )
            out[f"{name} PDF page right"] = pages_right(rank, questions, pages)
    if server is not None:
        server.stop()
    return out


# -- indexing 500 pages; a query at 10,000 chunks ------------------------------------------------
def peak_rss_mb() -> float:
    """This process's peak resident set so far, in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def index_part(args: argparse.Namespace) -> dict[str, Any]:
    """Parse, chunk and index a 500-page PDF (store + bm25s index; FTS5 stand-in before the
    store lands); the floor is pypdf's bare text extraction of the same file."""
    import io

    import pypdf

    docs, _ = load_set()
    text = "\n\n".join(body for name, body in docs.items() if not name.startswith("zh-"))
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "book.pdf"
        render_pdf(text, pdf, pages=args.pages)
        data = pdf.read_bytes()
        before = peak_rss_mb()
        t0 = time.perf_counter()
        pages = [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages]
        floor = time.perf_counter() - t0
        t0 = time.perf_counter()
        chunks = chunk("book.pdf", parse("book.pdf", data))
        parsed = time.perf_counter() - t0
        t0 = time.perf_counter()
        store, kind = open_store(Path(tmp) / "knowledge.sqlite")
        fill(store, {"book.pdf": chunks})
        if isinstance(store, MemoryStore):
            fts5_ranker(chunks, str(Path(tmp) / "fts5.sqlite"))
        product_ranker(store)("motor imagery filter", K)  # builds the bm25s index
        indexed = time.perf_counter() - t0
        added = service_add(pdf, Path(tmp) / "service.sqlite")
    total = parsed + indexed
    return {
        "pages": len(pages), "PDF bytes": len(data), "chunks": len(chunks), "store": kind,
        "floor: pypdf text only (s)": round(floor, 2),
        "parse + chunk (s)": round(parsed, 2), "store + bm25s index (s)": round(indexed, 2),
        "total (s)": round(total, 2), "ratio to floor": round(total / floor, 2),
        "Knowledge.add + first search (s)": added,
        "its ratio to floor": round(added / floor, 2) if isinstance(added, float) else "-",
        "peak RSS (MB)": round(peak_rss_mb(), 1), "peak RSS before (MB)": round(before, 1),
    }  # fmt: skip


def service_add(pdf: Path, db: Path) -> float | str:
    """The user's path: brainchat.knowledge.service.Knowledge.add of the file (hash, quota,
    parse, chunk, store) and the first search (which builds the BM25 index); seconds."""
    service = real("service")
    if service is None:
        return "no service yet"
    store, _ = open_store(db)
    knowledge = service.Knowledge(store)
    t0 = time.perf_counter()
    (result,) = knowledge.add("bench", pdf)
    knowledge.search("bench", "motor imagery filter", K)
    seconds = time.perf_counter() - t0
    return round(seconds, 2) if result.status == "added" else f"{result.status}: {result.reason}"


def synthetic_chunks(n: int, seed: int = 41) -> dict[str, list[Chunk]]:
    """`n` chunks of 120 words drawn from the set's vocabulary (English and Chinese), 20 to a
    document."""
    import random

    docs, _ = load_set()
    rnd = random.Random(seed)
    word = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]{1,2}")  # Chinese as two-character words
    vocab = sorted({t for text in docs.values() for t in word.findall(text)})
    out: dict[str, list[Chunk]] = {}
    for i in range(n):
        doc = f"syn-{i // 20}"
        out.setdefault(doc, []).append(Chunk(doc, i % 20, " ".join(rnd.choices(vocab, k=120))))
    return out


def timed(rank: Ranker, queries: list[str]) -> dict[str, float]:
    """Median and worst time (ms) of each query, after one warm-up query."""
    rank(queries[0], K)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        rank(q, K)
        times.append((time.perf_counter() - t0) * 1000)
    return {"median ms": round(statistics.median(times), 2), "max ms": round(max(times), 2)}


BACKENDS = ("overlap scan (baseline)", "stand-in FTS5", "bm25s (retrieve.rank)", "store FTS5")


def query_part(args: argparse.Namespace) -> dict[str, Any]:
    """One backend's query time at `args.chunks` chunks (`args.backend`; each in its own
    interpreter, so its memory is its own): build (store added to, index built), then 80 queries."""
    _, questions = load_set()
    queries = [q["question"] for q in questions]
    by_doc = synthetic_chunks(args.chunks)
    every = [c for its in by_doc.values() for c in its]
    tmp = tempfile.TemporaryDirectory()
    store, kind = open_store(Path(tmp.name) / "knowledge.sqlite")
    if args.backend == "store FTS5" and isinstance(store, MemoryStore):
        return {"store": kind}
    before, t0 = rss_mb(), time.perf_counter()
    if args.backend == "overlap scan (baseline)":
        rank = overlap_ranker(every)
    elif args.backend == "stand-in FTS5":
        rank = fts5_ranker(every)
    else:
        fill(store, by_doc)
        rank = product_ranker(store) if "bm25s" in args.backend else text_search_ranker(store)
    rank(queries[0], K)  # an index built on first use is built here
    built = round(time.perf_counter() - t0, 2)
    out = {"store": kind, "chunks": len(every), "queries": len(queries), "build s": built}
    out |= timed(rank, queries)
    out["RSS added (MB)"] = round(rss_mb() - before, 1)
    out["peak RSS (MB)"] = round(peak_rss_mb(), 1)
    tmp.cleanup()
    return out


def query_all(argv: list[str]) -> dict[str, Any]:
    """Every backend in its own interpreter; ratios against the scan's median."""
    out = {b: child("query", [*argv, "--backend", b]) for b in BACKENDS}
    base = out[BACKENDS[0]]["median ms"]
    for value in out.values():
        if "median ms" in value:
            value["ratio to scan"] = round(value["median ms"] / base, 4)
    return out


def child(part: str, argv: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, *argv, "--child", part]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        return {"failed": done.stderr[-3000:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- main -----------------------------------------------------------------------------------------
PARTS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "recall": recall_part, "index": index_part, "query": query_part,
}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description="knowledge retrieval bench (#41)")
    ap.add_argument("--parts", default="recall,index,query")
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--embeddings-url", default="")
    ap.add_argument("--embeddings-model", default="embeddings")
    ap.add_argument("--backend", default=BACKENDS[0], help=argparse.SUPPRESS)
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # one part in this interpreter (its own peak RSS), its result as JSON
        print(json.dumps(PARTS[args.child](args), ensure_ascii=False))
        return
    names = ("parse", "chunk", "embed", "retrieve", "service", *STORE_MODULES)
    print("brainchat.knowledge: " + ", ".join(n for n in names if real(n)), flush=True)
    for part in args.parts.split(","):
        argv = sys.argv[1:]
        report(part, query_all(argv) if part == "query" else child(part, argv))


def report(part: str, result: dict[str, Any]) -> None:
    print(f"\n== {part}", flush=True)
    for key, value in result.items():
        if isinstance(value, dict) and "recall@3" in value:
            base = result[f"overlap (baseline) {key.rsplit(' ', 1)[1]}"]["recall@3"]
            miss = f"  missed: {' '.join(value['missed'])}" if value["missed"] else ""
            print(
                f"{key:26} recall@3 {value['recall@3']:.3f}  MRR {value['mrr']:.3f}"
                f"  ratio to baseline {value['recall@3'] / base:.2f}{miss}"
            )
        elif isinstance(value, dict):
            shown = {k: v for k, v in value.items() if k not in ("store", "queries")}
            print(f"{key:26} " + ", ".join(f"{k} {v}" for k, v in shown.items()))
        else:
            print(f"{key:26} {value}")


if __name__ == "__main__":
    main()
