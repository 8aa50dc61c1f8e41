"""Where each trial of the epochs came from: its recording, its event's sample and onset, its
row of the recording's events.tsv, and, for a trial epoch_data rejected, why (MNE's drop_log).
The derivatives are written from this (io/bids/provenance.py); a scored epoch is traced back
through it to the events.tsv row it was cut around."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# drop_log entries that are not channel names (mne.Epochs)
EDGE = "the epoch's window runs past the start or end of the recording"
NOT_CHANNELS = {
    "TOO_SHORT": EDGE,
    "NO_DATA": "no data under the epoch's window",
    "IGNORED": "not an event of the chosen classes",
    "USER": "dropped by hand",
}


@dataclass(frozen=True)
class Trials:
    """Every event epoch_data cut around, kept or rejected, recording by recording in the
    study's order and in time within each; the kept ones in EpochSet's order."""

    recording: Any  # (n,) int: index into StudyState.recordings
    sample: Any  # (n,) int: the event's sample in its recording as epoched (Epochs.events[:, 0])
    onset: Any  # (n,) float: seconds from the recording's first sample
    row: Any  # (n,) int: 1-based data row of the recording's events.tsv; 0: it has none
    label: Any  # (n,) int: index into EpochSet.classes
    epoch: Any  # (n,) int: the kept trial's index in EpochSet.X; -1: rejected
    drop: tuple[tuple[str, ...], ...]  # MNE's drop_log entry of each trial; () when kept
    reject_uv: float | None = None  # epoch_data's peak-to-peak threshold, if any

    def reason(self, i: int) -> str:
        """Why trial `i` was rejected, in words ('' when it was kept)."""
        entry = self.drop[i]
        if not entry:
            return ""
        channels = [c for c in entry if c not in NOT_CHANNELS]
        words = [NOT_CHANNELS[c] for c in entry if c in NOT_CHANNELS]
        if channels:
            limit = f" ({self.reject_uv:g} µV)" if self.reject_uv else ""
            words.insert(
                0, f"peak-to-peak amplitude over reject_uv{limit} in {', '.join(channels)}"
            )
        return "; ".join(words)


def of_recording(
    index: int,
    events: Any,
    epochs: Any,
    rows: Any,
    onsets: Any,
    first_epoch: int,
    reject_uv: float | None,
) -> Trials:
    """The trials of one recording: `events` as given to mne.Epochs, `epochs` what it kept,
    `rows` and `onsets` each event's events.tsv row (0: none) and onset in seconds."""
    n = len(events)
    kept = np.asarray(epochs.selection, int)
    epoch = np.full(n, -1)
    epoch[kept] = first_epoch + np.arange(len(kept))
    return Trials(
        recording=np.full(n, index),
        sample=events[:, 0].astype(int),
        onset=np.asarray(onsets, float),
        row=np.asarray(rows, int),
        label=events[:, 2].astype(int) - 1,
        epoch=epoch,
        drop=tuple(tuple(d) for d in epochs.drop_log[:n]),
        reject_uv=reject_uv,
    )


def joined(parts: list[Trials]) -> Trials:
    """The trials of several recordings, in order."""

    def cat(name: str, dtype: type) -> Any:
        arrays: list[Any] = [np.asarray(getattr(p, name), dtype) for p in parts]
        return np.concatenate(arrays) if arrays else np.zeros(0, dtype)

    return Trials(
        recording=cat("recording", int),
        sample=cat("sample", int),
        onset=cat("onset", float),
        row=cat("row", int),
        label=cat("label", int),
        epoch=cat("epoch", int),
        drop=tuple(d for p in parts for d in p.drop),
        reject_uv=parts[0].reject_uv if parts else None,
    )
