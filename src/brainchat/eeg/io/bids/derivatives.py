"""Epochs and results as BIDS derivatives (BIDS 1.9, "Derivatives" and "Common data types").

Where: `<BIDS root>/derivatives/brainchat/` when every loaded recording comes from one BIDS
dataset in the data folder, else the data folder's `derivatives/brainchat/`; never outside the
data folder (a `derivatives` link pointing out is refused). What:

    dataset_description.json       DatasetType "derivative", GeneratedBy brainchat + version,
                                   SourceDatasets "bids:raw:" (DatasetLinks: raw is ../../)
    .bidsignore                    the files below, which the BIDS specification does not define
    sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_desc-brainchat_epo.fif   (+ .json sidecar)
    sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_desc-brainchat_trials.tsv (+ .json): each trial
                                   kept or rejected, its source, onset, sample and events.tsv
                                   row, why a rejected one went (epochs_files.py)
    desc-brainchat_results.json    models, settings, test-set metrics
    sub-01/[ses-1/]eeg/sub-01_..._desc-crossval_scores.tsv (+ .json), desc-crossval_stats.tsv
                                   cross_validate's results (crossval_files.py)

Epochs are written per subject and session (the study keeps its epochs as one array with a
subject and session per epoch). Nothing is overwritten unless `replace` is given (the
replace_bids_derivatives tool, which asks the user first; it also removes brainchat's earlier
epochs of subjects no longer in the study, so no stale file stays), and never a file brainchat
did not write there: a folder whose dataset_description.json names another pipeline is refused.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import ToolException

from brainchat.eeg.io.bids.crossval_files import (
    SCORES,
    STATS,
    crossval_files,
    is_crossval_file,
)
from brainchat.eeg.io.bids.entities import DESCRIPTION, parse_name, root_of
from brainchat.eeg.io.bids.epochs_files import TRIALS, trials_path, write_epochs, write_json
from brainchat.eeg.io.paths import relative_name, resolve_in_data_dir

if TYPE_CHECKING:
    from brainchat.eeg.core.state import StudyState

PIPELINE = "brainchat"
DESC = f"desc-{PIPELINE}"
NOTHING = (
    "nothing to write as BIDS derivatives: cut epochs first (epoch_data), and train or "
    "evaluate a model for results"
)
IGNORE = ".bidsignore"
OWN = (f"{DESC}_epo.fif", f"{DESC}_epo.json", f"{DESC}{TRIALS}.tsv", f"{DESC}{TRIALS}.json")
CANCELLED = "writing the derivatives was stopped; files already written stay (run it again)"


@dataclass(frozen=True)
class Written:
    folder: Path
    files: tuple[Path, ...]
    replaced: int

    def text(self, data_dir: Path) -> str:
        names = [relative_name(data_dir, f) for f in self.files]
        # the data files first: the sidecars and the .bidsignore beside them say less
        names.sort(key=lambda n: n.endswith((".json", IGNORE)))
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        again = f" ({self.replaced} replaced)" if self.replaced else ""
        return (
            f"wrote {len(names)} file(s) as BIDS derivatives{again} in the data folder's "
            f"{relative_name(data_dir, self.folder)}/: {shown}"
        )


def destination(state: StudyState, data_dir: Path) -> tuple[Path, Path]:
    """(derivatives folder, the source dataset it derives from), both inside the data folder."""
    root = Path(data_dir).resolve()
    roots = {root_of(r.path) for r in state.recordings}
    source = roots.pop() if len(roots) == 1 else None
    if source is None or not source.is_relative_to(root):
        source = root
    rel = source.relative_to(root) / "derivatives" / PIPELINE
    return resolve_in_data_dir(data_dir, rel), source


def write_derivatives(
    state: StudyState,
    data_dir: Path,
    version: str,
    metrics: dict[str, Any],
    replace: bool = False,
    stop: threading.Event | None = None,
) -> Written:
    """Write the study's epochs (per subject/session) and results; see the module's docstring."""
    if state.epochs is None and not state.models:
        raise ToolException(NOTHING)
    folder, source = destination(state, data_dir)
    planned = _epoch_files(state, folder, source) if state.epochs is not None else []
    results = _results(state, metrics)
    scores = crossval_files(state, folder)  # cross_validate's results, as text
    targets = [folder / DESCRIPTION, folder / IGNORE, *[p for p, _ in planned]]
    targets += [p.with_suffix(".json") for p, _ in planned]
    targets += [
        q for p, _ in planned for q in (trials_path(p), trials_path(p).with_suffix(".json"))
    ]
    if results:
        targets.append(folder / f"{DESC}_results.json")
    targets += list(scores)
    _check_ours(folder)
    for target in targets:  # a link (or a linked folder) would write over what it points at
        resolve_in_data_dir(data_dir, target)
        if target.is_symlink():
            raise ToolException(
                f"'{relative_name(data_dir, target)}' is a link; brainchat writes derivatives "
                "only as files of their own: nothing was written (remove the link)"
            )
    existing = [t for t in targets if t.exists() or t.is_symlink()]
    shown = [relative_name(data_dir, t) for t in existing if t.name not in (DESCRIPTION, IGNORE)]
    if shown and not replace:
        raise ToolException(
            f"BIDS derivatives are already there ({', '.join(shown[:5])}"
            f"{f' and {len(shown) - 5} more' if len(shown) > 5 else ''}); nothing was written. "
            "replace_bids_derivatives replaces them (it asks the user first)"
        )
    stale = [p for p in _ours(folder) if p not in targets] if replace else []
    written = [_write_description(folder, source, version), _write_ignore(folder)]
    for path, (mask, indices, sources) in planned:
        if stop is not None and stop.is_set():
            raise ToolException(CANCELLED)
        written += write_epochs(state, path, mask, indices, sources)
    if results:
        written.append(write_json(folder / f"{DESC}_results.json", results))
    for path, text in scores.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    for path in stale:  # brainchat's earlier epochs of recordings no longer in the study
        path.unlink(missing_ok=True)
    return Written(folder, tuple(written), len(shown) + len(stale))


def _ours(folder: Path) -> list[Path]:
    """The files brainchat wrote in its derivatives folder (by their names), links not followed."""
    found = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not Path(here, d).is_symlink()]
        found += [
            Path(here, f)
            for f in files
            if f.endswith(OWN) or f == f"{DESC}_results.json" or is_crossval_file(f)
        ]
    return found


def _check_ours(folder: Path) -> None:
    """Refuse a derivatives folder another pipeline wrote (or a link where one should be)."""
    desc = folder / DESCRIPTION
    if desc.is_symlink():
        raise ToolException(f"{DESCRIPTION} in derivatives/{PIPELINE}/ is a link; nothing written")
    if not desc.exists():
        return
    try:
        data = json.loads(desc.read_text(encoding="utf-8"))
        names = [g.get("Name") for g in data.get("GeneratedBy", []) if isinstance(g, dict)]
    except (OSError, ValueError, AttributeError):
        names = []
    if PIPELINE not in names:
        raise ToolException(
            f"derivatives/{PIPELINE}/ holds a {DESCRIPTION} that brainchat did not write; "
            "nothing was written there (move that folder away first)"
        )


def _label(text: str) -> str:
    """A BIDS label from what the study calls a subject or session (letters and digits)."""
    return re.sub(r"[^A-Za-z0-9]", "", str(text)) or "unknown"


def _epoch_files(
    state: StudyState, folder: Path, source: Path
) -> list[tuple[Path, tuple[Any, list[int], list[str]]]]:
    """Per subject/session: its epochs file and (rows of the study's epochs, its recordings'
    indices, their BIDS URIs)."""
    eps = state.eps
    names = [parse_name(r.path.name) for r in state.recordings]
    with_ses = not all(names) or any(n.session for n in names if n)
    out = []
    pairs = sorted({(str(s), str(e)) for s, e in zip(eps.subjects, eps.sessions, strict=True)})
    for subject, session in pairs:
        mask = (eps.subjects.astype(str) == subject) & (eps.sessions.astype(str) == session)
        indices = [
            i
            for i, r in enumerate(state.recordings)
            if (r.subject, r.session) == (subject, session)
        ]
        recs = [state.recordings[i] for i in indices]
        tasks = {n.task for r in recs if (n := parse_name(r.path.name)) is not None and n.task}
        parts = [f"sub-{_label(subject)}"] + ([f"ses-{_label(session)}"] if with_ses else [])
        stem = "_".join(parts + ([f"task-{tasks.pop()}"] if len(tasks) == 1 else []) + [DESC])
        path = folder.joinpath(*parts, "eeg", f"{stem}_epo.fif")
        sources = [_source(r.path, source) for r in recs]
        out.append((path, (mask, indices, sources)))
    return out


def _source(path: Path, source: Path) -> str:
    """A BIDS URI of a raw recording ('bids:raw:sub-01/...'; DatasetLinks names 'raw')."""
    try:
        return f"bids:raw:{path.resolve().relative_to(source).as_posix()}"
    except ValueError:
        return f"bids:raw:{path.name}"


def _write_description(folder: Path, source: Path, version: str) -> Path:
    from mne_bids import make_dataset_description

    folder.mkdir(parents=True, exist_ok=True)
    make_dataset_description(
        path=folder,
        name=f"{PIPELINE} derivatives of {source.name}",
        dataset_type="derivative",
        generated_by=[
            {
                "Name": PIPELINE,
                "Version": version,
                "Description": "EEG research chat: epochs and decoding results",
            }
        ],
        # a BIDS URI (the validator wants a URI here, which "../../" is not), resolved by
        # DatasetLinks below: the source dataset is two folders up
        source_datasets=[{"URL": "bids:raw:"}],
        overwrite=True,
        verbose="error",
    )
    path = folder / DESCRIPTION
    data = json.loads(path.read_text(encoding="utf-8"))
    data["DatasetLinks"] = {"raw": "../../"}  # resolves the bids:raw: URIs of the sidecars
    return write_json(path, data)


def _write_ignore(folder: Path) -> Path:
    """A .bidsignore naming brainchat's files that the BIDS specification does not define
    (epochs and decoding results), as BIDS asks of files outside it."""
    lines = [f"*{own}" for own in OWN]
    lines += [f"{DESC}_results.json", f"*{SCORES}.tsv", f"*{SCORES}.json"]
    lines += [f"{STATS}.tsv", f"{STATS}.json"]
    path = folder / IGNORE
    if path.is_symlink():
        path.unlink()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _results(state: StudyState, metrics: dict[str, Any]) -> dict[str, Any]:
    """The models' settings and test-set metrics."""
    if not state.models:
        return {}
    return {
        "Description": "Decoders trained by brainchat and their test-set metrics",
        "Split": {"by": state.split.by, "seed": state.split.seed} if state.split else None,
        "Models": {
            name: {"kind": m.kind, "config": m.config, "metrics": metrics.get(name)}
            for name, m in state.models.items()
        },
    }
