"""Passages for the knowledge store (#41): about 800-1,200 characters, cut at paragraph and
sentence boundaries, never across pages, carrying the heading; Chinese text without spaces too."""

from __future__ import annotations

from brainchat.knowledge.chunk import LIMIT, chunk_sections
from brainchat.knowledge.model import Section


def test_passages_are_sized_and_cut_at_sentences() -> None:
    sentences = [f"Sentence number {i} says something about filtering EEG." for i in range(80)]
    text = " ".join(sentences[:40]) + "\n\n" + " ".join(sentences[40:])
    chunks = chunk_sections("d", [Section(text, 3, "Methods")])
    assert len(chunks) >= 3
    assert all(len(c.text) <= LIMIT for c in chunks)
    assert all(len(c.text) >= 500 for c in chunks[:-1])
    assert all(c.text.endswith(".") for c in chunks)  # cut at a sentence's end
    assert {(c.page, c.heading, c.doc_id) for c in chunks} == {(3, "Methods", "d")}
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    joined = " ".join(c.text for c in chunks)
    assert all(s in joined for s in sentences)  # nothing lost


def test_never_across_pages() -> None:
    chunks = chunk_sections("d", [Section("Short page one.", 1), Section("Short page two.", 2)])
    assert [(c.page, c.text) for c in chunks] == [(1, "Short page one."), (2, "Short page two.")]


def test_chinese_without_spaces() -> None:
    sentence = "运动想象范式中常用八到三十赫兹的带通滤波以保留μ和β节律。"
    chunks = chunk_sections("d", [Section(sentence * 100, 1)])
    assert len(chunks) >= 2 and all(len(c.text) <= LIMIT for c in chunks)
    assert all(c.text.endswith("。") for c in chunks)
    assert " " not in "".join(c.text for c in chunks)  # no spaces put between characters
    run = "无标点的长文本" * 400  # no sentence marks at all: cut by length
    chunks = chunk_sections("d", [Section(run, 1)])
    assert "".join(c.text for c in chunks) == run and all(len(c.text) <= LIMIT for c in chunks)


def test_empty_sections_give_nothing() -> None:
    assert chunk_sections("d", [Section("  \n\n ", 1)]) == []
