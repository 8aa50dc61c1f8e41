"""The welcome's empty-data-folder check: right on small folders, bounded on large ones; folders
and errors named relative to the data folder, never by the server's own path."""

from __future__ import annotations

from pathlib import Path

from brainchat.eeg.io.paths import shown_folder, without_server_paths
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


def test_folders_and_errors_are_named_relative_to_the_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert shown_folder(data, data / "demo") == "the data folder's `demo/`"
    assert shown_folder(data, data) == "the data folder"
    assert shown_folder(data, tmp_path / "elsewhere") == "the folder `elsewhere`"
    error = (
        f"[Errno 13] Permission denied: '{data}/demo/sub-01.edf'; also {data}, "
        f"{tmp_path}/state/x.db and demo/sub-02.edf"
    )
    assert without_server_paths(error, data) == (
        "[Errno 13] Permission denied: 'demo/sub-01.edf'; also <data folder>, x.db and "
        "demo/sub-02.edf"
    )  # a relative path stays whole; one outside the data folder keeps only its last part
    assert without_server_paths(f"bad file {data}/a.fif here", None) == "bad file a.fif here"
