"""Where each upload came from: `<data folder>/uploads/.index.json`, one entry per recording.

An entry names the conversation (thread id) the file was uploaded in, when, and the name the
browser gave it. Written whole to a temporary file and renamed over the old one (a reader never
sees half of it), under an exclusive lock on the uploads folder, so two uploads of one user never lose each other's
entries. A missing or damaged index reads as empty: provenance is shown, never relied on for
safety (what a conversation may list comes from its own upload list).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INDEX = ".index.json"
UPLOADS = "uploads"


@dataclass(frozen=True)
class Origin:
    """One upload: its conversation (thread id, '' when unknown), when, and the browser's name."""

    thread: str
    at: float
    shown: str = ""


def read_index(data_dir: Path) -> dict[str, Origin]:
    """file (relative to the data folder) -> where it came from."""
    try:
        raw = json.loads((Path(data_dir) / UPLOADS / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for name, entry in (raw if isinstance(raw, dict) else {}).items():
        if isinstance(entry, dict):
            out[str(name)] = Origin(
                str(entry.get("thread") or ""),
                float(entry.get("at") or 0),
                str(entry.get("shown") or ""),
            )
    return out


def record(data_dir: Path, uploaded: Iterable[tuple[str, str]], thread: str) -> None:
    """Note (file, name the browser gave) pairs as uploaded in `thread` now; a file already
    noted keeps its first origin (the same content uploaded again is reused, not new)."""
    now = time.time()

    def add(index: dict[str, Any]) -> None:
        for name, shown in uploaded:
            index.setdefault(name, {"thread": thread, "at": now, "shown": shown})

    _update(data_dir, add)


def forget(data_dir: Path, names: Iterable[str]) -> None:
    """Drop the entries of removed files."""
    gone = set(names)
    _update(data_dir, lambda index: [index.pop(n, None) for n in gone])


def _update(data_dir: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    folder = Path(data_dir) / UPLOADS
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder):
        try:
            index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            index = {}
        if not isinstance(index, dict):
            index = {}
        change(index)
        fd, tmp = tempfile.mkstemp(prefix=".index-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(index, f, ensure_ascii=False, indent=1)
            os.replace(tmp, folder / INDEX)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The uploads folder itself is the lock (flock on its descriptor): no lock file to leave."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
