"""What a path to add holds: one document, a folder of them, or a zip of them, read one file at
a time and bounded.

A zip is bounded as eeg/uploads/upload_zip.py bounds uploads (that module is not imported:
knowledge/ sits beside eeg/): an entry naming an absolute path, climbing out with '..', a
symbolic link or an encrypted entry refuses the archive whole; the entry count is bounded
(BRAINCHAT_KNOWLEDGE_ZIP_ENTRIES), and so are the bytes unpacked, counted as they are read,
not as the archive declares them (a zip bomb stops at the bound). Hidden files and macOS
resource forks are passed over; folders are walked without following links."""

from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from brainchat.knowledge.limits import KnowledgeError, env_int
from brainchat.knowledge.parse import KINDS

MB = 2**20
READ = 1 << 20


@dataclass(frozen=True)
class Source:
    """One file to add: its name (relative inside a folder or zip), and its bytes or why not."""

    name: str
    data: bytes = b""
    refused: str = ""


def max_file_bytes() -> int:
    return env_int("BRAINCHAT_KNOWLEDGE_MAX_FILE_MB", 200) * MB


def too_big(name: str, size: int) -> str:
    return (
        f"'{name}' is {size / MB:,.1f} MB, more than the {max_file_bytes() // MB} MB allowed "
        "for one document; split it, or raise BRAINCHAT_KNOWLEDGE_MAX_FILE_MB"
    )


def hidden(parts: tuple[str, ...]) -> bool:
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def iter_sources(path: Path) -> Iterator[Source]:
    """The documents under `path`, one at a time; KnowledgeError if the path itself is refused."""
    path = Path(path)
    if path.is_dir():
        yield from folder_sources(path)
    elif path.is_file() and path.suffix.lower() == ".zip":
        yield from zip_sources(path)
    elif path.is_file():
        yield read_file(path, path.name)
    else:
        raise KnowledgeError(
            f"'{path}' does not exist (or is not a file or folder); check the path"
        )


def read_file(path: Path, name: str) -> Source:
    if path.suffix.lower() not in KINDS:
        return Source(name, refused=unsupported(name))
    size = path.stat().st_size
    if size > max_file_bytes():
        return Source(name, refused=too_big(name, size))
    return Source(name, path.read_bytes())


def unsupported(name: str) -> str:
    return (
        f"'{name}' is not a document type the knowledge store reads (allowed: "
        f"{', '.join(sorted(KINDS))})"
    )


def folder_sources(top: Path) -> Iterator[Source]:
    for folder, dirs, files in os.walk(top):  # os.walk does not follow folder links
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        for f in sorted(files):
            full = Path(folder) / f
            rel = full.relative_to(top).as_posix()
            if f.startswith(".") or full.is_symlink() or not full.is_file():
                continue
            if full.suffix.lower() == ".zip":
                yield Source(rel, refused=f"'{rel}': a zip inside a folder is not opened; add it")
                continue
            yield read_file(full, rel)


def entry_parts(name: str) -> tuple[str, ...]:
    text = name.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise KnowledgeError(f"the zip's entry '{name}' is an absolute path; the zip is refused")
    parts = tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))
    if ".." in parts:
        raise KnowledgeError(f"the zip's entry '{name}' climbs out with '..'; the zip is refused")
    return parts


def checked_entries(zf: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, str]]:
    """The document entries of a zip, after refusing a hostile one whole."""
    infos = zf.infolist()
    limit = env_int("BRAINCHAT_KNOWLEDGE_ZIP_ENTRIES", 2000)
    if len(infos) > limit:
        raise KnowledgeError(
            f"the zip holds {len(infos):,} entries, more than the {limit:,} allowed; split it, "
            "or raise BRAINCHAT_KNOWLEDGE_ZIP_ENTRIES"
        )
    chosen = []
    for info in infos:
        parts = entry_parts(info.filename)
        if stat.S_ISLNK(info.external_attr >> 16):
            raise KnowledgeError(f"the zip's entry '{info.filename}' is a symbolic link; refused")
        if info.flag_bits & 0x1:
            raise KnowledgeError(f"the zip's entry '{info.filename}' is encrypted; unzip it first")
        if not info.is_dir() and parts and not hidden(parts):
            chosen.append((info, "/".join(parts)))
    return chosen


def zip_sources(archive: Path) -> Iterator[Source]:
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise KnowledgeError(f"'{archive.name}' is not a readable zip ({exc}); check it") from None
    with zf:
        budget = env_int("BRAINCHAT_KNOWLEDGE_ZIP_MB", 1000) * MB
        for info, rel in checked_entries(zf):
            if PurePosixPath(rel).suffix.lower() not in KINDS:
                yield Source(rel, refused=unsupported(rel))
                continue
            if info.file_size > max_file_bytes():
                yield Source(rel, refused=too_big(rel, info.file_size))
                continue
            if info.file_size > budget:
                raise KnowledgeError(zip_bound(archive.name))
            data = read_entry(zf, info, min(budget, max_file_bytes()), archive.name, rel)
            budget -= len(data)
            yield Source(rel, data)


def zip_bound(name: str) -> str:
    return (
        f"'{name}' unpacks to more than BRAINCHAT_KNOWLEDGE_ZIP_MB allows (a zip bomb or a "
        "very large archive); split it, or raise BRAINCHAT_KNOWLEDGE_ZIP_MB"
    )


def read_entry(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, bound: int, name: str, rel: str
) -> bytes:
    """An entry's bytes, counted as read: past `bound` the zip is refused (its sizes lied)."""
    out = bytearray()
    try:
        with zf.open(info) as fh:
            while block := fh.read(READ):
                out += block
                if len(out) > bound:
                    raise KnowledgeError(zip_bound(name))
    except (zipfile.BadZipFile, OSError, EOFError) as exc:  # a CRC error: a lying entry
        raise KnowledgeError(
            f"'{name}': entry '{rel}' is damaged ({exc}); the zip is refused"
        ) from None
    return bytes(out)
