"""The data folder and the rule that tools read and write only inside it."""

from __future__ import annotations

import difflib
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from langchain_core.tools import ToolException

from brainchat.tools.errors import ToolError, call

DATA_DIR_ENV = "BRAINCHAT_DATA_DIR"
SUPPORTED_EXTENSIONS = (".edf", ".bdf", ".gdf", ".fif", ".fif.gz", ".set", ".vhdr")
MAX_LISTED_ENTRIES = 20_000  # files and folders visited per walk of the data folder


def default_data_dir() -> Path:
    """The data folder: $BRAINCHAT_DATA_DIR, or ./data."""
    return Path(os.environ.get(DATA_DIR_ENV) or "./data")


def resolve_in_data_dir(data_dir: Path | str, user_path: str | Path) -> Path:
    """Resolve `user_path` (relative to the data folder, or absolute) and refuse anything outside.

    Symlinks and `..` are resolved before the check, so a link pointing out is refused too.
    Errors name only what the caller gave: where a link points, and where the data folder is on
    disk, are not theirs to learn.
    """
    root = Path(data_dir).expanduser().resolve()
    text = str(user_path).strip()
    if not text:
        raise ToolException("empty path: give a file name relative to the data folder")
    if "\x00" in text:  # the OS cannot take it: Python would fail with 'embedded null byte'
        raise ToolException(
            f"'{shown_name(text)}' is not a valid file name: it holds a null character (\\x00); "
            "give a file name relative to the data folder (call list_data_files to see them)"
        )
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve(strict=False)
    if resolved != root and not resolved.is_relative_to(root):
        lexical = Path(os.path.normpath(candidate))
        link = lexical == root or lexical.is_relative_to(root)
        raise ToolException(
            f"refused: '{text}' {'is a link that points' if link else 'is'} outside the data "
            "folder; only files inside the data folder can be used (call list_data_files to see them)"
        )
    return resolved


def existing_data_file(data_dir: Path | str, user_path: str | Path) -> Path:
    """Like resolve_in_data_dir, but the file must exist and have a supported format."""
    path = resolve_in_data_dir(data_dir, user_path)
    try:
        found = path.is_file()
    except OSError as exc:  # a name the OS refuses (too long ...): say so, not the OS error
        raise ToolException(
            f"'{shown_name(str(user_path))}' is not a valid file name ({exc.strerror or exc}); "
            "call list_data_files to see the available files"
        ) from None
    if not found:
        there = what_is_there(data_dir, str(user_path))
        # the closest names are in the text: the model picks one; with none, the listing helps
        fix = None if there.startswith("closest names") else call("list_data_files")
        raise ToolError(
            f"file '{shown_name(str(user_path))}' not found in the data folder; {there}", fix
        )
    if not file_format(path):
        raise ToolException(
            f"'{user_path}' is not a supported EEG file; supported: {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    return path


def what_is_there(data_dir: Path | str, wanted: str, close: int = 3, first: int = 5) -> str:
    """For a name that is not there: the closest existing names and the folder's first files, so
    a model can retry with a real name at once (a small one does not call list_data_files)."""
    root = Path(data_dir).resolve()
    names = [str(rel) for rel, _ in EegWalk(root)] if root.is_dir() else []
    if not names:
        return "the data folder holds no EEG files yet (the demo set can be written with 'brainchat demo-data')"
    names.sort()
    matches = difflib.get_close_matches(wanted, names, n=close, cutoff=0.3)
    if not matches:  # 'sub-01/1.edf' against 'sub-01/sub-01_ses-01_eeg.edf': same folder first
        folder = str(Path(wanted).parent)
        matches = [n for n in names if str(Path(n).parent) == folder][:close]
    said = f"closest names: {', '.join(repr(m) for m in matches)}; " if matches else ""
    listed = ", ".join(repr(n) for n in names[:first])
    more = f" and {len(names) - first} more" if len(names) > first else ""
    return f"{said}the folder holds {listed}{more} (list_data_files lists them all)"


class EegWalk:
    """(path relative to root, path) of each supported file under `start` (default: root), in
    order. Visits at most MAX_LISTED_ENTRIES entries (then `cut` is set), skips hidden folders
    (an upload being checked), symlinked folders and links out of the folder, and ends early when
    `stop` is set (the tool timed out or the run was cancelled)."""

    def __init__(
        self, root: Path, start: Path | None = None, stop: threading.Event | None = None
    ) -> None:
        self.root, self.start, self.stop = root, start or root, stop
        self.cut = False

    def __iter__(self) -> Iterator[tuple[Path, Path]]:
        visited = 0
        for folder, dirs, files in os.walk(self.start):  # symlinked folders are not followed
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            here = Path(folder)
            for name in sorted(files):
                path = here / name
                if file_format(path) and _inside_file(self.root, path):
                    yield path.relative_to(self.root), path
            visited += len(files) + len(dirs)
            if visited >= MAX_LISTED_ENTRIES:
                self.cut = True
                return
            if self.stop is not None and self.stop.is_set():
                return


def _inside_file(root: Path, path: Path) -> bool:
    """A regular file inside root: not a link out of the data folder, nor a link to nothing."""
    try:
        return path.resolve().is_relative_to(root) and path.is_file()
    except OSError:
        return False


def shown_name(text: str, limit: int = 120) -> str:
    """A name as an error message shows it: control characters visible, at most `limit` long."""
    visible = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return visible if len(visible) <= limit else visible[: limit - 3] + "..."


def file_format(path: Path) -> str | None:
    """The reader to use for a path ('edf', 'fif', ...), or None if unsupported."""
    name = path.name.lower()
    for ext in SUPPORTED_EXTENSIONS:
        if name.endswith(ext):
            return ext.split(".")[1]
    return None


# an absolute path in free text: starts a word ("demo/sub-01.edf" is not one), ends before a quote
_ABSOLUTE = re.compile(r"(?<![\w.~-])(?:[A-Za-z]:)?[\\/][^\s'\"`]*[^\s'\"`:;,.)]")


def shown_folder(data_dir: Path | str, folder: Path) -> str:
    """A folder as a message names it: relative to the data folder ("the data folder's
    `demo/`"), never by where the server keeps it."""
    name = relative_name(data_dir, folder)
    if name == ".":
        return "the data folder"
    if Path(name).is_absolute():
        return f"the folder `{folder.name}`"
    return f"the data folder's `{Path(name).as_posix()}/`"


def without_server_paths(text: str, data_dir: Path | str | None) -> str:
    """`text` (an error's, say) with no absolute path: one in the data folder is shown relative
    to it, the data folder itself as "<data folder>", any other (every one, when `data_dir` is
    None) by its last part."""
    root = Path(data_dir) if data_dir is not None else None
    roots = (
        sorted({str(root), str(root.expanduser().resolve())}, key=len, reverse=True)
        if root is not None
        else []
    )

    def relative(m: re.Match[str]) -> str:
        path = m.group(0)
        for r in roots:
            if path == r:
                return "<data folder>"
            if path.startswith(r.rstrip("/\\") + "/"):
                return path[len(r.rstrip("/\\")) + 1 :]
        return Path(path).name or "<folder>"

    return _ABSOLUTE.sub(relative, text)


def relative_name(data_dir: Path | str, path: Path) -> str:
    """A path as shown to the model: relative to the data folder."""
    root = Path(data_dir).resolve()
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)
