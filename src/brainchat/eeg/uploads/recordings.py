"""One user's recordings: what is in their data folder, where each came from, and removing one.

Each recording is named relative to the data folder, sized with its companion files (a
BrainVision header's data and marker files, an EEGLAB .set's .fdt) and placed: uploaded (in
which conversation, when: the uploads index), the demo set, a public data set fetched, or a file
put in the folder by hand. Removing takes only a name this listing gives, resolved inside the
data folder: a name that leads elsewhere (another user's folder, '..', a link) is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from brainchat.eeg.io.paths import EegWalk, existing_data_file, file_format
from brainchat.eeg.uploads.upload_index import UPLOADS, Origin, forget, read_index

Kind = Literal["upload", "demo", "fetched", "folder"]
MAX_SHOWN = 200  # recordings one listing returns


class NotRemoved(Exception):
    """The recording was not removed; the message says why (English, for the log and tests)."""


@dataclass(frozen=True)
class Row:
    name: str  # the file a reader opens, relative to the data folder
    files: tuple[str, ...]  # it and its companions, relative to the data folder
    size: int  # bytes, all files together
    kind: Kind
    origin: Origin | None = None  # for an upload: its conversation and time, when noted


def _kind(name: str) -> Kind:
    top = name.split("/", 1)[0]
    return (
        "upload"
        if top == UPLOADS
        else "demo"
        if top == "demo"
        else ("fetched" if top == "public" else "folder")
    )


def companions(path: Path) -> list[Path]:
    """The files a recording reads besides itself, where they are beside it."""
    fmt = file_format(path)
    found: list[Path] = []
    if fmt == "vhdr":
        from brainchat.eeg.io.vhdr import HeaderError, header_refs

        try:
            refs = header_refs(path)
        except (HeaderError, OSError):
            refs = []
        found = [path.parent / n for _, n in refs if n and "/" not in n and "\\" not in n]
    elif fmt == "set":
        found = [path.with_suffix(".fdt")]
    return [p for p in found if p.is_file() and not p.is_symlink()]


def list_recordings(data_dir: Path, limit: int = MAX_SHOWN) -> list[Row]:
    """The recordings in the data folder, uploads newest first, then the others by name."""
    root = Path(data_dir).resolve()
    if not root.is_dir():
        return []
    index = read_index(root)
    rows = []
    for rel, path in EegWalk(root):
        name = rel.as_posix()
        files = [path, *companions(path)]
        try:
            size = sum(p.stat().st_size for p in files)
        except OSError:
            continue
        named = tuple(p.relative_to(root).as_posix() for p in files)
        rows.append(Row(name, named, size, _kind(name), index.get(name)))
        if len(rows) >= limit:
            break
    rows.sort(key=lambda r: (r.kind != "upload", -(r.origin.at if r.origin else 0), r.name))
    return rows


def remove_recording(data_dir: Path, name: str) -> Row:
    """Delete the recording `name` (as `list_recordings` names it) with its companion files;
    NotRemoved when the name is not one of the folder's recordings."""
    root = Path(data_dir).resolve()
    try:
        path = existing_data_file(root, name)  # refuses a name outside the data folder
    except Exception as exc:  # noqa: BLE001 - the reason goes back to the caller
        raise NotRemoved(str(exc)) from None
    row = next((r for r in list_recordings(root, limit=10**9) if r.name == name), None)
    if row is None or path != (root / row.name).resolve():
        raise NotRemoved(f"'{name}' is not one of the recordings in the data folder")
    for rel in row.files:
        (root / rel).unlink(missing_ok=True)
    if row.kind == "upload":
        try:
            forget(root, [row.name])
        except OSError:
            pass  # the file is gone; its stale entry names nothing
    return row
