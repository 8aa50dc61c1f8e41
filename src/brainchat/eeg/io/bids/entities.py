"""BIDS names and folders: the entities of a file name, a dataset's root, its recordings.

No mne-bids here: a name is parsed by BIDS's own grammar (`key-label` parts joined by `_`, then
the suffix), so listing a large data folder stays cheap.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import ToolException

from brainchat.eeg.io.paths import MAX_LISTED_ENTRIES, EegWalk

DESCRIPTION = "dataset_description.json"
LABEL = re.compile(r"^[A-Za-z0-9]+$")  # BIDS: a label is alphanumeric, nothing else
DATATYPES = ("eeg",)
SKIPPED = ("derivatives", "sourcedata", "code")  # folders of a root that hold no raw recordings
# the load_data arguments that select recordings, and the entity each one names
FILTERS = {"subjects": "sub", "sessions": "ses", "tasks": "task", "runs": "run"}


@dataclass(frozen=True)
class BidsName:
    """The entities of a BIDS file name, e.g. sub-01_ses-1_task-imagery_run-1_eeg.edf."""

    entities: dict[str, str]
    suffix: str

    @property
    def subject(self) -> str:
        return self.entities.get("sub", "")

    @property
    def session(self) -> str:
        return self.entities.get("ses", "")

    @property
    def task(self) -> str:
        return self.entities.get("task", "")

    @property
    def run(self) -> str:
        return self.entities.get("run", "")

    def stem(self) -> str:
        """The name without its suffix and extension (the prefix its sidecars share)."""
        return "_".join(f"{k}-{v}" for k, v in self.entities.items())


def parse_name(name: str) -> BidsName | None:
    """The entities of a BIDS file name, or None when the name does not follow BIDS."""
    stem = name.split(".")[0]
    parts = stem.split("_")
    if len(parts) < 2 or not parts[0].startswith("sub-"):
        return None
    entities: dict[str, str] = {}
    for part in parts[:-1]:
        key, sep, label = part.partition("-")
        if not sep or not key.isalnum() or not LABEL.match(label) or key in entities:
            return None
        entities[key] = label
    if not parts[-1].isalnum():
        return None
    return BidsName(entities, parts[-1])


def is_root(folder: Path) -> bool:
    """A folder is a BIDS dataset when it holds a dataset_description.json."""
    try:
        return (folder / DESCRIPTION).is_file()
    except OSError:
        return False


def root_of(path: Path) -> Path | None:
    """The BIDS root a recording lies in (the folder above its sub-<label> folder, holding a
    dataset_description.json), or None when the file is not part of a BIDS dataset."""
    name = parse_name(path.name)
    if name is None or path.parent.name not in DATATYPES:
        return None
    folder = path.parent.parent
    if name.session and folder.name == f"ses-{name.session}":
        folder = folder.parent
    if folder.name != f"sub-{name.subject}":
        return None
    return folder.parent if is_root(folder.parent) else None


@dataclass(frozen=True)
class Found:
    """One raw recording of a BIDS root."""

    rel: Path  # relative to the data folder
    path: Path
    name: BidsName


def recordings(data_root: Path, root: Path, stop: threading.Event | None = None) -> list[Found]:
    """The raw EEG recordings of `root` (derivatives, sourcedata and code left out), by a bounded
    walk that follows no link out of the data folder."""
    found = []
    walk = EegWalk(data_root, root, stop)
    for rel, path in walk:
        inner = path.relative_to(root).parts
        if inner[0] in SKIPPED:
            continue
        name = parse_name(path.name)
        if name is not None and name.suffix in DATATYPES and root_of(path) == root:
            found.append(Found(rel, path, name))
    if walk.cut:  # never a silent part of a dataset
        raise ToolException(
            f"the BIDS dataset holds more than {MAX_LISTED_ENTRIES:,} files and folders, more "
            "than one walk reads; name one subject's folder in files (e.g. 'ds001/sub-01')"
        )
    return found


def same_label(wanted: str, label: str) -> bool:
    """'1' names run-01 too: numeric labels compare as numbers, others exactly."""
    if wanted.isdigit() and label.isdigit():
        return int(wanted) == int(label)
    return wanted == label


def values(found: list[Found], key: str) -> list[str]:
    """The labels of one entity across recordings, numbers in numeric order."""
    labels = {f.name.entities.get(key, "") for f in found} - {""}
    return sorted(labels, key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))
