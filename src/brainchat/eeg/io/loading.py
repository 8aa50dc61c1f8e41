"""Reading EEG files (EDF, BDF, GDF, FIF, EEGLAB, BrainVision) and naming their subject/session."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import ToolException

from brainchat.eeg.io.bounds import Budget, TooBig, check_events_tsv, check_markers
from brainchat.eeg.io.fif_split import SplitError, split_parts
from brainchat.eeg.io.paths import SUPPORTED_EXTENSIONS, file_format, without_server_paths
from brainchat.eeg.io.vhdr import HeaderError, header_refs, refs_outside

if TYPE_CHECKING:
    import mne

_SUBJECT = re.compile(r"(?:^|[_\-.])sub(?:ject)?[-_]?([A-Za-z0-9]+)", re.IGNORECASE)
_SESSION = re.compile(r"(?:^|[_\-.])ses(?:sion)?[-_]?([A-Za-z0-9]+)", re.IGNORECASE)
_BCI_IV = re.compile(r"^[A-Z](\d{2})([TE])$")  # BCI Competition IV: A01T, B03E ...
IGNORED_ANNOTATIONS = ("bad", "edge", "boundary")


@dataclass(frozen=True)
class Recording:
    """What the study knows about one loaded file."""

    name: str  # relative to the data folder
    path: Path
    subject: str
    session: str
    fmt: str
    damage: str = (
        ""  # what reading found missing or damaged (e.g. a truncated file), shown to the user
    )


def infer_subject_session(path: Path) -> tuple[str, str]:
    """Subject and session from BIDS-like names (sub-01_ses-02), BCI-IV names (A01T) or the folder."""
    from brainchat.eeg.io.bids.entities import parse_name  # BIDS: the name's own entities

    if (bids := parse_name(path.name)) is not None:
        return bids.subject, bids.session or "1"
    stem = path.name.split(".")[0]
    bci = _BCI_IV.match(stem)
    if bci:
        return bci.group(1), bci.group(2)
    subject = _SUBJECT.search(stem)
    session = _SESSION.search(stem)
    if subject is None:
        parent = _SUBJECT.search(path.parent.name)
        subject_id = parent.group(1) if parent else stem
    else:
        subject_id = subject.group(1)
    return subject_id, session.group(1) if session else "1"


def mne_reader(fmt: str | None) -> Callable[..., Any] | None:
    """MNE's reader for one of our formats (file_format's names), or None."""
    import mne

    return {
        "edf": mne.io.read_raw_edf,
        "bdf": mne.io.read_raw_bdf,
        "gdf": mne.io.read_raw_gdf,
        "fif": mne.io.read_raw_fif,
        "set": mne.io.read_raw_eeglab,
        "vhdr": mne.io.read_raw_brainvision,
    }.get(fmt or "")


def read_raw(
    path: Path, notes: list[str] | None = None, budget: Budget | None = None
) -> mne.io.BaseRaw:
    """Read one file into memory; unreadable files become a ToolException naming the file.

    Missing or damaged data that the reader works around (a truncated EDF, a FIF cut short)
    is described in `notes`: the data loads, and the user is told what is not there. Events past
    their bounds, and samples past the `budget`, are refused before they are read (bounds.py).
    """
    fmt = file_format(path)
    read = mne_reader(fmt)
    if fmt is None or read is None:
        raise ToolException(
            f"'{path.name}' has an unsupported format; brainchat reads "
            f"{', '.join(SUPPORTED_EXTENSIONS)} files (and a BIDS dataset by its folder)"
        )
    if fmt == "vhdr" and (outside := _brainvision_outside(path)):
        raise _outside_error(path, outside)  # MNE opens both files it names as it reads it
    _check_events(path, fmt)
    if fmt == "fif":  # MNE opens the next part a split FIF names, wherever it is
        try:
            split_parts(path)
        except SplitError as exc:
            raise ToolException(f"{exc}; brainchat only reads files in the data folder") from None
    outside = []
    try:
        raw = read(path, preload=False, verbose="error")
        if fmt == "gdf":
            crop_to_whole_records(raw, path)
        outside = files_outside(raw, path.parent)
        if not outside:  # never read data from a file the header points at elsewhere
            if budget is not None:
                budget.take(path.name, len(raw.ch_names), raw.n_times)
            raw.load_data(verbose="error")
    except TooBig as exc:
        raise ToolException(f"'{path.name}' was not loaded: {exc}") from None
    except Exception as exc:  # any reader error: the file is corrupt or not what it claims
        raw = _intact_fif_part(path) if fmt == "fif" else None
        if raw is None:
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            reason = without_server_paths(reason, None)  # the reader's error names the file
            raise ToolException(
                f"could not read '{path.name}' as {fmt.upper()}: {reason}. "
                "The file may be corrupt or truncated; choose another file"
            ) from None
        _note(
            notes,
            f"'{path.name}' ends early: it looks cut short (the last data block is incomplete); "
            f"loaded the {raw.times[-1] + 1 / raw.info['sfreq']:.0f} s before the cut, "
            "the rest of the recording is missing",
        )
    if outside:
        raise _outside_error(path, outside)
    _tidy(raw, path, fmt, notes)
    from brainchat.eeg.io.bids.read import apply_sidecars  # BIDS: events.tsv, channels.tsv

    apply_sidecars(raw, path)
    return raw


def _check_events(path: Path, fmt: str) -> None:
    """Refuse, before MNE parses them, a BrainVision marker file or a BIDS events.tsv past the
    bounds of bounds.py (a ToolException naming the figure and what to do)."""
    from brainchat.eeg.io.bids.read import events_sidecar

    try:
        if fmt == "vhdr":
            for key, name in header_refs(path):
                if key == "MarkerFile" and name:
                    check_markers(path.parent / name)
        if (events := events_sidecar(path)) is not None:
            check_events_tsv(events)
    except TooBig as exc:
        raise ToolException(f"'{path.name}' was not loaded: {exc}") from None
    except (HeaderError, OSError):
        return  # the reader below says what is wrong, in its own words


def _tidy(raw: mne.io.BaseRaw, path: Path, fmt: str, notes: list[str] | None) -> None:
    """After reading: note a file shorter than its header says, take BrainVision's labels as
    written, and treat the channels as EEG when the file types none of them so."""
    import mne

    if fmt in ("edf", "bdf", "gdf"):
        stated = _header_seconds(path)
        held = raw.n_times / raw.info["sfreq"]
        if stated is not None and held < stated[0] - stated[1] / 2:
            _note(
                notes,
                f"'{path.name}': header says {stated[0]:.0f} s, the file holds {held:.0f} s: "
                f"it looks truncated (only those {held:.0f} s were loaded)",
            )
    if fmt == "vhdr":  # BrainVision writes free-text labels as "Comment/<label>"
        desc = [d.removeprefix("Comment/") for d in raw.annotations.description]
        ann = raw.annotations
        raw.set_annotations(mne.Annotations(ann.onset, ann.duration, desc, orig_time=ann.orig_time))
    eeg = mne.pick_types(raw.info, eeg=True, exclude=[])
    if len(eeg) == 0 and len(raw.ch_names) > 0:
        raw.set_channel_types(dict.fromkeys(raw.ch_names, "eeg"), verbose="error")


def _outside_error(path: Path, outside: list[str]) -> ToolException:
    example = (
        "its .eeg and .vmrk beside its .vhdr"
        if path.suffix == ".vhdr"
        else "the .fdt beside its .set"
    )
    return ToolException(
        f"'{path.name}' points at data outside its folder ({', '.join(outside)}); "
        "brainchat only reads files in the data folder. Keep the recording's data file "
        f"next to it (e.g. {example}) and name it without a folder"
    )


def _brainvision_outside(path: Path) -> list[str]:
    """The files a BrainVision header names outside its folder, checked before MNE opens them;
    a header MNE would not read either is a ToolException saying why."""
    try:
        return refs_outside(path)
    except (HeaderError, OSError) as exc:
        reason = str(exc) if isinstance(exc, HeaderError) else (exc.strerror or str(exc))
        raise ToolException(
            f"could not read '{path.name}' as VHDR: {reason}. Choose another file"
        ) from None


def files_outside(raw: mne.io.BaseRaw, folder: Path) -> list[str]:
    """The names of the files `raw` reads from that are not inside `folder` (after resolving
    links and '..'): an EEGLAB .set or BrainVision header can name a data file anywhere."""
    root = Path(folder).resolve()
    out = []
    for name in raw.filenames:
        if name is None:
            continue
        if not Path(name).resolve().is_relative_to(root):
            out.append(Path(name).name)
    return out


def _note(notes: list[str] | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


def crop_to_whole_records(raw: mne.io.BaseRaw, path: Path) -> None:
    """Keep the GDF records the file holds: MNE sizes a GDF by its header's record count and never
    checks it against the file (it does for EDF/BDF), so a GDF cut short fails on reading its end.
    Cropped, it loads what it holds, and `_header_seconds` tells the user what is missing.
    Raises ValueError when not one whole record is there.
    """
    extras = raw._raw_extras[0]  # MNE internals: header bytes, bytes per record, record count
    per_record = int(extras["bytes_tot"])
    stated = int(extras["n_records"])
    held = (path.stat().st_size - int(extras["data_offset"])) // per_record if per_record else 0
    if held >= stated:
        return
    if held < 1:
        raise ValueError("the file ends before its first data record: it is truncated")
    samples = held * int(extras["max_samp"])
    raw.crop(tmax=(samples - 1) / raw.info["sfreq"], include_tmax=True)


def _header_seconds(path: Path) -> tuple[float, float] | None:
    """(duration, record length) an EDF/BDF/GDF header states, or None if it does not say.

    The reader trusts the file size over the header's record count (MNE only warns, and the
    warning is silenced), so this is how a truncated file is caught.
    """
    try:
        with path.open("rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if len(head) < 256:
        return None
    try:
        if head.startswith(b"GDF"):
            records = int.from_bytes(head[236:244], "little", signed=True)
            num = int.from_bytes(head[244:248], "little")
            den = int.from_bytes(head[248:252], "little")
            seconds = num / den if den else 0.0
        else:  # EDF and BDF: ASCII fields
            records = int(head[236:244].decode("ascii").strip())
            seconds = float(head[244:252].decode("ascii").strip())
    except (ValueError, UnicodeDecodeError):
        return None
    if records <= 0 or seconds <= 0:
        return None  # -1: the count was never written (a recording not stopped cleanly)
    return records * seconds, seconds


def _intact_fif_part(path: Path) -> mne.io.BaseRaw | None:
    """The complete data blocks of a FIF cut short, or None if nothing can be recovered.

    MNE finds the blocks by scanning tags when the file's directory is missing, but its
    preload fails on the last, incomplete block; dropping that block loads the rest.
    """
    import mne

    try:
        raw = mne.io.read_raw_fif(path, preload=False, verbose="error")
        bounds = raw._raw_extras[0]["bounds"]  # sample bounds of the data blocks (MNE internals)
        if len(bounds) < 3:
            return None
        last = (bounds[-2] - 1) / raw.info["sfreq"]
        raw.crop(tmax=last, include_tmax=True)
        raw.load_data(verbose="error")
    except Exception:  # noqa: BLE001 - any failure: the file is not recoverable, say so
        return None
    return raw


def class_names(raw: mne.io.BaseRaw) -> list[str]:
    """Annotation descriptions that look like trial labels (not BAD_/EDGE/boundary)."""
    names = {
        d for d in raw.annotations.description if not d.lower().startswith(IGNORED_ANNOTATIONS)
    }
    return sorted(names)


def class_counts(raw: mne.io.BaseRaw) -> dict[str, int]:
    counts: dict[str, int] = {}
    for desc in raw.annotations.description:
        if not desc.lower().startswith(IGNORED_ANNOTATIONS):
            counts[desc] = counts.get(desc, 0) + 1
    return dict(sorted(counts.items()))
