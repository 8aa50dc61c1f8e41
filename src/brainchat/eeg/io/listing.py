"""Listing the data folder: a bounded walk, so no pattern and no folder size can stall a tool.

`Path.rglob` grows about 3x per `**` and has no bound; this walks the folder once, visits at
most MAX_LISTED_ENTRIES entries, matches each file's relative path against the pattern and stops
early when the caller's stop flag is set (the tool timed out or the run was cancelled).
"""

from __future__ import annotations

import threading
from fnmatch import fnmatchcase
from pathlib import Path

from langchain_core.tools import ToolException

from brainchat.eeg.io.loading import infer_subject_session
from brainchat.eeg.io.paths import MAX_LISTED_ENTRIES, SUPPORTED_EXTENSIONS, EegWalk

SHOWN = 200  # file lines in one tool result


def check_pattern(pattern: str) -> tuple[str, ...]:
    """The pattern's parts, or a ToolException saying what is wrong with it."""
    if "\x00" in pattern:  # no file name holds one; the OS would refuse it in a path
        raise ToolException(
            "the pattern is not valid: it holds a null character (\\x00); give a glob such as "
            "'*.edf' or 'sub-01/*'"
        )
    parts = Path(pattern).parts
    if ".." in parts or Path(pattern).is_absolute():
        raise ToolException("the pattern must be relative to the data folder, without '..'")
    if sum(p == "**" for p in parts) > 1:
        raise ToolException(
            f"'{pattern}' has more than one '**': use at most one '**' per pattern "
            "(every pattern already matches at any depth, e.g. 'sub-01/*.edf')"
        )
    return parts or ("*",)


def _matches(parts: tuple[str, ...], pats: tuple[str, ...]) -> bool:
    """fnmatch per path segment, where a '**' segment stands for any number of folders."""
    if not pats:
        return not parts
    if pats[0] == "**":
        return any(_matches(parts[i:], pats[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pats[0]) and _matches(parts[1:], pats[1:])


def _anchor(root: Path, pats: tuple[str, ...]) -> tuple[Path, tuple[str, ...]]:
    """Leading folder names without wildcards that exist under the data folder start the walk
    there ('sub-01/*.edf' walks sub-01 only); otherwise the walk starts at the data folder and
    the pattern matches at any depth, like rglob."""
    start, i = root, 0
    while i < len(pats) - 1 and not any(c in pats[i] for c in "*?[") and (start / pats[i]).is_dir():
        start, i = start / pats[i], i + 1
    if i == 0 or not start.resolve().is_relative_to(root):
        return root, ("**", *pats)
    return start, pats[i:]


UPLOADS = "uploads"  # the data folder's uploads (brainchat.eeg.uploads writes them there)


def list_files(
    data_dir: Path,
    pattern: str,
    stop: threading.Event | None = None,
    limit: int = SHOWN,
    mine: set[str] | None = None,
) -> str:
    """EEG files under the data folder whose path matches `pattern` (see `_anchor`).

    `mine`: the uploads of this conversation. Files other conversations uploaded are then left
    out (and counted) unless the pattern starts with the uploads folder: one upload must not
    change what every later chat loads."""
    pats = check_pattern(pattern)
    apart = _Apart(mine, pats)
    root = data_dir.resolve()
    if not root.is_dir():
        return "the data folder does not exist yet (run `brainchat demo-data` to create a demo set)"
    start, pats = _anchor(root, pats)
    found: list[str] = []
    walk = EegWalk(root, start, stop)
    from brainchat.eeg.io.bids.listing import BidsGroups  # BIDS: a dataset as its subjects

    bids = BidsGroups(root, start)
    for rel, path in walk:
        if not _matches(path.relative_to(start).parts, pats) or bids.take(rel, path):
            continue
        if apart.hides(rel):
            continue
        try:
            size = path.stat().st_size / 1e6
        except OSError:
            continue
        subject, session = infer_subject_session(path)
        found.append(f"{rel} ({size:.1f} MB, subject {subject}, session {session})")
    if stop is not None and stop.is_set():
        return "the listing was stopped before it finished"
    cut = ""
    if walk.cut:
        cut = (
            f"\nthe listing was cut after {MAX_LISTED_ENTRIES:,} entries of the data folder: "
            "files further on are not listed; start the pattern with a subfolder to list "
            "only that folder (e.g. 'sub-01/*.edf')"
        )
    cut = apart.note() + cut
    if not found and not bids:
        if apart.hidden:
            return f"no EEG file of this conversation matches the pattern '{pattern}'" + cut
        return _none_found(root, pattern, stop) + cut
    found.sort()
    more = f"\n... {len(found) - limit} more" if len(found) > limit else ""
    files = f"{len(found)} file(s) in the data folder:\n" + "\n".join(found[:limit]) + more
    return (bids.text() + ("\n" + files if found else "") if bids else files) + cut


class _Apart:
    """Which uploads a listing leaves out: those of other conversations, unless asked for."""

    def __init__(self, mine: set[str] | None, pats: tuple[str, ...]) -> None:
        self.mine = mine
        self.asked = bool(pats) and pats[0] == UPLOADS  # 'uploads/*' lists every upload
        self.hidden = 0

    def hides(self, rel: Path) -> bool:
        if self.mine is None or self.asked or rel.parts[:1] != (UPLOADS,):
            return False
        if rel.as_posix() in self.mine:
            return False
        self.hidden += 1
        return True

    def note(self) -> str:
        if not self.hidden:
            return ""
        return (
            f"\n{self.hidden} recording(s) uploaded in other conversations are not listed (they "
            "are not part of this conversation's study); call list_data_files with pattern "
            f"'{UPLOADS}/*' to list them, if the user asks for them"
        )


def _none_found(root: Path, pattern: str, stop: threading.Event | None) -> str:
    """Why nothing was listed: a pattern that matches none of the files there (they are
    counted, and the call that lists them named), or a folder with no EEG file at all."""
    if pattern.strip() not in ("", "*", "**", "**/*"):
        held = sum(1 for _ in EegWalk(root, root, stop))
        if held:
            return (
                f"no EEG file matches the pattern '{pattern}', but the data folder holds {held} "
                "EEG file(s): call list_data_files with pattern '*' to see all of them"
            )
    return (
        f"the data folder holds no EEG file (formats: {', '.join(SUPPORTED_EXTENSIONS)}); "
        "the user can write a demo set with the welcome page's button or the command "
        "'brainchat demo-data', or upload recordings"
    )
