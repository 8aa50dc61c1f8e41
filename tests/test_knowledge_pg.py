"""The KnowledgeStore contract, on every backend (tests/knowledge_stores.py): documents, delete
cascade, collections filter, sharing, full-text search (Chinese too) and vectors."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge_stores import BACKENDS, document, open_store


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, embedded_pg: Any, tmp_path: Path) -> Iterator[Any]:
    yield from open_store(request.param, embedded_pg, tmp_path)


def test_documents_are_listed_newest_first_per_collection(store: Any) -> None:
    store.add_document(*document("a", "ann/personal", "alpha", added=1.0))
    store.add_document(*document("b", "ann/personal", "beta", "gamma", added=2.0))
    store.add_document(*document("c", "bob/personal", "delta", added=3.0))
    assert [d.id for d in store.documents(["ann/personal"])] == ["b", "a"]
    assert store.documents(["ann/personal"])[0].chunks == 2
    assert [d.id for d in store.documents(["ann/personal", "bob/personal"])] == ["c", "b", "a"]
    assert store.documents([]) == []
    assert store.find_sha("ann/personal", "sha-a").id == "a"
    assert store.find_sha("bob/personal", "sha-a") is None


def test_removing_a_document_removes_its_chunks_and_vectors(store: Any) -> None:
    store.add_document(*document("a", "ann/personal", "alpha wave", "beta wave"))
    store.add_document(*document("b", "ann/personal", "theta wave"))
    rows = store.chunks(["ann/personal"])
    store.set_vectors([(row, [1.0, 0.0]) for row, _ in rows], "m")
    assert store.remove_document("a") is True
    assert store.remove_document("a") is False
    assert [c.doc_id for _, c in store.chunks(["ann/personal"])] == ["b"]
    assert [p.chunk.doc_id for p in store.text_search("wave", ["ann/personal"], 10)] == ["b"]
    found = store.vector_search([1.0, 0.0], "m", ["ann/personal"], 10)
    assert [p.chunk.doc_id for p in found] == ["b"]


def test_replacing_a_document_replaces_its_chunks(store: Any) -> None:
    store.add_document(*document("a", "ann/personal", "old text"))
    store.add_document(*document("a", "ann/personal", "new words", "more"))
    assert [c.text for _, c in store.chunks(["ann/personal"])] == ["new words", "more"]
    assert store.text_search("old", ["ann/personal"], 5) == []


def test_every_read_keeps_to_the_collections_asked(store: Any) -> None:
    store.add_document(*document("a", "ann/personal", "secret alpha protocol"))
    store.add_document(*document("b", "bob/personal", "secret alpha protocol"))
    for rows in (
        [c for _, c in store.chunks(["bob/personal"])],
        [p.chunk for p in store.text_search("secret alpha", ["bob/personal"], 10)],
        [p.chunk for p in store.vector_search([1.0], "m", ["bob/personal"], 10)],
    ):
        assert all(c.doc_id == "b" for c in rows)
    store.set_vectors(
        [(row, [1.0]) for row, _ in store.chunks(["ann/personal", "bob/personal"])], "m"
    )
    found = store.vector_search([1.0], "m", ["bob/personal"], 10)
    assert [(p.chunk.doc_id, p.collection) for p in found] == [("b", "bob/personal")]
    assert store.text_search("secret", [], 10) == []


def test_sharing_replaces_the_readers(store: Any) -> None:
    store.share("ann/lab", ["bob", "cy"])
    assert store.readers("ann/lab") == ["bob", "cy"]
    store.share("ann/lab", ["cy"])
    assert store.readers("ann/lab") == ["cy"]
    assert store.shared_with("bob") == [] and store.shared_with("cy") == ["ann/lab"]


def test_full_text_search_ranks_and_reads_chinese(store: Any) -> None:
    store.add_document(*document("en", "ann/personal", "a band-pass filter from 8 to 30 Hz",
                                 "epochs from 0 to 4 seconds"))  # fmt: skip
    store.add_document(*document("zh", "ann/personal", "运动想象实验使用8到30赫兹的带通滤波器",
                                 "每个试次截取四秒"))  # fmt: skip
    best = store.text_search("filter Hz", ["ann/personal"], 3)
    assert best[0].chunk.text.startswith("a band-pass filter")
    assert best[0].title == "Title en" and best[0].chunk.page == 1 and best[0].score > 0
    zh = store.text_search("带通滤波", ["ann/personal"], 3)
    assert zh and zh[0].chunk.doc_id == "zh" and zh[0].chunk.ordinal == 0
    assert store.text_search("!!!", ["ann/personal"], 3) == []


def test_vectors_are_found_by_cosine_per_model(store: Any) -> None:
    store.add_document(*document("a", "ann/personal", "one", "two", "three"))
    rows = [row for row, _ in store.chunks(["ann/personal"])]
    assert [r for r, _ in store.missing_vectors("m", ["ann/personal"])] == rows
    store.set_vectors(list(zip(rows, ([1.0, 0.0], [0.6, 0.8], [0.0, 1.0]), strict=True)), "m")
    store.set_vectors([(rows[0], [0.0, 1.0])], "other")
    assert store.missing_vectors("m", ["ann/personal"]) == []
    assert [r for r, _ in store.missing_vectors("other", ["ann/personal"])] == rows[1:]
    found = store.vector_search([0.0, 2.0], "m", ["ann/personal"], 2)
    assert [p.chunk.text for p in found] == ["three", "two"]
    assert found[0].score == pytest.approx(1.0, abs=1e-5)
    assert found[1].score == pytest.approx(0.8, abs=1e-5)
    assert store.vector_search([0.0, 1.0, 0.0], "m", ["ann/personal"], 2) == []  # other length


def test_without_pgvector_a_log_line_says_so(
    embedded_pg: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from brainchat.knowledge.pg_store import PgStore

    caplog.set_level(logging.INFO, "brainchat.knowledge.pg_store")
    with PgStore(embedded_pg.new_database("kn_nov"), pgvector=False) as store:
        assert not store.pgvector
    assert "no pgvector" in caplog.text
    # the embedded server's binaries include pgvector: the default uses it
    with PgStore(embedded_pg.new_database("kn_vec")) as store:
        assert store.pgvector


def test_an_unreachable_server_is_a_clear_error() -> None:
    from brainchat.knowledge.pg_store import PgStore

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectionError) as info:
        PgStore(f"postgresql+asyncpg://u:hunter2x@127.0.0.1:{port}/kn")
    said = str(info.value)
    assert "DATABASE_URL" in said and f"127.0.0.1:{port}" in said and "hunter2x" not in said
