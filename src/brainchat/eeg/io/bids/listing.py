"""list_data_files and BIDS: a dataset's files are shown as one entry (its subjects and their
sessions, tasks and runs, and how to load them), not as hundreds of lines. A pattern that starts
inside one subject's folder ('ds001/sub-01/**') lists that subject's files one by one."""

from __future__ import annotations

import json
from pathlib import Path

from brainchat.eeg.io.bids.entities import (
    DATATYPES,
    DESCRIPTION,
    Found,
    is_root,
    parse_name,
    values,
)
from brainchat.eeg.io.bids.read import describe
from brainchat.eeg.io.paths import shown_name

SUBJECTS_SHOWN = 40  # subject lines per dataset


class BidsGroups:
    """Collects the files of BIDS datasets met during one listing (`take`), then `text()`."""

    def __init__(self, data_root: Path, start: Path) -> None:
        self.data_root, self.start = data_root, start
        self.sets: dict[Path, list[Found]] = {}
        self.others: dict[Path, int] = {}  # files of a dataset that are not raw recordings
        self.sizes: dict[Path, float] = {}
        self._roots: dict[Path, Path | None] = {}

    def __bool__(self) -> bool:
        return bool(self.sets or self.others)

    def take(self, rel: Path, path: Path) -> bool:
        """True when `path` belongs to a BIDS dataset shown as a group (then it is counted)."""
        root = self._root(path.parent)
        if root is None or self._inside_subject(root):
            return False
        name = parse_name(path.name)
        if name is not None and name.suffix in DATATYPES and path.parent.name in DATATYPES:
            self.sets.setdefault(root, []).append(Found(rel, path, name))
        else:
            self.others[root] = self.others.get(root, 0) + 1
        try:
            self.sizes[root] = self.sizes.get(root, 0.0) + path.stat().st_size / 1e6
        except OSError:
            pass
        return True

    def _root(self, folder: Path) -> Path | None:
        """The nearest folder above (or at) `folder`, inside the data folder, that is a BIDS
        root; cached per folder, so a walk checks each folder once."""
        if folder in self._roots:
            return self._roots[folder]
        if not folder.is_relative_to(self.data_root):
            root = None
        elif is_root(folder):  # the data folder itself may be a BIDS dataset
            root = folder
        else:
            root = None if folder == self.data_root else self._root(folder.parent)
        self._roots[folder] = root
        return root

    def _inside_subject(self, root: Path) -> bool:
        """The listing starts in one subject's folder (or deeper): its files are listed."""
        if not self.start.is_relative_to(root) or self.start == root:
            return False
        return self.start.relative_to(root).parts[0].startswith("sub-")

    def text(self) -> str:
        """One block per dataset, in name order."""
        roots = sorted(set(self.sets) | set(self.others))
        return "\n".join(self._block(r) for r in roots)

    def _block(self, root: Path) -> str:
        rel = root.relative_to(self.data_root).as_posix()
        where = "the data folder" if rel == "." else f"{rel}/"
        inner = "" if rel == "." else f"{rel}/"  # how a pattern names the dataset's folders
        found = self.sets.get(root, [])
        title = _title(root, self.data_root)
        others = self.others.get(root, 0)
        head = (
            f"{where} (BIDS dataset{title}, {self.sizes.get(root, 0.0):.1f} MB): "
            f"{len(values(found, 'sub'))} subject(s), {len(found)} EEG recording(s)"
            + (f", {others} other file(s)" if others else "")
        )
        if not found:
            return head
        lines = [f"{head}; {describe(found)}"]
        by_subject: dict[str, list[Found]] = {}
        for f in found:
            by_subject.setdefault(f.name.subject, []).append(f)
        subjects = values(found, "sub")
        for subject in subjects[:SUBJECTS_SHOWN]:
            lines.append(f"  sub-{subject}: {_sessions(by_subject[subject])}")
        if len(subjects) > SUBJECTS_SHOWN:
            lines.append(f"  ... {len(subjects) - SUBJECTS_SHOWN} more subjects")
        first = subjects[0]
        lines.append(
            f"  load with load_data(files=['{rel}'], subjects=['{first}']) (subjects, sessions, "
            f"tasks, runs: optional filters); list one subject's files with '{inner}sub-{first}/**'"
        )
        return "\n".join(lines)


def _sessions(found: list[Found]) -> str:
    """One subject's sessions, e.g. 'ses-1 (2 recordings: task imagery, runs 1, 2), ses-2 (...)'."""
    by_session: dict[str, list[Found]] = {}
    for f in found:
        by_session.setdefault(f.name.session, []).append(f)
    parts = []
    for session in values(found, "ses") or [""]:
        group = by_session[session]
        what = describe(group, ("tasks", "runs")) if group[0].name.task or group[0].name.run else ""
        label = f"ses-{session} " if session else ""
        parts.append(f"{label}({len(group)} recording(s){': ' + what if what else ''})")
    return ", ".join(parts)


def _title(root: Path, data_root: Path) -> str:
    """The dataset's Name (and ' derivatives') from its dataset_description.json: read only when
    it is a file inside the data folder (not a link out), and only its first 64 KB."""
    path = root / DESCRIPTION
    try:
        if not path.resolve().is_relative_to(data_root):
            return ""
        with path.open(encoding="utf-8") as f:
            desc = json.loads(f.read(65536))
    except (OSError, ValueError):
        return ""
    if not isinstance(desc, dict):
        return ""
    name = shown_name(str(desc.get("Name", "")).strip(), 80)
    kind = " derivatives" if desc.get("DatasetType") == "derivative" else ""
    return f"{kind} '{name}'" if name else kind
