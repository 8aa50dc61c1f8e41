"""The analyses that report on the data without changing it (spectra, ERPs, time-frequency,
cluster statistics, artifact detection): their names, where their code is, what they need.

Each is one log entry `{"op": OP, "params": {...}, "result": {...}}`: the tool logs it with its
result, a resumed study gets the result back without recomputing it, the exported script calls
the same entry function (its source copied in) and the report shows the result's table.

An analysis module (eeg/analysis/) defines, for each analysis:
- `ENTRY(data, *, stop=None, **params) -> dict`: the result, JSON-able (numbers, strings, lists,
  dicts), with `rows` (a list of flat dicts: the table) and optionally `notes` (strings). `data`
  is `{"raws": [mne Raw], "names": [file name], "epochs": dict | None, "ica": ICA | None}`;
  `epochs` holds X (n, ch, t, volts), y (class index), classes, info (mne.Info), tmin, sfreq,
  subjects, sessions. The function imports what it needs inside its body and calls only the
  module's other exported functions: its source is copied into the exported script.
- `text(result) -> str`: the result as the model reads it (every figure the answer may cite).
- `figure(data, result, **params) -> bytes | None`: a PNG beside the numbers (None: no figure).
- `EXPORTED`: the names of the functions the script needs, in order (the entry among them).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Analysis:
    op: str  # the log entry's op
    tool: str  # the agent tool that runs it
    module: str  # the module under brainchat.eeg.analysis that computes it
    entry: str  # its entry function in that module
    needs: str  # the study's stage it needs ("loaded", "epoched"), or "ica" (a fitted ICA)
    about: str  # a few words for the step lists ("band power")
    on_epochs: bool  # it reads the epochs: a new epoching makes its result moot


ANALYSES: dict[str, Analysis] = {
    a.op: a
    for a in (
        Analysis("band_power", "band_power", "spectra", "band_power", "loaded", "band power", False),
        Analysis("erp", "erp_analysis", "erp", "erp_analysis", "epoched", "ERP", True),
        Analysis("tfr", "time_frequency", "tfr", "time_frequency", "epoched", "time-frequency", True),
        Analysis("cluster", "cluster_test", "clusters", "cluster_test", "epoched", "cluster test", True),
        Analysis("artifact_scan", "find_artifacts", "artifacts", "find_artifacts", "loaded", "artifact scan", False),
        Analysis("ica_match", "ica_find_artifacts", "artifacts", "ica_find_artifacts", "ica", "ICA artifact match", False),
    )
}  # fmt: skip
BY_TOOL = {a.tool: a for a in ANALYSES.values()}


def entry_label(entry: dict) -> str:
    """A few words for one analysis entry of the log: its name and its parameters."""
    spec = ANALYSES[entry["op"]]
    params = entry.get("params") or {}
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if v is not None)
    return f"{spec.about} ({shown})" if shown else spec.about


# the log entries that change the data an analysis read: after one, its figure cannot be redrawn
CHANGES_RECORDINGS = ("load", "clear", "reset", "step", "ica_apply")
CHANGES_EPOCHS = (*CHANGES_RECORDINGS, "epoch")


def module_of(op: str) -> Any:
    """The analysis module that computes `op` (imported on first use: it may import MNE)."""
    return importlib.import_module(f"brainchat.eeg.analysis.{ANALYSES[op].module}")


def analysis_data(state: Any) -> dict[str, Any]:
    """What an analysis reads of the study (`data` of its entry function): a StudyState's
    recordings, their names, its epochs as a dict, and its fitted ICA."""
    eps = state.epochs
    epochs = None
    if eps is not None:
        epochs = {
            "X": eps.X,
            "y": eps.y,
            "classes": list(eps.classes),
            "info": eps.info,
            "tmin": float(eps.tmin),
            "sfreq": float(eps.info["sfreq"]),
            "subjects": eps.subjects,
            "sessions": eps.sessions,
        }
    return {
        "raws": list(state.raws),
        "names": [r.name for r in state.recordings],
        "epochs": epochs,
        "ica": state.ica,
    }


def data_unchanged_after(log: list[dict[str, Any]], index: int) -> bool:
    """Whether the data the analysis at `log[index]` read is still the study's (no later entry
    changed it), so its figure can be drawn again from the study as it is."""
    spec = ANALYSES[log[index]["op"]]
    changes = CHANGES_EPOCHS if spec.on_epochs else CHANGES_RECORDINGS
    if spec.needs == "ica":  # a new fit is another ICA
        changes = (*changes, "ica_fit")
    return not any(e["op"] in changes for e in log[index + 1 :])
