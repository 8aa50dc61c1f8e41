"""The parts of a split FIF recording, checked before MNE's reader opens any of them.

MNE saves a long recording in parts, each ending with a pointer to the next (a file name and a
part number). Its reader joins the name to the part's folder and opens what it finds, so a name
like `/etc/passwd` or `../other/x_raw.fif` reads a file outside the upload or the data folder, and
its error for a missing part says whether the path exists and shows it in full. Here every
pointer is followed without reading data: one that leaves the folder is refused with one message
whatever is there, and a missing part is named by its file name only.
"""

from __future__ import annotations

from pathlib import Path

MAX_PARTS = 200  # MNE's 2 GB parts: far beyond any EEG recording


class SplitError(Exception):
    """The split recording is refused; the message names no server path."""


def split_parts(path: Path) -> list[Path]:
    """`path` and the parts it points at, in order; SplitError for a pointer out of its folder,
    a part that is not there or parts that point back at an earlier one.

    A file that is not readable as FIF is returned alone: MNE's reader then says why.
    """
    from mne._fiff.open import _get_next_fname, fiff_open

    folder = path.parent.resolve()
    parts = [path]
    while len(parts) <= MAX_PARTS:
        current = parts[-1]
        try:
            fid, tree, _ = fiff_open(current, verbose="error")
            with fid:
                following = _get_next_fname(fid, current, tree)
        except Exception:  # noqa: BLE001 - damaged: the reader reports it (the file given)
            return parts
        if following is None:
            return parts
        following = Path(following)
        if following.resolve().parent != folder:  # MNE saves the parts side by side
            raise SplitError(
                f"'{path.name}' is a split FIF whose next part is named outside its folder; "
                "only parts saved beside it are read. Keep all parts of a split recording "
                "together, named as MNE saved them (e.g. rec_raw.fif, rec_raw-1.fif)"
            )
        if not following.is_file():
            raise SplitError(
                f"'{path.name}' is a split FIF and its next part '{following.name}' is not "
                "beside it; keep all parts of the recording together"
            )
        if any(following.resolve() == p.resolve() for p in parts):
            raise SplitError(f"'{path.name}' is a split FIF whose parts point back at each other")
        parts.append(following)
    raise SplitError(f"'{path.name}' is a split FIF of more than {MAX_PARTS} parts")
