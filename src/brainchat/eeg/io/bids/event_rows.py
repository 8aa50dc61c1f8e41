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
    near = _by_sample(table, sfreq)
    used: set[int] = set()
    for i, (sample, name) in enumerate(zip(samples, names, strict=True)):
        free = [r for r in near.get(int(sample - first_samp), ()) if r[0] not in used]
        if not free:
            continue
        same = [r for r in free if name == r[2] or name.startswith(f"{r[2]}/")]
        number, onset, _ = (same or free)[0]
        used.add(number)
        rows[i], onsets[i] = number, onset
    return rows, onsets


def _by_sample(
    table: list[tuple[int, float, str]], sfreq: float
) -> dict[int, list[tuple[int, float, str]]]:
    """The rows whose onset lies within half a sample of each sample, in row order: one pass
    over the table, so matching every event costs one lookup (a table of 100,000 rows against
    as many events would otherwise be 10^10 comparisons)."""
    out: dict[int, list[tuple[int, float, str]]] = {}
    for row in table:
        at = row[1] * sfreq
        if not np.isfinite(at):
            continue
        for sample in {int(np.floor(at)), int(np.ceil(at))}:
            if abs(at - sample) <= 0.5 + 1e-6:
                out.setdefault(sample, []).append(row)
    return out
