"""Each epoch's row of its recording's events.tsv: read_raw turned the rows into annotations
and MNE the annotations into event samples, so an event is matched back to the row whose onset
gives its sample (as mne.events_from_annotations rounds it), the same trial type first."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

from brainchat.eeg.io.bids.read import events_sidecar


def _rows(path: Path) -> list[tuple[int, float, str]]:
    """(1-based data row, onset, trial_type) of every row with a numeric onset."""
    out = []
    try:
        with path.open(encoding="utf-8", newline="") as f:
            for number, row in enumerate(csv.DictReader(f, delimiter="\t"), start=1):
                try:
                    onset = float(row.get("onset") or "n/a")
                except ValueError:
                    continue
                out.append((number, onset, str(row.get("trial_type") or "")))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []  # read_raw read it (or refused the recording): nothing to trace here
    return out


def event_rows(
    recording: Path, samples: Any, names: list[str], first_samp: int, sfreq: float
) -> tuple[Any, Any]:
    """(row, onset) of each event: its 1-based data row of the recording's events.tsv (0 when
    the recording has none, or no row gives that sample) and its onset in seconds (the row's,
    else the sample's time from the recording's first sample)."""
    samples = np.asarray(samples, int)
    rows = np.zeros(len(samples), int)
    onsets = (samples - first_samp) / sfreq
    path = events_sidecar(recording)
    table = _rows(path) if path is not None else []
    used: set[int] = set()
    for i, (sample, name) in enumerate(zip(samples, names, strict=True)):
        near = [
            r for r in table
            if r[0] not in used and abs(r[1] * sfreq - (sample - first_samp)) <= 0.5 + 1e-6
        ]  # fmt: skip
        if not near:
            continue
        same = [r for r in near if name == r[2] or name.startswith(f"{r[2]}/")]
        number, onset, _ = (same or near)[0]
        used.add(number)
        rows[i], onsets[i] = number, onset
    return rows, onsets
