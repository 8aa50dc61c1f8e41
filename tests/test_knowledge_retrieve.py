"""Ranking (knowledge/retrieve.py): BM25 over words and CJK character pairs, dense vectors from
the scripted server's /v1/embeddings over real HTTP, reciprocal-rank fusion, and BM25 alone with
a note when the embeddings endpoint fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brainchat.knowledge.embed import VARIABLE, Embedder, embedder_from_env
from brainchat.knowledge.model import Chunk, Passage
from brainchat.knowledge.retrieve import RRF_K, fuse, index_vectors, rank, tokens
from brainchat.testing.scripted_server import ScriptedServer
from knowledge_stores import BACKENDS, document, open_store

MINE = ["ann/personal"]


@pytest.fixture(params=[b for b in BACKENDS if b != "postgres-float4"])
def store(request: pytest.FixtureRequest, embedded_pg: Any, tmp_path: Path) -> Iterator[Any]:
    for opened in open_store(request.param, embedded_pg, tmp_path):
        opened.add_document(*document("methods", "ann/personal",
            "Signals were band-pass filtered from 8 to 30 Hz with a zero-phase FIR filter.",
            "Epochs were cut from 0.5 to 2.5 seconds after the cue.",
            "Independent component analysis removed eye blinks."))  # fmt: skip
        opened.add_document(*document("zh", "ann/personal",
            "运动想象数据先做8到30赫兹的带通滤波，再截取提示后两秒的试次。",
            "独立成分分析去除了眨眼伪迹。"))  # fmt: skip
        opened.add_document(
            *document("other", "bob/personal", "Bob's filter settings: 1 to 40 Hz.")
        )
        yield opened


def embedder(server: ScriptedServer) -> Embedder:
    spec = {"provider": "openai-compatible", "model": "emb", "base_url": server.base_url}
    found = embedder_from_env({VARIABLE: json.dumps(spec | {"api_key": "k"})})
    assert found is not None
    return found


def test_tokens_split_words_and_chinese_runs() -> None:
    assert tokens("Band-pass 0.5 Hz") == ["band", "pass", "0.5", "hz"]
    assert tokens("带通滤波") == ["带", "通", "滤", "波", "带通", "通滤", "滤波"]


def test_bm25_ranks_the_answering_passage_first(store: Any) -> None:
    found = rank(store, "Which band-pass filter was used?", MINE, 3)
    assert found[0].chunk.doc_id == "methods" and found[0].chunk.ordinal == 0
    assert found[0].title == "Title methods" and found[0].chunk.page == 1
    assert found[0].score == pytest.approx(1 / (RRF_K + 1))  # the fused score
    assert [p.score for p in found] == sorted((p.score for p in found), reverse=True)
    assert found.note == ""
    assert all(p.collection == "ann/personal" for p in found)  # never Bob's


def test_a_chinese_query_finds_the_chinese_passage(store: Any) -> None:
    found = rank(store, "带通滤波的频率范围是多少？", MINE, 2)
    assert (found[0].chunk.doc_id, found[0].chunk.ordinal) == ("zh", 0)
    found = rank(store, "眨眼伪迹怎么去除", MINE, 1)
    assert (found[0].chunk.doc_id, found[0].chunk.ordinal) == ("zh", 1)


def test_nothing_shared_finds_nothing(store: Any) -> None:
    assert rank(store, "xylophone", MINE, 3) == []
    assert rank(store, "filter", [], 3) == []


def test_the_index_follows_added_and_removed_documents(store: Any) -> None:
    assert rank(store, "xylophone", MINE, 3) == []
    store.add_document(*document("new", "ann/personal", "A xylophone was played.", added=5.0))
    assert [p.chunk.doc_id for p in rank(store, "xylophone", MINE, 3)] == ["new"]
    store.remove_document("new")
    assert rank(store, "xylophone", MINE, 3) == []


def test_reciprocal_rank_fusion_orders_by_the_sum_of_reciprocal_ranks() -> None:
    a, b, c = (Passage(Chunk("d", i, t), "T", "x/personal", 9.0) for i, t in enumerate("abc"))
    fused = fuse([[a, b, c], [c, a]])
    assert [p.chunk.text for p in fused] == ["a", "c", "b"]  # a: 1/61+1/62, c: 1/63+1/61
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[2].score == pytest.approx(1 / 62)


def test_dense_vectors_from_the_endpoint_join_the_ranking(
    store: Any, scripted_server: ScriptedServer
) -> None:
    emb = embedder(scripted_server)
    assert index_vectors(store, emb, MINE) == 5
    assert index_vectors(store, emb, MINE) == 0  # only what is missing
    # "filtering" shares no word with any passage, only character pairs (the scripted vectors)
    assert rank(store, "filtering", MINE, 3) == []
    found = rank(store, "filtering", MINE, 3, emb)
    assert found and found[0].chunk.doc_id == "methods" and found[0].chunk.ordinal == 0
    assert found.note == ""
    assert scripted_server.embedding_requests[-1] == ["filtering"]


def test_a_failing_endpoint_leaves_bm25_alone_with_a_note(
    store: Any, scripted_server: ScriptedServer
) -> None:
    scripted_server.embedding_fault = 500
    found = rank(store, "band-pass filter", MINE, 2, embedder(scripted_server))
    assert found[0].chunk.doc_id == "methods"
    assert "BM25 alone" in found.note and "HTTP 500" in found.note


async def test_the_tool_says_when_retrieval_fell_back_to_bm25_alone(
    store: Any, scripted_server: ScriptedServer
) -> None:
    """The note travels from the ranking through the service to the search_knowledge result the
    model reads: it knows the dense half did not run."""
    from brainchat.knowledge.service import Knowledge
    from brainchat.knowledge.tool import make_knowledge_tool

    scripted_server.embedding_fault = 500
    tool = make_knowledge_tool(Knowledge(store, embedder(scripted_server)), "ann")
    text = await tool.ainvoke({"query": "band-pass filter", "k": 2})
    assert "[1]" in text and "BM25 alone" in text and "HTTP 500" in text, text
