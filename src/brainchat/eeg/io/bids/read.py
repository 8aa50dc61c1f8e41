"""Reading BIDS recordings: a dataset named by its folder and entities becomes a list of files,
and a file of a BIDS dataset gets its events.tsv as annotations and its channels.tsv's types and
bad channels (read_raw calls `apply_sidecars` for every file it reads).

How a recording is named: `load_data(files=["ds001"], subjects=["01"],
sessions=["1"], tasks=["imagery"], runs=["1"])` loads the matching recordings of the BIDS
dataset in the data folder's ds001/ (a folder inside it, "ds001/sub-01", selects that subject);
a filter left out takes every value. A BIDS file named by its path
("ds001/sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_run-1_eeg.edf") loads as any file does, with
its sidecars read the same way.
"""

from __future__ import annotations

import csv
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.tools import ToolException

from brainchat.eeg.io.bids.entities import (
    FILTERS,
    LABEL,
    Found,
    is_root,
    parse_name,
    recordings,
    root_of,
    same_label,
    values,
)
from brainchat.eeg.io.paths import relative_name, resolve_in_data_dir, shown_name

if TYPE_CHECKING:
    import mne

MAX_RECORDINGS = 500  # recordings one load_data call may select
# channels.tsv's types (BIDS) as MNE's channel types
CHANNEL_TYPES = {
    "EEG": "eeg",
    "EOG": "eog",
    "HEOG": "eog",
    "VEOG": "eog",
    "ECG": "ecg",
    "EMG": "emg",
    "MISC": "misc",
    "TRIG": "stim",
    "RESP": "resp",
    "GSR": "gsr",
    "TEMP": "temperature",
}


def apply_sidecars(raw: mne.io.BaseRaw, path: Path) -> None:
    """A recording of a BIDS dataset: its events.tsv replaces the file's annotations (BIDS keeps
    the events there), its channels.tsv sets channel types and bad channels. Only sidecars in the
    recording's own folder are read, and none that is a link elsewhere; a recording without an
    events.tsv keeps the file's annotations. Other files: nothing."""
    name = parse_name(path.name)
    if name is None or root_of(path) is None:
        return
    folder = path.parent
    events = _sidecar(folder, f"{name.stem()}_events.tsv")
    if events is not None:
        raw.set_annotations(_annotations(events))
    channels = _sidecar(folder, f"{name.stem()}_channels.tsv")
    if channels is not None:
        _apply_channels(raw, channels)


def events_sidecar(path: Path) -> Path | None:
    """The events.tsv `apply_sidecars` reads for the recording at `path`, or None."""
    name = parse_name(path.name)
    if name is None or root_of(path) is None:
        return None
    return _sidecar(path.parent, f"{name.stem()}_events.tsv")


def _sidecar(folder: Path, name: str) -> Path | None:
    path = folder / name
    try:
        if not path.is_file():
            return None
        if path.resolve().parent != folder.resolve():
            raise ToolException(
                f"'{name}' is a link to a file elsewhere; brainchat reads a recording's BIDS "
                "sidecars only from its own folder: replace the link by the file itself"
            )
    except OSError:
        return None
    return path


def _annotations(events: Path) -> mne.Annotations:
    import mne
    from mne_bids import events_file_to_annotation_kwargs

    try:
        kw = events_file_to_annotation_kwargs(events, verbose="error")
    except Exception as exc:  # noqa: BLE001 - any parse error: a malformed events.tsv
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ToolException(
            f"could not read '{events.name}' (the recording's BIDS events): "
            f"{shown_name(first)}. Fix its onset/duration/trial_type columns"
        ) from None
    # BIDS onsets count from the first sample of the file: orig_time None says exactly that
    return mne.Annotations(kw["onset"], kw["duration"], kw["description"], orig_time=None)


def _apply_channels(raw: mne.io.BaseRaw, channels: Path) -> None:
    try:
        with channels.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ToolException(f"could not read '{channels.name}': {exc}") from None
    present = set(raw.ch_names)
    types = {}
    bads = []
    for row in rows:
        ch = row.get("name") or ""
        if ch not in present:
            continue
        kind = CHANNEL_TYPES.get((row.get("type") or "").upper())
        if kind is not None:
            types[ch] = kind
        if (row.get("status") or "").lower() == "bad":
            bads.append(ch)
    if types:
        raw.set_channel_types(types, on_unit_change="ignore", verbose="error")
    raw.info["bads"] = sorted(set(raw.info["bads"]) | set(bads))


def expand(
    data_dir: Path,
    files: list[str],
    filters: dict[str, list[str] | None],
    stop: threading.Event | None = None,
) -> list[str]:
    """load_data's `files` with every BIDS dataset folder replaced by its recordings that match
    `filters` (subjects, sessions, tasks, runs), as names relative to the data folder."""
    wanted = {k: [_label(k, v) for v in vs] for k, vs in filters.items() if vs}
    root_dir = Path(data_dir).resolve()
    out: list[str] = []
    used = False
    for entry in files:
        path = resolve_in_data_dir(data_dir, entry)  # a folder out of the data folder is refused
        if not _is_dir(path):  # a file: load_data checks it, and says what is wrong with it
            out.append(entry)
            continue
        root, within = _root_and_scope(path, entry, root_dir)
        found = [f for f in recordings(root_dir, root, stop) if within(f)]
        out += [f.rel.as_posix() for f in _select(found, wanted, relative_name(root_dir, root))]
        used = True
    if wanted and not used:
        raise ToolException(
            f"{', '.join(wanted)} select recordings of a BIDS dataset: name its folder in files "
            "(e.g. files=['ds001']), not single files"
        )
    if len(out) > MAX_RECORDINGS:
        raise ToolException(
            f"that selects {len(out)} recordings; load at most {MAX_RECORDINGS} at once "
            "(choose subjects, sessions, tasks or runs)"
        )
    return out


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name the OS refuses (too long ...): load_data names it as a bad file
        return False


def _label(key: str, value: str) -> str:
    """A label as BIDS writes it ('sub-01' is taken as '01'); anything else is refused here,
    before it comes near a path."""
    text = str(value).strip()
    prefix = f"{FILTERS[key]}-"
    text = text[len(prefix) :] if text.startswith(prefix) else text
    if not LABEL.match(text):
        raise ToolException(
            f"'{shown_name(str(value))}' is not a BIDS {key[:-1]} label: labels are letters "
            "and digits only (e.g. '01')"
        )
    return text


def _root_and_scope(
    path: Path, entry: str, data_root: Path
) -> tuple[Path, Callable[[Found], bool]]:
    """The BIDS root a folder of load_data's files is, or lies in (inside the data folder), and
    which recordings of it the folder covers (a sub-01 folder: that subject's)."""
    if is_root(path):
        return path, lambda f: True
    for parent in path.parents:
        if not parent.is_relative_to(data_root):
            break  # a dataset the data folder lies in is not the data folder's to read
        if is_root(parent):
            inner = path.relative_to(parent)
            return parent, _under(parent, inner.parts)
    raise ToolException(
        f"'{shown_name(entry)}' is a folder but not a BIDS dataset (it holds no "
        "dataset_description.json); name its files instead (list_data_files lists them)"
    )


def _under(root: Path, inner: tuple[str, ...]) -> Callable[[Found], bool]:
    """Whether a recording of `root` lies in its subfolder `inner` (e.g. ('sub-01',))."""
    return lambda f: f.path.relative_to(root).parts[: len(inner)] == inner


def _select(found: list[Found], wanted: dict[str, list[str]], shown: str) -> list[Found]:
    """The recordings matching every filter; a label that is not there is an error listing the
    labels that are."""
    if not found:
        raise ToolException(f"the BIDS dataset '{shown}' holds no EEG recordings there")
    for key, labels in wanted.items():
        entity = FILTERS[key]
        have = values(found, entity)
        missing = [w for w in labels if not any(same_label(w, h) for h in have)]
        if missing:
            raise ToolException(
                f"no {key[:-1]} {', '.join(repr(m) for m in missing)} in the BIDS dataset "
                f"'{shown}'; {describe(found)}"
            )
    picked = [
        f
        for f in found
        if all(
            any(same_label(w, f.name.entities.get(FILTERS[k], "")) for w in ws)
            for k, ws in wanted.items()
        )
    ]
    if not picked:
        raise ToolException(
            f"no recording of the BIDS dataset '{shown}' matches all of those; {describe(found)}"
        )
    return picked


def describe(found: list[Found], keys: tuple[str, ...] = tuple(FILTERS)) -> str:
    """What a dataset holds, e.g. 'subjects 01, 02; sessions 1, 2; tasks imagery; runs 1'."""
    parts = []
    for key in keys:
        labels = values(found, FILTERS[key])
        if labels:
            shown = ", ".join(labels[:30]) + (
                f" (+{len(labels) - 30} more)" if len(labels) > 30 else ""
            )
            parts.append(f"{key} {shown}")
    return "; ".join(parts) if parts else "no subjects"
