"""The welcome's empty-data-folder check: right on small folders, bounded on large ones."""

from __future__ import annotations

from pathlib import Path

from brainchat.ui.conversation import EMPTY_CHECK_ENTRIES, data_folder_empty


def test_the_empty_check_finds_a_recording_and_ignores_other_files(tmp_path: Path) -> None:
    assert data_folder_empty(tmp_path / "missing")
    assert data_folder_empty(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    assert data_folder_empty(tmp_path)
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "s1.EDF").write_bytes(b"")
    assert not data_folder_empty(tmp_path)


def test_the_empty_check_stops_after_a_bounded_number_of_entries(tmp_path: Path) -> None:
    """It runs on every new chat: a large folder with no recording among its first entries is
    taken as not empty (something is there) instead of walked to the end."""
    for i in range(EMPTY_CHECK_ENTRIES + 10):
        (tmp_path / f"{i:05}.txt").write_bytes(b"")
    assert not data_folder_empty(tmp_path)
    assert data_folder_empty(tmp_path, limit=EMPTY_CHECK_ENTRIES + 100)  # walked it all: none
