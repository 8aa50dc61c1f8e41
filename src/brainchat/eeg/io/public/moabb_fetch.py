"""MOABB data sets into the data folder, as a BIDS-shaped folder of FIF recordings.

Each run MOABB's get_data returns is written as
public/moabb/<Name>/sub-01/ses-0train/eeg/sub-01_ses-0train_task-imagery_run-0_eeg.fif (stim
channels dropped, the classes kept as MOABB's annotations), with a dataset_description.json, so
list_data_files shows the set with its subjects and sessions and load_data takes it by its folder.
MOABB downloads its source files into MNE_DATA, pointed for the call at the data folder's hidden
public/moabb/.source/ (so they count against the user's quota and stay out of listings); the
record of what was written (.brainchat-fetch.json) makes a second fetch of the same subjects a
no-op. MOABB is imported only here, when a MOABB set is fetched: it is not a runtime dependency.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.io.paths import without_server_paths
from brainchat.eeg.io.public.catalog import DEMO, DEMO_EVENTS, MoabbSet
from brainchat.eeg.io.public.download import MB, Progress, Room, check_room, mb

RECORD = ".brainchat-fetch.json"
NOT_INSTALLED = (
    "MOABB is not installed: pip install moabb (then restart brainchat); OpenNeuro data sets "
    "(ds + 6 digits) need no MOABB"
)
_ENV_LOCK = threading.Lock()  # MNE_DATA is process-wide: one MOABB fetch at a time


def folder_of(data_dir: Path, name: str) -> Path:
    return Path(data_dir) / "public" / "moabb" / name


def _label(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", str(value)) or "0"


def _session_matches(wanted: str, session: str) -> bool:
    """'0' names MOABB's '0train' too (its leading number), as MOABB's own selection does."""
    lead = re.match(r"\d+", session)
    return wanted == session or (
        wanted.isdigit() and lead is not None and int(lead[0]) == int(wanted)
    )


def _record(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _cached(root: Path, entry: Any, sessions: list[str] | None) -> bool:
    """A subject written before, with every file still there at its size, and the sessions asked."""
    if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
        return False
    for rel, size in entry["files"].items():
        path = root / rel
        if not path.resolve().is_relative_to(root.resolve()) or not path.is_file():
            return False
        if path.stat().st_size != size:
            return False
    if sessions is None:
        return bool(entry.get("all_sessions"))
    have = entry.get("sessions") or []
    return all(any(_session_matches(w, s) for s in have) for w in sessions)


@contextmanager
def _mne_data(folder: Path) -> Iterator[None]:
    """MNE_DATA (and any dataset path MNE's config names) pointed at `folder` for the call."""
    import mne

    folder.mkdir(parents=True, exist_ok=True)
    keys = ["MNE_DATA"] + [
        k for k in (mne.get_config() or {}) if k.startswith("MNE_DATASETS_") and k.endswith("_PATH")
    ]
    with _ENV_LOCK:
        before = {k: os.environ.get(k) for k in keys}
        os.environ.update({k: str(folder) for k in keys})
        try:
            yield
        finally:
            for k, v in before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _dataset(entry: MoabbSet, paradigm: str) -> Any:
    try:
        import moabb.datasets as datasets
    except ImportError:
        raise ToolException(NOT_INSTALLED) from None
    if entry.name == DEMO:
        from moabb.datasets.fake import FakeDataset

        return FakeDataset(
            event_list=DEMO_EVENTS[paradigm], n_sessions=entry.sessions, n_runs=2,
            n_subjects=entry.subjects, paradigm=paradigm, seed=42, duration=60, n_events=24,
        )  # fmt: skip
    cls = getattr(datasets, entry.name, None)
    if cls is None:
        raise ToolException(f"this MOABB ({_version()}) has no {entry.name}: pip install -U moabb")
    return cls()


def _version() -> str:
    import moabb

    return f"MOABB {moabb.__version__}"


def _network_error(exc: BaseException) -> bool:
    """A failure to reach a host, anywhere in the exception's chain."""
    names = {"ConnectionError", "ConnectError", "ConnectTimeout", "NameResolutionError",
             "MaxRetryError", "gaierror", "Timeout", "ReadTimeout", "NewConnectionError"}  # fmt: skip
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, ConnectionError | TimeoutError) or type(seen).__name__ in names:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _write_subject(root: Path, subject: int, runs: dict[str, Any], paradigm: str,
                   stop: threading.Event) -> dict[str, Any]:  # fmt: skip
    """Write one subject's runs as FIF; its entry in the record."""
    files: dict[str, int] = {}
    classes: set[str] = set()
    for session, by_run in runs.items():
        for run, raw in by_run.items():
            if stop.is_set():
                raise ToolException(
                    f"stopped while subject {subject} was written; the next fetch_dataset call "
                    "writes that subject again"
                )
            sub, ses = f"sub-{subject:02d}", f"ses-{_label(session)}"
            rel = f"{sub}/{ses}/eeg/{sub}_{ses}_task-{paradigm}_run-{_label(run)}_eeg.fif"
            stim = [
                c for c, t in zip(raw.ch_names, raw.get_channel_types(), strict=True) if t == "stim"
            ]
            if stim:
                raw = raw.copy().drop_channels(stim)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            raw.save(root / rel, overwrite=True, verbose="error")
            files[rel] = (root / rel).stat().st_size
            classes |= set(raw.annotations.description)
    return {"files": files, "sessions": sorted(runs), "classes": sorted(classes)}


def _plan(entry: MoabbSet, subjects: list[int] | None, sessions: list[str] | None,
          paradigm: str | None) -> tuple[list[int], str]:  # fmt: skip
    """The subjects to fetch and the paradigm, checked against the catalog."""
    chosen = sorted(set(subjects)) if subjects else list(range(1, entry.subjects + 1))
    bad = [s for s in chosen if not 1 <= s <= entry.subjects]
    if bad:
        raise ToolException(
            f"{entry.name} has subjects 1 to {entry.subjects}; not {', '.join(map(str, bad))}"
        )
    for s in sessions or []:
        if not re.fullmatch(r"[A-Za-z0-9]{1,32}", s):
            raise ToolException(f"{s!r} is not a session label (letters and digits, e.g. '0')")
    if entry.name == DEMO:
        return chosen, paradigm or entry.paradigm
    if paradigm and paradigm != entry.paradigm:
        raise ToolException(f"{entry.name} is a {entry.paradigm} data set, not {paradigm}")
    return chosen, entry.paradigm


def fetch_moabb(data_dir: Path, entry: MoabbSet, subjects: list[int] | None,
                sessions: list[str] | None, paradigm: str | None, room: Room,
                progress: Progress, stop: threading.Event) -> str:  # fmt: skip
    """Fetch subjects of a MOABB set into public/moabb/<Name>/ (see the module's docstring)."""
    chosen, paradigm = _plan(entry, subjects, sessions, paradigm)
    root = folder_of(data_dir, entry.name)
    record = _record(root)
    if record.get("paradigm", paradigm) != paradigm:
        raise ToolException(
            f"public/moabb/{entry.name}/ holds the {record['paradigm']} variant; delete that "
            "folder first to fetch another paradigm"
        )
    done = record.setdefault("subjects", {})
    todo = [s for s in chosen if not _cached(root, done.get(str(s)), sessions)]
    load = f"load it with load_data(files=['public/moabb/{entry.name}'])"
    if not todo:
        return f"{entry.name}: subject(s) {_listed(chosen)} already in public/moabb/{entry.name}/: nothing downloaded (cached); {load}"
    need = int(entry.mb_per_subject * MB * 2 * len(todo))  # source files + FIF copies
    check_room(root, need, room, f"{entry.name} ({len(todo)} subject(s), about {mb(need)})")
    dataset = _dataset(entry, paradigm)
    record.update(name=entry.name, paradigm=paradigm)
    _describe(root, entry)
    for n, subject in enumerate(todo):
        if stop.is_set():
            return f"stopped after {n} of {len(todo)} subject(s) of {entry.name}; fetch again for the rest"
        progress(f"{entry.name}: subject {subject} ({n + 1} of {len(todo)}), about "
                 f"{mb(entry.mb_per_subject * MB)} each", n / len(todo), {"subject": subject})  # fmt: skip
        runs = _get_subject(dataset, entry, subject, data_dir)
        if sessions:
            runs = {k: v for k, v in runs.items() if any(_session_matches(w, k) for w in sessions)}
        done[str(subject)] = {**_write_subject(root, subject, runs, paradigm, stop),
                              "all_sessions": not sessions}  # fmt: skip
        (root / RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
    progress(f"{entry.name}: {len(todo)} subject(s) written", 1.0, {})
    return _summary(root, entry, chosen, todo, done, paradigm) + load


def _get_subject(dataset: Any, entry: MoabbSet, subject: int, data_dir: Path) -> dict[str, Any]:
    """One subject's {session: {run: Raw}} from MOABB, its downloads in the hidden source folder."""
    try:
        with _mne_data(Path(data_dir) / "public" / "moabb" / ".source"):
            return dict(dataset.get_data(subjects=[subject])[subject])
    except ToolException:
        raise
    except Exception as exc:  # noqa: BLE001 - MOABB's loaders raise anything; none may escape
        if _network_error(exc):
            raise ToolException(
                f"cannot reach the host MOABB downloads {entry.name} from: no network? Copy the "
                "data set into the data folder instead (fetch it with MOABB on a machine with a "
                "network, then copy its FIF files, or the source files into "
                "public/moabb/.source/)"
            ) from None
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise ToolException(
            f"MOABB could not load {entry.name} subject {subject}: "
            f"{without_server_paths(first, data_dir)}"
        ) from None


def _describe(root: Path, entry: MoabbSet) -> None:
    """dataset_description.json: the folder is then listed and loaded as one data set."""
    root.mkdir(parents=True, exist_ok=True)
    desc = {
        "Name": f"{entry.name} (MOABB)",
        "BIDSVersion": "1.9.0",
        "DatasetType": "raw",
        "License": entry.licence,
        "ReferencesAndLinks": [] if entry.doi == "none" else [f"https://doi.org/{entry.doi}"],
        "GeneratedBy": [{"Name": "brainchat fetch_dataset", "Description": _version()}],
    }
    (root / "dataset_description.json").write_text(json.dumps(desc, indent=1), encoding="utf-8")


def _listed(subjects: list[int]) -> str:
    return ", ".join(map(str, subjects[:20])) + (" ..." if len(subjects) > 20 else "")


def _summary(root: Path, entry: MoabbSet, chosen: list[int], todo: list[int],
             done: dict[str, Any], paradigm: str) -> str:  # fmt: skip
    entries = [done[str(s)] for s in chosen if str(s) in done]
    files = sum(len(e["files"]) for e in entries)
    size = sum(sum(e["files"].values()) for e in entries)
    classes = sorted({c for e in entries for c in e.get("classes", [])})
    sessions = sorted({s for e in entries for s in e.get("sessions", [])})
    cite = "" if entry.doi == "none" else f"; cite doi:{entry.doi}"
    demo = "; generated random signals, no real effect: for trying the pipeline"
    demo = demo if entry.name == DEMO else ""
    return (
        f"fetched MOABB {entry.name} ({paradigm}{demo}) into public/moabb/{entry.name}/: "
        f"subject(s) {_listed(chosen)} ({len(todo)} fetched now, {len(chosen) - len(todo)} "
        f"already there), session(s) {', '.join(sessions)}, {files} FIF recording(s), "
        f"{mb(size)}; classes as annotations: {', '.join(classes)}; licence {entry.licence}"
        f"{cite}; "
    )
