"""The knowledge store on SQLite and the service over it (#41): documents added, listed,
re-indexed only when changed, removed with every row of theirs, shared; a Chinese query
matches inside Chinese text."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from brainchat.knowledge.limits import KnowledgeError
from brainchat.knowledge.service import Knowledge, open_default
from brainchat.knowledge.sqlite_store import DB_FILE, SqliteStore
from knowledge_pdf import text_page, tiny_pdf

PROTOCOL = (
    "# Motor imagery protocol\n\n## Filtering\n\nBand-pass the recording from 8 to 30 Hz "
    "before epoching.\n\n## Epochs\n\nEpochs run from 0.5 s to 2.5 s after the cue.\n"
)
CHINESE = "# 实验规程\n\n运动想象实验的数据先做八到三十赫兹的带通滤波，再按提示切分试次。\n"


@pytest.fixture
def kb(tmp_path: Path) -> Knowledge:
    return Knowledge(SqliteStore(tmp_path / "state" / DB_FILE))


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_add_list_search_remove(kb: Knowledge, tmp_path: Path) -> None:
    [result] = kb.add("ana", write(tmp_path, "protocol.md", PROTOCOL))
    assert result.status == "added" and result.document is not None
    [doc] = kb.documents("ana")
    assert (doc.title, doc.collection, doc.owner, doc.name) == (
        "Motor imagery protocol", "ana/personal", "ana", "protocol.md"
    )  # fmt: skip
    assert doc.size == len(PROTOCOL.encode()) and doc.chunks == 2
    hits = kb.store.text_search("band-pass filter", ["ana/personal"], 3)
    assert hits and hits[0].chunk.heading == "Filtering" and hits[0].title == doc.title
    assert kb.search("ana", "epochs after the cue", 1)[0].chunk.heading == "Epochs"
    assert kb.remove("ana", doc.id).id == doc.id
    assert kb.documents("ana") == []
    with pytest.raises(KnowledgeError, match="no document with id"):
        kb.remove("ana", doc.id)


def test_pdf_pages_are_kept(kb: Knowledge, tmp_path: Path) -> None:
    pdf = tiny_pdf([text_page("Introduction."), text_page("EEGNet reached 68 percent.")])
    (tmp_path / "eegnet.pdf").write_bytes(pdf)
    [result] = kb.add("ana", tmp_path / "eegnet.pdf")
    assert result.document is not None and result.document.pages == 2
    [hit] = kb.store.text_search("EEGNet percent", ["ana/personal"], 1)
    assert hit.chunk.page == 2


def test_same_bytes_are_not_reindexed_and_changed_ones_are(kb: Knowledge, tmp_path: Path) -> None:
    path = write(tmp_path, "p.md", PROTOCOL)
    [first] = kb.add("ana", path)
    [again] = kb.add("ana", path)
    assert again.status == "unchanged" and again.document == first.document
    path.write_text(PROTOCOL + "\n## Rejection\n\nTrials over 100 microvolts are dropped.\n")
    [changed] = kb.add("ana", path)
    assert changed.status == "updated" and changed.document is not None
    assert first.document is not None and changed.document.id == first.document.id
    assert [d.chunks for d in kb.documents("ana")] == [3]  # replaced, not added beside
    assert kb.store.text_search("microvolts", ["ana/personal"], 3)


def test_removing_deletes_chunks_fts_rows_and_vectors(kb: Knowledge, tmp_path: Path) -> None:
    store = kb.store
    assert isinstance(store, SqliteStore)
    kb.add("ana", write(tmp_path / "a", "one.md", PROTOCOL))
    [keep] = kb.add("ana", write(tmp_path / "b", "two.md", CHINESE))
    rows = store.chunks(["ana/personal"])
    store.set_vectors([(row, [1.0, 0.0, 0.5]) for row, _ in rows], "m")
    before = store.counts()
    assert before["chunks"] == before["chunk_fts"] == before["vectors"] == 3
    [gone] = [d for d in kb.documents("ana") if d.name == "one.md"]
    kb.remove("ana", gone.id)
    after = store.counts()
    assert after["documents"] == 1 and after["chunks"] == after["chunk_fts"] == 1
    assert after["vectors"] == 1
    assert keep.document is not None
    assert [p.chunk.doc_id for p in store.vector_search([1, 0, 0.5], "m", ["ana/personal"], 5)] == [
        keep.document.id
    ]
    # the file itself, read by another connection, agrees
    with sqlite3.connect(store.path) as db:
        assert db.execute(
            "SELECT count(*) FROM chunks WHERE doc_id = ?", (gone.id,)
        ).fetchone() == (0,)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_chinese_query_matches_inside_chinese_text(kb: Knowledge, tmp_path: Path) -> None:
    kb.add("ana", write(tmp_path, "zh.md", CHINESE))
    kb.add("ana", write(tmp_path / "en", "en.md", PROTOCOL))
    for query in ("带通滤波", "滤波", "运动想象的滤波设置是什么？"):
        hits = kb.store.text_search(query, ["ana/personal"], 2)
        assert hits and hits[0].chunk.heading == "实验规程", query
    assert kb.store.text_search("脑磁图", ["ana/personal"], 2) == []


def test_vector_search_ranks_by_cosine_and_ignores_other_models(
    kb: Knowledge, tmp_path: Path
) -> None:
    store = kb.store
    kb.add("ana", write(tmp_path, "p.md", PROTOCOL))
    rows = [row for row, _ in store.chunks(["ana/personal"])]
    store.set_vectors([(rows[0], [1.0, 0.0]), (rows[1], [0.6, 0.8])], "m")
    store.set_vectors([(rows[0], [0.0, 1.0, 0.0])], "other")
    best = store.vector_search([0.0, 1.0], "m", ["ana/personal"], 2)
    assert [p.chunk.ordinal for p in best] == [1, 0] and best[0].score == pytest.approx(0.8)
    assert store.missing_vectors("other", ["ana/personal"]) == [
        (rows[1], store.chunks(["ana/personal"])[1][1].text)
    ]


def test_folder_and_refusals(
    kb: Knowledge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    write(folder, "a.md", PROTOCOL)
    write(folder, "b.txt", "Plain notes about impedance below 10 kilo-ohm.")
    (folder / "scan.pdf").write_bytes(tiny_pdf([b"0 0 m 10 10 l S"]))
    (folder / "x.png").write_bytes(b"\x89PNG")
    results = {r.name: r for r in kb.add("ana", folder, "lab")}
    assert {n: r.status for n, r in results.items()} == {
        "a.md": "added", "b.txt": "added", "scan.pdf": "refused", "x.png": "refused"
    }  # fmt: skip
    assert "no text layer" in results["scan.pdf"].reason
    assert {d.collection for d in kb.documents("ana")} == {"ana/lab"}
    monkeypatch.setenv("BRAINCHAT_KNOWLEDGE_MAX_MB", "1")
    big = write(tmp_path, "big.txt", "impedance " * 120_000)
    [refused] = kb.add("ana", big)
    assert refused.status == "refused" and "BRAINCHAT_KNOWLEDGE_MAX_MB" in refused.reason
    with pytest.raises(KnowledgeError, match="collection name"):
        kb.add("ana", folder, "../bob")
    with pytest.raises(KnowledgeError, match="does not exist"):
        kb.add("ana", tmp_path / "missing.md")


def test_one_connection_per_thread(kb: Knowledge, tmp_path: Path) -> None:
    kb.add("ana", write(tmp_path, "p.md", PROTOCOL))
    seen: list[int] = []

    def read() -> None:
        seen.append(len(kb.documents("ana")))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [1, 1, 1, 1]


def test_open_default_uses_the_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("BRAINCHAT_STATE_DIR", str(tmp_path / "st"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    store = open_default()
    assert isinstance(store, SqliteStore) and store.path == tmp_path / "st" / DB_FILE


def test_cached_vectors_follow_writes_from_another_process(kb: Knowledge, tmp_path: Path) -> None:
    store = kb.store
    assert isinstance(store, SqliteStore)
    kb.add("ana", write(tmp_path, "p.md", PROTOCOL))
    rows = [row for row, _ in store.chunks(["ana/personal"])]
    store.set_vectors([(rows[0], [1.0, 0.0]), (rows[1], [0.0, 1.0])], "m")
    assert store.vector_search([1.0, 0.1], "m", ["ana/personal"], 1)[0].chunk.ordinal == 0
    other = SqliteStore(store.path)  # another connection, as another process has
    other.set_vectors([(rows[0], [0.0, 1.0]), (rows[1], [1.0, 0.0])], "m")
    assert store.vector_search([1.0, 0.1], "m", ["ana/personal"], 1)[0].chunk.ordinal == 1
    other.close()


def test_added_documents_are_embedded_once_over_http(scripted_server: Any, tmp_path: Path) -> None:
    import json

    from brainchat.knowledge.embed import VARIABLE, embedder_from_env

    body = {"provider": "openai-compatible", "model": "emb", "api_key": "k"}
    spec = json.dumps(body | {"base_url": scripted_server.base_url})
    embedder = embedder_from_env({VARIABLE: spec})
    kb = Knowledge(SqliteStore(tmp_path / DB_FILE), embedder)
    path = write(tmp_path, "p.md", PROTOCOL)
    [added] = kb.add("ana", path)
    assert added.status == "added" and added.notes == []
    assert sum(len(r) for r in scripted_server.embedding_requests) == 2  # both passages
    assert kb.store.missing_vectors("emb", ["ana/personal"]) == []
    kb.add("ana", path)  # unchanged: nothing embedded again
    assert sum(len(r) for r in scripted_server.embedding_requests) == 2
    scripted_server.embedding_fault = 500
    [failed] = kb.add("ana", write(tmp_path / "zh", "zh.md", CHINESE))
    assert failed.status == "added" and "embeddings not made" in failed.notes[0]
    assert kb.search("ana", "带通滤波", 1)[0].chunk.heading == "实验规程"  # BM25 still finds it


def test_words_in_most_chunks_are_left_out_of_a_large_stores_query(tmp_path: Path) -> None:
    from brainchat.knowledge.model import Chunk, Document
    from brainchat.knowledge.sqlite_store import PRUNE_FROM

    store = SqliteStore(tmp_path / DB_FILE)
    n = PRUNE_FROM + 10
    texts = [f"the trial {i} of 的 session" + (" zebra" if i == 7 else "") for i in range(n)]
    doc = Document("d", "ana/personal", "ana", "n.md", "T", 0, 1, "s", 1.0, n)
    store.add_document(doc, [Chunk("d", i, t) for i, t in enumerate(texts)])
    assert store.search_terms(["the", "的", "zebra"]) == ["zebra"]
    assert store.search_terms(["the", "of", "的"]) == ["the", "of"]  # all common: two kept
    [hit] = store.text_search("what is the zebra of the session", ["ana/personal"], 1)
    assert hit.chunk.ordinal == 7
