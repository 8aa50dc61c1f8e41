"""One subject/session's epochs as derivative files, each epoch traceable to its events.tsv row
(derivatives.py decides where they go):

    <stem>_epo.fif      the epochs; events[:, 0] the events' own samples (the recordings laid end
                        to end in the order of Sources), their metadata the columns below, and
                        MNE's drop_log listing the rejected trials
    <stem>_epo.json     sidecar: sources, window, sampling rate, classes, steps
    <stem>_trials.tsv   every trial of the recordings, kept or rejected: its epoch, source file,
                        onset, sample and events.tsv row, and why a rejected one went (+ .json)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brainchat.eeg.core.state import StudyState
    from brainchat.eeg.core.trials import Trials

TRIALS = "_trials"
COLUMNS = {
    "epoch": "the epoch's index in the _epo.fif beside this file (0-based, the file's order); "
    "n/a for a rejected trial",
    "trial_type": "the class the event names",
    "source": "the recording the trial was cut from, as a BIDS URI (bids:raw: is the source "
    "dataset, see DatasetLinks in dataset_description.json)",
    "onset": "seconds from the recording's first sample to the event (the onset in its "
    "events.tsv, when it has one)",
    "sample": "the event's sample in the recording, counted from its first sample at "
    "SamplingFrequency (the recording's own rate unless a resample step changed it)",
    "events_row": "the event's row in the recording's events.tsv (1-based, the header not "
    "counted); n/a when the recording has no events.tsv (its events came from the file)",
    "status": "kept (an epoch of the _epo.fif) or rejected (cut, then dropped by epoch_data)",
    "reason": "why a rejected trial was dropped: MNE's drop_log in words (the channels whose "
    "peak-to-peak amplitude was over reject_uv, or a window past the recording's edge); n/a "
    "when kept",
}


def trials_path(epo: Path) -> Path:
    """The trials table beside an epochs file."""
    return epo.with_name(epo.name.replace("_epo.fif", f"{TRIALS}.tsv"))


def _picked(trials: Trials, indices: list[int]) -> list[int]:
    """The trials of the recordings `indices`, in the study's order."""
    wanted = set(indices)
    return [i for i, r in enumerate(trials.recording.tolist()) if r in wanted]


def _rows(state: StudyState, picked: list[int], sources: dict[int, str]) -> list[list[Any]]:
    eps = state.eps
    t = eps.trials
    assert t is not None
    out, kept = [], 0
    for i in picked:
        is_kept = int(t.epoch[i]) >= 0
        out.append([
            kept if is_kept else None, eps.classes[int(t.label[i])], sources[int(t.recording[i])],
            float(t.onset[i]), int(t.sample[i]) - state.raws[int(t.recording[i])].first_samp,
            int(t.row[i]) or None, "kept" if is_kept else "rejected", t.reason(i) or None,
        ])  # fmt: skip
        kept += is_kept
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    return repr(value) if isinstance(value, float) else str(value).replace("\t", " ")


def _fif(state: StudyState, path: Path, mask: Any, picked: list[int], rows: list[list[Any]]) -> int:
    """Save the epochs with their events' own samples, metadata and drop log; the rejected count."""
    import mne
    import numpy as np
    import pandas as pd

    eps = state.eps
    t = eps.trials
    assert t is not None
    recordings = sorted({int(t.recording[i]) for i in picked})
    ends = np.cumsum([0] + [state.raws[r].n_times for r in recordings]).tolist()
    offset = dict(zip(recordings, ends[:-1], strict=False))  # the recordings laid end to end
    kept = [n for n, row in enumerate(rows) if row[0] is not None]
    events = np.array(
        [[rows[n][4] + offset[int(t.recording[picked[n]])], 0, int(t.label[picked[n]]) + 1]
         for n in kept], int,
    ).reshape(-1, 3)  # fmt: skip
    y = np.asarray(eps.y)[mask]
    present = {c: i + 1 for i, c in enumerate(eps.classes) if (y == i).any()}
    meta = pd.DataFrame(
        [[_cell(v) if v is None else v for v in row[1:6]] for row in rows if row[0] is not None],
        columns=list(COLUMNS)[1:6],
    )
    epochs = mne.EpochsArray(
        eps.X[mask], eps.info, events=events, tmin=eps.tmin, event_id=present or None,
        metadata=meta, selection=kept,
        drop_log=tuple(t.drop[i] for i in picked), verbose="error",
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    epochs.save(path, overwrite=True, verbose="error")
    return len(picked) - len(kept)


def write_epochs(
    state: StudyState, path: Path, mask: Any, indices: list[int], sources: list[str]
) -> list[Path]:
    """The epochs of recordings `indices` (rows `mask` of the study's epochs), their sidecar
    and their trials table with its sidecar."""
    import numpy as np

    eps = state.eps
    if eps.trials is None:
        raise ValueError("epochs without their trials: cut them again with epoch_data")
    picked = _picked(eps.trials, indices)
    rows = _rows(state, picked, dict(zip(indices, sources, strict=True)))
    rejected = _fif(state, path, mask, picked, rows)
    y = np.asarray(eps.y)[mask]
    n_times = eps.X.shape[2]
    table = trials_path(path)
    sidecar = {
        "Description": "Epochs cut by brainchat around the class events, after the listed steps",
        "Sources": sources,
        "EpochsTmin": float(eps.tmin),
        "EpochsTmax": float(eps.tmin + (n_times - 1) / eps.info["sfreq"]),
        "SamplingFrequency": float(eps.info["sfreq"]),
        "Classes": {c: int((y == i).sum()) for i, c in enumerate(eps.classes)},
        "Preprocessing": [s.label for s in state.history],
        "RejectPeakToPeakMicrovolts": eps.trials.reject_uv,
        "Rejected": rejected,
        "Trials": table.name,
        "EventSamples": "events[:, 0] of the .fif: each event's own sample, the recordings of "
        "Sources laid end to end in their order (the first one's samples as they are); its "
        f"metadata holds each epoch's source, onset, sample and events_row (see {table.name})",
    }
    text = "\n".join(["\t".join(COLUMNS), *("\t".join(map(_cell, r)) for r in rows)]) + "\n"
    table.write_text(text, encoding="utf-8")
    about: dict[str, Any] = {
        "Description": "Every trial epoch_data cut around in the recordings of "
        f"{path.name}, kept or rejected, in recording order and in time",
        **{k: {"Description": v} for k, v in COLUMNS.items()},
    }
    about["status"]["Levels"] = {"kept": "an epoch of the .fif", "rejected": "dropped"}
    return [
        path,
        write_json(path.with_suffix(".json"), sidecar),
        table,
        write_json(table.with_suffix(".json"), about),
    ]


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()  # replace the link itself, never the file it points at
    path.write_text(json.dumps(data, indent=2, default=_plain) + "\n", encoding="utf-8")
    return path


def _plain(value: Any) -> Any:
    """numpy numbers and arrays in metrics, as JSON numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
