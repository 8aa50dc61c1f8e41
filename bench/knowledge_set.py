"""The labelled retrieval set of bench/knowledge.py (#41): documents, questions, the PDF rendered
at run time, parsing and chunking through brainchat.knowledge, an in-memory store for where the
SQLite one has not landed, and the scoring (recall@3, MRR).

Also read by tests/test_knowledge_bench_set.py."""

from __future__ import annotations

import importlib
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from brainchat.knowledge.model import Chunk, Document, Passage

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "knowledge"
PDF_DOC = "neurolab-mi-protocol.md"  # rendered to a PDF at run time, indexed from the PDF
COLLECTION = "bench/personal"
K = 3

Ranker = Callable[[str, int], list[Chunk]]  # (query, k) -> chunks, best first


def real(module: str) -> Any:
    """brainchat.knowledge.<module>, or None where it has not landed yet."""
    try:
        return importlib.import_module(f"brainchat.knowledge.{module}")
    except ImportError:
        return None


def load_set() -> tuple[dict[str, str], list[dict[str, Any]]]:
    """{file name: Markdown} and the questions {id, question, doc, answer, lang}."""
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(DATA.glob("*.md"))}
    lines = (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return docs, [json.loads(line) for line in lines if line.strip()]


def md_sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of a Markdown document's sections (the title line is its own)."""
    out: list[tuple[str, str]] = []
    for block in re.split(r"(?m)^(?=#)", text):
        if block.strip():
            head, _, body = block.partition("\n")
            out.append((head.lstrip("#").strip(), body.strip()))
    return out


def render_pdf(text: str, path: Path, pages: int | None = None) -> dict[str, int]:
    """Write the Markdown `text` as a PDF: one section a page, or, given `pages`, the sections
    flowed (cycled) into that many full pages of 44 lines; returns heading -> first page."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["pdf.fonttype"] = 42  # embedded TrueType: the text extracts as text
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    sections = md_sections(text)
    sheets: list[list[str]] = []
    where: dict[str, int] = {}
    n = 0
    while len(sheets) < (pages or len(sections)):
        head, body = sections[n % len(sections)]
        lines = [head, ""] + textwrap.wrap(body, 90, break_on_hyphens=False) + [""]
        if not pages or not sheets or len(sheets[-1]) + len(lines) > 44:
            sheets.append([])
        where.setdefault(head, len(sheets))
        sheets[-1] += lines
        n += 1
    with PdfPages(path) as pdf:
        for sheet in sheets:
            fig = Figure(figsize=(8.27, 11.69))
            for i, line in enumerate(sheet):
                fig.text(0.08, 0.95 - i * 0.021, line, fontsize=9)
            pdf.savefig(fig)
    return where


def parse(name: str, data: bytes) -> list[tuple[str, int, str]]:
    """(text, page, heading) sections: brainchat.knowledge.parse, else pypdf / headings."""
    mod = real("parse")
    if mod is not None:
        return [(s.text, s.page, s.heading) for s in mod.parse_bytes(name, data).sections]
    if name.endswith(".pdf"):
        import pypdf

        reader = pypdf.PdfReader(io.BytesIO(data))
        return [(p.extract_text() or "", i + 1, "") for i, p in enumerate(reader.pages)]
    return [(body, 0, head) for head, body in md_sections(data.decode("utf-8"))]


def chunk(doc: str, sections: list[tuple[str, int, str]]) -> list[Chunk]:
    """A parsed document's passages: brainchat.knowledge.chunk, else paragraphs of <= 800."""
    from brainchat.knowledge.model import Section

    mod = real("chunk")
    if mod is not None:
        return list(mod.chunk_sections(doc, [Section(t, p, h) for t, p, h in sections]))
    out: list[Chunk] = []
    for text, page, heading in sections:
        for para in re.split(r"\n\s*\n", text):
            for start in range(0, len(para), 800):
                if piece := para[start : start + 800].strip():
                    out.append(Chunk(doc, len(out), piece, page, heading))
    return out


def corpus(docs: dict[str, str], folder: Path) -> tuple[dict[str, list[Chunk]], dict[str, int]]:
    """{doc: its chunks}, every document parsed and chunked (the PDF one from its rendered PDF);
    and the PDF's heading -> page."""
    chunks: dict[str, list[Chunk]] = {}
    pages: dict[str, int] = {}
    for name, text in docs.items():
        if name == PDF_DOC:
            pdf = folder / name.replace(".md", ".pdf")
            pages = render_pdf(text, pdf)
            chunks[name] = chunk(name, parse(pdf.name, pdf.read_bytes()))
        else:
            chunks[name] = chunk(name, parse(name, text.encode("utf-8")))
    return chunks, pages


class MemoryStore:
    """A KnowledgeStore in memory: the stand-in for the SQLite store until it lands (the ranking
    over it is brainchat.knowledge.retrieve's)."""

    def __init__(self) -> None:
        self.docs: dict[str, Document] = {}
        self.rows: list[Chunk] = []
        self.vectors: dict[tuple[int, str], list[float]] = {}

    def add_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        self.docs[doc.id] = doc
        self.rows += chunks

    def documents(self, collections: Sequence[str]) -> list[Document]:
        return [d for d in self.docs.values() if d.collection in collections]

    def chunks(self, collections: Sequence[str]) -> list[tuple[int, Chunk]]:
        return list(enumerate(self.rows))

    def set_vectors(self, rows: Sequence[tuple[int, list[float]]], model: str) -> None:
        self.vectors.update({(row, model): v for row, v in rows})

    def missing_vectors(self, model: str, collections: Sequence[str]) -> list[tuple[int, str]]:
        return [(i, c.text) for i, c in enumerate(self.rows) if (i, model) not in self.vectors]

    def vector_search(
        self, vector: list[float], model: str, collections: Sequence[str], k: int
    ) -> list[Passage]:
        def cos(v: list[float]) -> float:
            dot = sum(a * b for a, b in zip(v, vector, strict=True))
            return dot / (math.hypot(*v) * math.hypot(*vector) or 1.0)

        scored = [(cos(v), row) for (row, m), v in self.vectors.items() if m == model]
        best = sorted(scored, reverse=True)[:k]
        return [Passage(self.rows[r], self.rows[r].doc_id, COLLECTION, s) for s, r in best]


def document(name: str, chunks: Sequence[Chunk], size: int, pages: int = 0) -> Document:
    """The Document record of a bench document (its name is its id)."""
    return Document(
        id=name, collection=COLLECTION, owner="bench", name=name, title=name, pages=pages,
        size=size, sha256=name, added=0.0, chunks=len(chunks),
    )  # fmt: skip


def squash(text: str) -> str:
    return "".join(text.split()).lower()


def answers(hit: Chunk, q: dict[str, Any]) -> bool:
    """The hit is from the question's document and holds the answering passage (or 60 % of it,
    for a passage a chunk boundary cuts); whitespace is ignored, since a PDF breaks lines."""
    if hit.doc_id != q["doc"]:
        return False
    text, answer = squash(hit.text), squash(q["answer"])
    if answer in text:
        return True
    match = SequenceMatcher(None, text, answer, autojunk=False).find_longest_match()
    return match.size >= 0.6 * len(answer)


def score(rank: Ranker, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """recall@3, MRR@10 and the ids of the questions missed in the top 3."""
    hits, rr, missed = 0, 0.0, []
    for q in questions:
        got = rank(q["question"], 10)
        first = next((n for n, h in enumerate(got) if answers(h, q)), None)
        hits += first is not None and first < K
        rr += 0.0 if first is None else 1.0 / (first + 1)
        if first is None or first >= K:
            missed.append(q["id"])
    n = len(questions) or 1
    return {"recall@3": hits / n, "mrr": rr / n, "missed": missed}


def pages_right(rank: Ranker, questions: list[dict[str, Any]], pages: dict[str, int]) -> str:
    """Of the PDF document's questions, how many answering hits carry the right page."""
    docs, _ = load_set()
    right = total = 0
    for q in (q for q in questions if q["doc"] == PDF_DOC):
        total += 1
        want = next((pages[h] for h, b in md_sections(docs[PDF_DOC]) if q["answer"] in b), -1)
        hit = next((h for h in rank(q["question"], K) if answers(h, q)), None)
        right += hit is not None and hit.page == want
    return f"{right}/{total}"
