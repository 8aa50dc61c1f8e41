"""The downloaded model files: `<state folder>/models/`, one GGUF file each, beside a small
`<file>.verified.json` written once its bytes were hashed (sha256, size, modification time, where
it came from). A file whose size or time changed since is no longer taken as verified.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from brainchat.localmodels.catalog import CatalogModel, entries, find

FOLDER = "models"
SIDECAR = ".verified.json"
PART = ".part"
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}\.gguf$")


class NotInstalled(LookupError):
    """No installed model by that name; the message lists those there are."""


@dataclass(frozen=True)
class InstalledModel:
    """One model file in the folder: its sha256 (None until verified) and its catalog entry."""

    path: Path
    size_bytes: int
    sha256: str | None
    model: CatalogModel | None
    source: str = ""

    @property
    def name(self) -> str:
        return self.model.id if self.model is not None else self.path.name


def models_folder(folder: Path | None = None) -> Path:
    """Where models live: `folder`, else `<state folder>/models` (BRAINCHAT_STATE_DIR)."""
    if folder is not None:
        return Path(folder)
    from brainchat.store.config import load_store_config

    return load_store_config().state_dir / FOLDER


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR)


def record(path: Path, sha256: str, source: str) -> None:
    """Note that `path` was hashed to `sha256` (written aside, then moved into place)."""
    st = path.stat()
    note = {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "source": source}
    tmp = sidecar(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(note, indent=1), encoding="utf-8")
    os.replace(tmp, sidecar(path))


def verified(path: Path) -> tuple[str, str] | None:
    """(sha256, source) of a file hashed before and unchanged since; None otherwise."""
    try:
        note = json.loads(sidecar(path).read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict) or (note.get("size"), note.get("mtime_ns")) != (
        st.st_size,
        st.st_mtime_ns,
    ):
        return None
    return str(note.get("sha256", "")), str(note.get("source", ""))


def by_sha(sha256: str | None) -> CatalogModel | None:
    return next((m for m in entries() if sha256 and m.sha256 == sha256), None)


def installed(folder: Path | None = None) -> list[InstalledModel]:
    """The model files in the folder, catalog ones first, then by name."""
    where = models_folder(folder)
    if not where.is_dir():
        return []
    found = []
    for path in sorted(where.glob("*.gguf")):
        if not path.is_file():
            continue
        note = verified(path)
        sha = note[0] if note else None
        found.append(
            InstalledModel(path, path.stat().st_size, sha, by_sha(sha), note[1] if note else "")
        )
    return sorted(found, key=lambda m: (m.model is None, m.path.name.lower()))


def path_of(model_id: str, folder: Path | None = None) -> Path | None:
    """The verified file of a catalog model (whatever its file name), if present."""
    model = find(model_id)
    return None if model is None else present(model, folder)


def present(model: CatalogModel, folder: Path | None = None) -> Path | None:
    """The verified file holding this entry's bytes, if any."""
    for item in installed(folder):
        if item.sha256 == model.sha256:
            return item.path
    return None


def lookup(name: str, folder: Path | None = None) -> InstalledModel:
    """The installed model a user names: a catalog id, a file name, or a file name without .gguf."""
    key = name.strip().lower().removesuffix(".gguf")
    items = installed(folder)
    for item in items:
        names = {item.path.name.lower().removesuffix(".gguf"), item.name.lower()}
        if item.model is not None:
            names.add(item.model.filename.lower().removesuffix(".gguf"))
        if key in names:
            return item
    there = ", ".join(i.name for i in items) or "none"
    raise NotInstalled(
        f"no installed model named {name!r} in {models_folder(folder)} (installed: {there}); "
        "`brainchat models list` shows them"
    )


def remove(name: str, folder: Path | None = None) -> Path:
    """Delete an installed model, its verification note and any partial download of it."""
    item = lookup(name, folder)
    for extra in item.path.parent.glob(glob_escape(item.path.name) + ".*" + PART):
        extra.unlink(missing_ok=True)
    sidecar(item.path).unlink(missing_ok=True)
    (item.path.parent / ".locks" / (item.path.name + ".lock")).unlink(missing_ok=True)
    item.path.unlink(missing_ok=True)
    return item.path


def partials(folder: Path | None = None) -> list[Path]:
    """Unfinished downloads (resumed by the next pull of the same model)."""
    where = models_folder(folder)
    return sorted(where.glob("*" + PART)) if where.is_dir() else []


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)
