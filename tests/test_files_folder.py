"""Each process's own Chainlit files folder: another process's folder is removed only once its
owner is gone (its lock is free); a live one, or one without a lock file, is never touched."""

from __future__ import annotations

import fcntl
from pathlib import Path

from brainchat.ui.files_folder import LOCK, PREFIX, remove_abandoned


def folder(base: Path, name: str, lock: bool = True) -> Path:
    out = base / f"{PREFIX}{name}"
    out.mkdir()
    (out / "upload.edf").write_bytes(b"x")
    if lock:
        (out / LOCK).touch()
    return out


def test_only_folders_whose_owner_is_gone_are_removed(tmp_path: Path) -> None:
    gone, live, unknown = (
        folder(tmp_path, "1-a"),
        folder(tmp_path, "2-b"),
        folder(tmp_path, "3-c", lock=False),
    )
    other = tmp_path / "0123-session"  # a session folder of an older Chainlit layout
    other.mkdir()
    with open(live / LOCK) as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as its running process holds it
        assert remove_abandoned(tmp_path) == [gone]
    assert not gone.exists()
    assert (live / "upload.edf").is_file() and (unknown / "upload.edf").is_file() and other.is_dir()
