"""Attacks on the knowledge store (#41) at the service every way in goes through (the page,
the search_knowledge tool and `brainchat knowledge`): user B reaches for user A's document by
its id and by its collection's name, lists, searches, removes and re-shares it. B gets nothing
unless A shared the collection with B, and even then may read but not remove."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainchat.knowledge.limits import KnowledgeError
from brainchat.knowledge.service import Knowledge
from brainchat.knowledge.sqlite_store import DB_FILE, SqliteStore

SECRET = "# Unpublished results\n\nSubject 7 reached 93 percent with the zebrafinch pipeline.\n"


@pytest.fixture
def kb(tmp_path: Path) -> Knowledge:
    kb = Knowledge(SqliteStore(tmp_path / DB_FILE))
    (tmp_path / "secret.md").write_text(SECRET)
    kb.add("ana", tmp_path / "secret.md")
    kb.add("ana", tmp_path / "secret.md", "lab")
    return kb


def ana_doc(kb: Knowledge, collection: str = "ana/personal") -> str:
    [doc] = [d for d in kb.documents("ana") if d.collection == collection]
    return doc.id


def test_other_user_cannot_list_or_search(kb: Knowledge) -> None:
    assert len(kb.documents("ana")) == 2
    assert kb.documents("bob") == []
    assert kb.search("ana", "zebrafinch", 5)
    assert kb.search("bob", "zebrafinch", 5) == []
    # naming A's collections narrows B's search to nothing, it never widens it
    assert kb.search("bob", "zebrafinch", 5, collections=["ana/personal", "ana/lab"]) == []


def test_other_user_cannot_remove_by_id_and_learns_nothing(kb: Knowledge) -> None:
    doc_id = ana_doc(kb)
    with pytest.raises(KnowledgeError) as theirs:
        kb.remove("bob", doc_id)
    with pytest.raises(KnowledgeError) as missing:
        kb.remove("bob", "0123456789abcdef")
    # the same answer as for an id that does not exist (nothing tells B the id is real)
    assert str(theirs.value).replace(doc_id, "X") == str(missing.value).replace(
        "0123456789abcdef", "X"
    )
    assert len(kb.documents("ana")) == 2


def test_other_user_cannot_name_anothers_collection(kb: Knowledge, tmp_path: Path) -> None:
    (tmp_path / "bob.md").write_text("# Bob\n\nbob's text")
    for name in ("ana/personal", "../ana/lab", "ana/lab", "/lab"):
        with pytest.raises(KnowledgeError, match="collection name"):
            kb.add("bob", tmp_path / "bob.md", name)
        with pytest.raises(KnowledgeError, match="collection name"):
            kb.share("bob", name, ["bob", "eve"])
    kb.share("bob", "lab", ["bob"])  # B's own 'lab' is B's, not A's
    assert kb.documents("bob") == []
    assert kb.store.readers("ana/lab") == ["ana"]


def test_shared_collection_is_readable_not_removable(kb: Knowledge) -> None:
    assert kb.share("ana", "lab", ["bob"]) == ["bob"]
    assert [d.collection for d in kb.documents("bob")] == ["ana/lab"]
    [hit] = kb.search("bob", "zebrafinch", 5)
    assert hit.collection == "ana/lab"
    with pytest.raises(KnowledgeError, match="only its owner can remove it"):
        kb.remove("bob", ana_doc(kb, "ana/lab"))
    with pytest.raises(KnowledgeError, match="no document with id"):
        kb.remove("bob", ana_doc(kb))  # the unshared one stays invisible
    assert len(kb.documents("ana")) == 2
    kb.share("ana", "lab", [])  # unshared: gone from B's view again
    assert kb.documents("bob") == [] and kb.search("bob", "zebrafinch", 5) == []
    assert kb.readers("ana", "lab") == [] and kb.store.readers("ana/lab") == ["ana"]
