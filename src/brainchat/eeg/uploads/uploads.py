"""Uploaded recordings into the user's data folder: checked, safely named, never overwriting.

Everything an upload brings is first written into a hidden staging folder inside
`<data folder>/uploads/` (same file system, so placing a file is one atomic link; where the file
system has no hard links, an exclusive copy), grouped into recordings (a BrainVision header with
its data and marker files, an EEGLAB .set with its .fdt), checked with MNE's reader, and only
then linked to its final name; the staging folder is removed whatever happens, so a refused or
interrupted upload leaves nothing behind.

A name already taken by a different file gets a numbered suffix (sub01-2.edf), and the same
content uploaded again reuses the file already there. A zip's recordings go to
`uploads/<zip name>/`, keeping its folders. Blocking work: callers run `receive` in a thread.
"""

from __future__ import annotations

import asyncio
import filecmp
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brainchat import i18n
from brainchat.eeg.uploads.upload_check import (
    RecordingInfo,
    Refusal,
    check_recording,
    rewrite_brainvision,
)
from brainchat.eeg.uploads.upload_names import (
    ACCEPTED,
    extension,
    numbered,
    safe_folder,
    safe_name,
    stem,
)
from brainchat.eeg.uploads.upload_sets import StagedSet, group_sets
from brainchat.eeg.uploads.upload_zip import UnsafeArchive, unpack

UPLOADS = "uploads"  # under the user's data folder
STAGING_PREFIX = ".upload-"
STALE_STAGING_S = 3600  # a staging folder untouched this long was left by a killed process
FORMATS_TEXT = (
    "EDF, BDF, GDF, FIF, EEGLAB (.set with its .fdt), BrainVision (.vhdr with its .vmrk and "
    ".eeg), or a .zip of them"
)


@dataclass(frozen=True)
class UploadLimits:
    max_mb: int = 500  # BRAINCHAT_UPLOAD_MAX_MB: one uploaded file (or zip)
    zip_entries: int = 500
    room: int | None = None  # bytes left under the user's quota (None: no quota)
    quota_mb: int = 0  # BRAINCHAT_USER_QUOTA_MB, named when `room` runs out

    @property
    def max_bytes(self) -> int:
        return self.max_mb * 2**20

    @property
    def zip_bytes(self) -> int:
        return 4 * self.max_bytes


@dataclass(frozen=True)
class Incoming:
    """One uploaded file: the name the browser gave, and where its bytes are now."""

    name: str
    path: Path


@dataclass(frozen=True)
class Accepted:
    name: str  # the file a reader opens, relative to the data folder
    files: tuple[str, ...]  # every stored file of the recording, relative to the data folder
    info: RecordingInfo
    reused: bool = False  # the same content was there already: nothing new written
    note: str = ""  # a rename the user should know about
    shown: str = ""  # the name the browser gave it

    def line(self) -> str:
        return f"{self.name} ({self.info.brief()})"


@dataclass(frozen=True)
class Refused:
    name: str
    reason: str


@dataclass
class UploadReport:
    accepted: list[Accepted] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # zip entries that are not EEG files


def receive(
    files: Sequence[Incoming], data_dir: Path, limits: UploadLimits, thread: str = ""
) -> UploadReport:
    """Check and place uploaded files under `<data_dir>/uploads/`; never raises for bad input.
    What was accepted is noted in the uploads index as uploaded in conversation `thread`."""
    report = UploadReport()
    root = Path(data_dir).resolve()
    target = root / UPLOADS
    target.mkdir(parents=True, exist_ok=True)
    if not target.resolve().is_relative_to(root):
        report.refused += [
            Refused(f.name, "the uploads folder leads outside the data folder") for f in files
        ]
        return report
    _remove_stale_staging(target)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=target))
    try:
        originals: dict[str, str] = {}  # staged name -> the name the browser gave
        folders = _stage(files, staging, limits, report, originals)
        recordings: list[StagedSet] = []
        for folder, dest in folders:
            sets, refused = group_sets(folder, dest, originals)
            recordings += sets
            report.refused += [Refused(name, reason) for name, reason in refused]
        for i, rec in enumerate(recordings):
            _accept(rec, staging / f"rec-{i}", target, root, report)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if report.accepted:
        from brainchat.eeg.uploads.upload_index import record

        try:
            record(root, [(a.name, a.shown) for a in report.accepted], thread)
        except OSError:
            pass  # provenance only: the files are in; the list of recordings shows less
    return report


def _remove_stale_staging(target: Path) -> None:
    """Remove staging folders a killed process left behind (untouched for an hour): a live
    upload writes into its folder as it goes, so only leftovers are this old."""
    cutoff = time.time() - STALE_STAGING_S
    for old in target.glob(STAGING_PREFIX + "*"):
        try:
            if old.is_dir() and not old.is_symlink() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


async def receive_listed(
    files: Sequence[Incoming],
    data_dir: Path,
    limits: UploadLimits,
    listed: list[str],
    thread: str = "",
) -> UploadReport:
    """`receive` in a worker thread, each accepted recording's line appended to `listed` (the
    study's upload list). A Stop while the files are checked cannot stop the thread, which
    goes on to place what passes: those files are still listed when it ends, so the agent
    knows of every file in the folder."""
    return await asyncio.shield(start_receive(files, data_dir, limits, listed, thread))


def start_receive(
    files: Sequence[Incoming],
    data_dir: Path,
    limits: UploadLimits,
    listed: list[str],
    thread: str = "",
) -> asyncio.Future[UploadReport]:
    """`receive` started in a worker thread; its accepted lines are appended to `listed` when it
    ends, whether or not anyone still waits for it."""
    work = asyncio.ensure_future(asyncio.to_thread(receive, files, data_dir, limits, thread))

    def list_them(done: asyncio.Future[UploadReport]) -> None:
        if not done.cancelled() and done.exception() is None:
            for a in done.result().accepted:  # most recent last; an upload again moves to the end
                if a.line() in listed:
                    listed.remove(a.line())
                listed.append(a.line())

    work.add_done_callback(list_them)
    return work


def _stage(
    files: Sequence[Incoming],
    staging: Path,
    limits: UploadLimits,
    report: UploadReport,
    originals: dict[str, str],
) -> list[tuple[Path, str]]:
    """Copy or unpack every upload into the staging folder; return (folder, destination) pairs."""
    loose = staging / "files"
    loose.mkdir()
    folders: list[tuple[Path, str]] = [(loose, "")]
    room = Room(limits, staging)
    for i, f in enumerate(files):
        try:
            size = f.path.stat().st_size
        except OSError:
            report.refused.append(Refused(f.name, "the uploaded file could not be read"))
            continue
        if size > limits.max_bytes:
            report.refused.append(Refused(f.name, too_big(size, limits.max_mb)))
            continue
        if size > room.left():
            report.refused.append(Refused(f.name, room.refusal(f"`{f.name}`")))
            continue
        ext = extension(f.name)
        if ext not in ACCEPTED:
            said = i18n.t("uploads.not_eeg", formats=FORMATS_TEXT)
            report.refused.append(Refused(f.name, said))
        elif ext == ".zip":
            box = staging / f"zip-{i}"
            dest = safe_folder(stem(safe_name(f.name)))
            cap = min(limits.zip_bytes, room.left())
            why = room.refusal("unpacking it") if cap < limits.zip_bytes else ""
            try:
                out = unpack(f.path, box / dest, limits.zip_entries, cap, why)
            except UnsafeArchive as exc:
                shutil.rmtree(box, ignore_errors=True)
                report.refused.append(Refused(f.name, f"zip refused, nothing kept from it: {exc}"))
                continue
            report.ignored += [f"{f.name}: {n}" for n in out.ignored]
            if not out.files:
                report.refused.append(
                    Refused(f.name, f"the zip holds no EEG files ({FORMATS_TEXT})")
                )
            folders += sorted(
                {(p.parent, p.parent.relative_to(box).as_posix()) for _, p in out.files}
            )
        else:
            name = safe_name(f.name)
            if (loose / name).exists():
                report.refused.append(
                    Refused(f.name, f"another file of this upload has the same name ('{name}')")
                )
                continue
            shutil.copyfile(f.path, loose / name)
            originals[name] = f.name
    return folders


class Room:
    """What the user's quota leaves for this upload, less what it has staged so far."""

    def __init__(self, limits: UploadLimits, staging: Path) -> None:
        self.limits, self.staging = limits, staging

    def left(self) -> int:
        if self.limits.room is None:
            return 2**62
        staged = sum(p.stat().st_size for p in self.staging.rglob("*") if p.is_file())
        return max(0, self.limits.room - staged)

    def refusal(self, what: str) -> str:
        from brainchat.eeg.uploads.quota import MB, over_quota

        used = self.limits.quota_mb * MB - self.left()
        return over_quota(self.limits.quota_mb, used, what)


def _accept(rec: StagedSet, box: Path, target: Path, root: Path, report: UploadReport) -> None:
    """Check one recording in its own staging box, then link it in under a free name."""
    try:
        box.mkdir()
        staged = [Path(shutil.move(p, box / p.name)) for p in (rec.main, *rec.companions)]
        staged = _rename_set(staged, stem(rec.main.name))  # companions take the header's name
        info = check_recording(staged[0])
        placed = _place(rec, staged, target / rec.dest, root, info)
    except Refusal as exc:
        report.refused.append(Refused(rec.shown, str(exc)))
    except OSError as exc:
        report.refused.append(Refused(rec.shown, f"could not be stored ({exc.strerror or exc})"))
    else:
        report.accepted.append(placed)


def _place(
    rec: StagedSet, staged: list[Path], folder: Path, root: Path, info: RecordingInfo
) -> Accepted:
    """Link a checked recording in: its own name, or the first numbered one that is free."""
    folder.mkdir(parents=True, exist_ok=True)
    if not folder.resolve().is_relative_to(root):
        raise Refusal("its folder leads outside the data folder")
    base = stem(rec.main.name)
    for n in range(1, 1000):
        staged = _rename_set(staged, numbered(base, n))
        dests = [folder / p.name for p in staged]
        pairs = zip(staged, dests, strict=True)
        if all(d.is_file() and filecmp.cmp(p, d, shallow=False) for p, d in pairs):
            return _accepted(rec, dests, root, info, reused=True)
        if not any(os.path.lexists(d) for d in dests) and _link_all(staged, dests):
            return _accepted(rec, dests, root, info, reused=False)
    raise Refusal("no free name is left for it in the uploads folder")


def _rename_set(staged: list[Path], new_stem: str) -> list[Path]:
    """Give every file of a recording the stem `new_stem`; BrainVision headers follow."""
    out = []
    for p in staged:
        new = p.with_name(new_stem + extension(p.name))
        out.append(p.rename(new) if new != p else p)
    if extension(out[0].name) == ".vhdr":
        vmrk = next((p for p in out if extension(p.name) == ".vmrk"), None)
        rewrite_brainvision(out[0], vmrk, new_stem + ".eeg", new_stem + ".vmrk")
    return out


def _link_all(staged: list[Path], dests: list[Path]) -> bool:
    """Link every file to its name, all or none; False if a name was taken meanwhile.

    A file system without hard links (exFAT, some FUSE and network mounts) gets a copy
    instead, written with exclusive creation: neither way ever replaces a file."""
    done: list[Path] = []
    try:
        for src, dst in zip(staged, dests, strict=True):
            _link_or_copy(src, dst)
            done.append(dst)
    except FileExistsError:
        for d in done:
            d.unlink(missing_ok=True)
        return False
    except OSError:
        for d in done:
            d.unlink(missing_ok=True)
        raise
    return True


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)  # fails if dst exists: never replaces a file
    except FileExistsError:
        raise
    except OSError:  # no hard links here (EPERM, ENOTSUP, EXDEV ...): copy instead
        with src.open("rb") as fin, open(dst, "xb") as fout:  # "x": fails if dst exists
            try:
                shutil.copyfileobj(fin, fout, 1 << 20)
            except BaseException:
                fout.close()
                dst.unlink(missing_ok=True)
                raise


def _accepted(
    rec: StagedSet, dests: list[Path], root: Path, info: RecordingInfo, *, reused: bool
) -> Accepted:
    files = tuple(d.relative_to(root).as_posix() for d in dests)
    wanted = "/".join(p for p in (UPLOADS, rec.dest, rec.main.name) if p)
    note = ""
    if reused:
        note = f"the same file was already in the data folder as {files[0]}: kept that one"
    elif files[0] != wanted:
        note = f"{wanted} already holds a different file: saved as {files[0]}"
    elif not rec.dest and rec.shown != rec.main.name:
        note = f"saved under a safe name: {files[0]}"
    return Accepted(files[0], files, info, reused, note, rec.shown)


def too_big(size: int | None, max_mb: int) -> str:
    """`size` None: an upload refused while it arrived (its whole size is never known)."""
    shown = "the file" if size is None else f"{size / 2**20:,.1f} MB"
    return (
        f"{shown} is over the upload limit of {max_mb} MB; to accept larger "
        f"files, set BRAINCHAT_UPLOAD_MAX_MB (e.g. BRAINCHAT_UPLOAD_MAX_MB={max(2 * max_mb, 1000)}) "
        "and restart brainchat"
    )


def agent_note(accepted: Sequence[Accepted], shown: int | None = None) -> str:
    """The line that tells a model which files arrived: the first `shown` of them, "+N more"."""
    named = list(accepted if shown is None else accepted[:shown])
    more = len(accepted) - len(named)
    return (
        "Uploaded this conversation: "
        + "; ".join(a.line() for a in named)
        + (f" (+{more} more)" if more else "")
    )
