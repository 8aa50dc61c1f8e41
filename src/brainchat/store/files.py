"""Stored elements (plots, images) as files in a local folder, keyed like an object store."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import quote


class LocalFiles:
    """Object keys ("<user id>/<element id>/<name>") map to files under `root`, one per key.

    Each part of a key is percent-encoded, so no key can name a path outside the folder.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        parts = [p for p in key.split("/") if p]
        if not parts:
            raise ValueError("empty object key")
        safe = [quote(p, safe=" -_@+,=") for p in parts]
        safe = [p if p not in (".", "..") else p.replace(".", "%2E") for p in safe]
        return self.root.joinpath(*safe)

    def write(self, key: str, data: bytes) -> Path:
        """Write atomically: a reader sees the old file or the new one, never half of it."""
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
        return path

    def read(self, key: str) -> bytes | None:
        path = self.path_for(key)
        return path.read_bytes() if path.is_file() else None

    def delete(self, key: str) -> bool:
        path = self.path_for(key)
        if not path.is_file():
            return False
        path.unlink()
        self._prune(path.parent)
        return True

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty, up to the root."""
        root = self.root.resolve()
        while folder.resolve() != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
