"""Reading EEG files (EDF, BDF, GDF, FIF, EEGLAB, BrainVision) and naming their subject/session."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.tools import ToolException

from brainchat.eeg.paths import file_format

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


def infer_subject_session(path: Path) -> tuple[str, str]:
    """Subject and session from BIDS-like names (sub-01_ses-02), BCI-IV names (A01T) or the folder."""
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


def read_raw(path: Path) -> mne.io.BaseRaw:
    """Read one file into memory; unreadable files become a ToolException naming the file."""
    import mne

    fmt = file_format(path)
    readers = {
        "edf": mne.io.read_raw_edf,
        "bdf": mne.io.read_raw_bdf,
        "gdf": mne.io.read_raw_gdf,
        "fif": mne.io.read_raw_fif,
        "set": mne.io.read_raw_eeglab,
        "vhdr": mne.io.read_raw_brainvision,
    }
    if fmt not in readers:
        raise ToolException(f"'{path.name}' has an unsupported format")
    try:
        raw = readers[fmt](path, preload=True, verbose="error")
    except Exception as exc:  # any reader error: the file is corrupt or not what it claims
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ToolException(
            f"could not read '{path.name}' as {fmt.upper()}: {reason}. "
            "The file may be corrupt or truncated; choose another file"
        ) from None
    if fmt == "vhdr":  # BrainVision writes free-text labels as "Comment/<label>"
        desc = [d.removeprefix("Comment/") for d in raw.annotations.description]
        ann = raw.annotations
        raw.set_annotations(mne.Annotations(ann.onset, ann.duration, desc, orig_time=ann.orig_time))
    eeg = mne.pick_types(raw.info, eeg=True, exclude=[])
    if len(eeg) == 0 and len(raw.ch_names) > 0:
        raw.set_channel_types(dict.fromkeys(raw.ch_names, "eeg"), verbose="error")
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
