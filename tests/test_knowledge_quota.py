"""A user's documents count against their disk quota (BRAINCHAT_USER_QUOTA_MB) with the files
brainchat wrote for them (#41): a document that would pass it is refused with the quota's message,
a folder of documents stops at the quota, and uploads see the documents' bytes as used."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from brainchat.knowledge.service import Knowledge
from brainchat.knowledge.sqlite_store import DB_FILE, SqliteStore
from brainchat.ui import knowledge as page
from brainchat.ui import knowledge_store
from brainchat.ui.upload_route import quota_used

KB = 1024


def doc(path: Path, title: str, size: int) -> Path:
    words = " ".join(f"word{i}" for i in range(size // 8))
    path.write_text(f"# {title}\n\n{words[: size - len(title) - 4]}\n")
    return path


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Knowledge:
    service = Knowledge(SqliteStore(tmp_path / DB_FILE))
    monkeypatch.setattr(knowledge_store, "_service", service)
    return service


def test_the_room_check_refuses_the_file_that_would_pass_it_and_the_rest_of_a_folder(
    kb: Knowledge, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        doc(folder / f"n{i}.md", f"Note {i}", 40 * KB)
    asked: list[tuple[str, int]] = []

    def room(name: str, extra: int) -> str | None:
        asked.append((name, extra))
        used = kb.used_bytes("ana")
        return f"{name} does not fit" if used + extra > 100 * KB else None

    results = kb.add("ana", folder, room=room)
    assert [r.status for r in results] == ["added", "added", "refused"]
    assert results[2].reason == "n2.md does not fit"
    assert len(kb.documents("ana")) == 2
    assert [name for name, _ in asked] == ["n0.md", "n1.md", "n2.md"]  # asked before each file
    assert all(39 * KB < extra < 41 * KB for _, extra in asked)  # with the bytes it adds


def test_documents_share_the_users_quota_with_their_files(kb: Knowledge, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "uploads").mkdir(parents=True)
    (data / "uploads" / "rec.edf").write_bytes(b"x" * 700 * KB)
    settings = SimpleNamespace(user_quota_mb=1, data_dir=str(data))
    room = page.quota_room(settings, "ana")  # type: ignore[arg-type]
    assert room is not None
    big = kb.add("ana", doc(tmp_path / "big.md", "Big", 400 * KB), room=room)
    assert big[0].status == "refused"
    assert "disk quota of 1 MB" in big[0].reason and "BRAINCHAT_USER_QUOTA_MB" in big[0].reason
    small = kb.add("ana", doc(tmp_path / "small.md", "Small", 200 * KB), room=room)
    assert small[0].status == "added"
    # the next check counts the document just added: 700 + 200 + 200 KB is past 1 MB
    again = kb.add("ana", doc(tmp_path / "more.md", "More", 200 * KB), room=room)
    assert again[0].status == "refused"
    # and an upload's check counts the documents as used
    assert quota_used("ana", data) >= 900 * KB
    assert quota_used("bob", data) < 800 * KB  # bob's documents are his own (none)


def test_no_quota_no_room_check(kb: Knowledge, tmp_path: Path) -> None:
    settings = SimpleNamespace(user_quota_mb=0, data_dir=str(tmp_path))
    assert page.quota_room(settings, "ana") is None  # type: ignore[arg-type]
