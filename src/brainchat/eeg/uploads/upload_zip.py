"""Unpacking an uploaded .zip safely: bounded, EEG files only, nothing outside its folder.

A zip with an entry that names an absolute path, climbs out with '..', is a symbolic link or is
encrypted is refused whole (such an archive is broken or hostile), and nothing of it is kept.
The entry count and the unpacked size are bounded: each entry's declared size is checked
against what is left of the bound before it is unpacked. A declared size can lie, but zipfile
stops an entry at its declared size and then fails its CRC check, so a lying entry is refused
(tests/security/test_upload_paths.py); the bytes written are counted as well, a second guard
that does not depend on that zipfile behaviour. A zip bomb stops at the bound.
"""

from __future__ import annotations

import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from brainchat.eeg.uploads.upload_names import EEG_EXTENSIONS, extension, safe_folder, safe_name

CHUNK = 1 << 20


class UnsafeArchive(Exception):
    """The archive is refused whole; the message says why."""


@dataclass
class Unpacked:
    files: list[tuple[str, Path]] = field(default_factory=list)  # (relative name, staged file)
    ignored: list[str] = field(default_factory=list)  # entries that are not EEG files


def entry_parts(name: str) -> tuple[str, ...]:
    """The folder parts and file name of an entry, or UnsafeArchive if it leaves its folder."""
    text = name.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise UnsafeArchive(f"entry '{name}' is an absolute path")
    parts = tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))
    if ".." in parts:
        raise UnsafeArchive(f"entry '{name}' climbs out of the archive's folder with '..'")
    return parts


def unpack(archive: Path, into: Path, max_entries: int, max_bytes: int, why: str = "") -> Unpacked:
    """Extract the EEG files of `archive` under `into` (a fresh folder); raise UnsafeArchive.

    `why`: the reason given when `max_bytes` is reached, if not the bound for one zip (the
    user's disk quota)."""
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UnsafeArchive(f"not a readable zip archive ({exc})") from None
    out = Unpacked()
    with zf:
        infos = zf.infolist()
        if len(infos) > max_entries:
            raise UnsafeArchive(
                f"it holds {len(infos)} entries, more than the {max_entries} allowed in one zip"
            )
        chosen = []
        for info in infos:
            parts = entry_parts(info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise UnsafeArchive(f"entry '{info.filename}' is a symbolic link")
            if info.flag_bits & 0x1:
                raise UnsafeArchive(f"entry '{info.filename}' is encrypted")
            if info.is_dir() or not parts:
                continue
            if any(p.startswith(".") or p == "__MACOSX" for p in parts):
                out.ignored.append(info.filename)  # macOS resource forks, hidden files
            elif extension(parts[-1]) not in EEG_EXTENSIONS:
                out.ignored.append(info.filename)
            else:
                chosen.append((info, parts))
        budget = max_bytes
        for info, parts in chosen:
            rel = "/".join([*(safe_folder(p) for p in parts[:-1]), safe_name(parts[-1])])
            target = into / rel
            if target.exists():
                raise UnsafeArchive(f"two entries have the same name once made safe: '{rel}'")
            target.parent.mkdir(parents=True, exist_ok=True)
            budget -= _copy_entry(zf, info, target, budget, why or _too_big(max_bytes))
            out.files.append((rel, target))
    return out


def _copy_entry(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, left: int, why: str
) -> int:
    """Write one entry, counting the bytes; raise UnsafeArchive(why) past the bound."""
    if info.file_size > left:
        raise UnsafeArchive(why)
    written = 0
    try:
        with zf.open(info) as src, target.open("xb") as dst:
            while chunk := src.read(CHUNK):
                written += len(chunk)
                if written > left:
                    raise UnsafeArchive(why)
                dst.write(chunk)
    except (zipfile.BadZipFile, EOFError, NotImplementedError, OSError) as exc:
        raise UnsafeArchive(f"entry '{info.filename}' could not be read ({exc})") from None
    return written


def _too_big(cap: int) -> str:
    return (
        f"it unpacks to more than {cap / 2**20:,.0f} MB (the bound for one zip: 4 x the upload "
        "limit BRAINCHAT_UPLOAD_MAX_MB)"
    )
