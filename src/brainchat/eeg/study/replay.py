"""The study's operation log: what to record, how to keep it short, and how to replay it.

Each committed operation that changes the study is one JSON-able entry (`{"op": "load", ...}`).
The log is stored with the conversation; after a restart the study is rebuilt by replaying it on
the files in the data folder, and trained models are read back from their saved files (never
retrained). Replay stops at the first entry that cannot be applied and says why.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.analyses import ANALYSES, entry_label
from brainchat.eeg.core.state import Step, StudyState

Entry = dict[str, Any]
ON_EPOCHS = tuple(a.op for a in ANALYSES.values() if a.on_epochs)  # moot once re-epoched
DERIVED = {
    "epoch": ("epoch", "split", "train", "crossval", *ON_EPOCHS),
    "split": ("split", "train"),
}


def compact(log: list[Entry], entry: Entry) -> list[Entry]:
    """The log after `entry`, without the entries it makes moot."""
    op = entry["op"]
    if op == "clear":
        return []
    if op == "reset":
        loads = [i for i, e in enumerate(log) if e["op"] == "load"]
        return log[: loads[-1] + 1] if loads else []
    if op == "crossval":  # a protocol's new result replaces its earlier one
        protocol = entry["config"]["protocol"]
        return [*(e for e in log if not _crossval_of(e, protocol)), entry]
    if op in ANALYSES:  # the same analysis asked again of the same data: its newer result
        last = log[-1] if log else None
        same = last is not None and last["op"] == op and last.get("params") == entry.get("params")
        return [*(log[:-1] if same else log), entry]
    dropped = DERIVED.get(op, ())
    return [*(e for e in log if e["op"] not in dropped), entry]


def _crossval_of(entry: Entry, protocol: str) -> bool:
    return entry["op"] == "crossval" and entry["config"]["protocol"] == protocol


def label(entry: Entry) -> str:
    """A few words for one entry, as the restore step lists them."""
    op = entry["op"]
    if op == "load":
        return f"load {len(entry['files'])} file(s)"
    if op == "step":
        return str(entry["step"]["label"])
    if op == "ica_fit":
        return f"ICA fit ({entry['n_components']} components)"
    if op == "ica_apply":
        return f"ICA minus {entry['exclude']}"
    if op == "epoch":
        return f"epochs {entry['tmin']:g}..{entry['tmax']:g} s"
    if op == "split":
        return f"split by {entry['by']} (seed {entry['seed']})"
    if op == "train":
        saved = "" if entry.get("file") else " (not saved: retrain it)"
        return f"model '{entry.get('name', entry['config'].get('model'))}'{saved}"
    if op == "crossval":
        cfg = entry["config"]
        return f"cross-validation {cfg['protocol']} ({', '.join(cfg['pipelines'])})"
    if op in ANALYSES:
        return entry_label(entry)
    return op


class ReplayStopped(Exception):
    """The stop flag was set (the user pressed Stop): the replay ended between two entries and
    its partial result must not be kept (the saved log stays pending)."""


@dataclass
class Replayed:
    state: StudyState
    done: list[Entry] = field(default_factory=list)
    problem: str | None = None


def replay(log: list[Entry], data_dir: Path, key: bytes, stop: threading.Event) -> Replayed:
    """Rebuild a study from its log; stop at the first entry that fails (the study keeps the rest)."""
    out = Replayed(StudyState())
    for entry in log:
        if stop.is_set():  # checked between entries: a Stop waits for one entry at most
            raise ReplayStopped(f"stopped before {label(entry)}")
        try:
            out.state = apply(entry, out.state, data_dir, key, stop)
        except Exception as exc:  # noqa: BLE001 - any failure (a replaced .pt file: pickle's
            # UnpicklingError) ends the replay with what it rebuilt; escaping, it would come back
            # on every later step, since the log stays pending until a replay commits
            if stop.is_set():
                raise ReplayStopped(f"stopped during {label(entry)}") from exc
            first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            out.problem = f"{label(entry)}: {first}"
            break
        out.done.append(entry)
    return out


def apply(
    entry: Entry, state: StudyState, data_dir: Path, key: bytes, stop: threading.Event
) -> StudyState:
    """One entry applied to `state` with the same operations the tools use."""
    from brainchat.eeg.decoding import decoding
    from brainchat.eeg.preprocessing import dataset, preprocessing

    op = entry["op"]
    if op == "load":
        return preprocessing.load_op(data_dir, list(entry["files"]))(StudyState(), stop)[0]
    if op == "step":
        step = Step(entry["step"]["op"], dict(entry["step"]["params"]), entry["step"]["label"])
        return preprocessing.step_op(step)(state, stop)[0]
    if op == "reset":
        return preprocessing.reset_op(state, stop)[0]
    if op == "ica_fit":
        make = decoding.ica_fit_op(entry["n_components"], entry["method"], entry["seed"])
        return make(state, stop)[0]
    if op == "ica_apply":
        new = preprocessing.step_op(decoding.ica_apply_step(state, list(entry["exclude"])))
        return replace(new(state, stop)[0], ica=None)
    if op == "epoch":
        base = tuple(entry["baseline"]) if entry.get("baseline") is not None else None
        make = dataset.epoch_op(
            entry["tmin"], entry["tmax"], entry.get("events"), base, entry.get("reject_uv")
        )
        return make(state, stop)[0]
    if op == "split":
        make = dataset.split_op(entry["by"], entry["test_ratio"], entry["val_ratio"], entry["seed"])
        return make(state, stop)[0]
    if op == "train":
        return _with_model(entry, state, data_dir, key)
    if op == "crossval":  # its result comes back as it was computed, never refitted
        state.require("epoched")
        protocol = entry["config"]["protocol"]
        return replace(state, crossval={**state.crossval, protocol: dict(entry["result"])})
    if op in ANALYSES:  # it changed nothing; its result is kept in its entry
        return state
    raise ValueError(f"unknown operation {op!r} in the saved study")


def _with_model(entry: Entry, state: StudyState, data_dir: Path, key: bytes) -> StudyState:
    from brainchat.eeg.io.paths import resolve_in_data_dir
    from brainchat.eeg.study.saved import load_model

    state.require("split")
    if not entry.get("file"):
        raise ToolException("its weights were not saved when it was trained")
    model = load_model(resolve_in_data_dir(data_dir, entry["file"]), state, key)
    return replace(state, models={**state.models, model.name: model})


def planned(log: list[Entry]) -> dict[str, Any]:
    """What replaying `log` gives, read from the log alone (nothing is loaded): the stage, the
    preprocessing steps, the trained models and whether an ICA is fitted, as `study_facts` says
    them of a live study. Until the replay runs, the agent, its tool offer and its plan checks
    see the study as it will be, not as an empty one."""
    stage, ica = "empty", False
    steps: list[dict[str, Any]] = []
    models: list[str] = []
    for entry in log:
        op = entry["op"]
        if op in ("load", "clear", "reset"):
            stage = "loaded" if op != "clear" else "empty"
            steps, models, ica = [], [], False
        elif op == "step":
            steps.append({"op": entry["step"]["op"], "params": dict(entry["step"]["params"])})
        elif op == "ica_fit":
            ica = True
        elif op == "ica_apply":
            steps.append({"op": "ica", "params": {"exclude": list(entry["exclude"])}})
            ica = False
        elif op in ("epoch", "split"):
            stage, models = ("epoched" if op == "epoch" else "split"), []
        elif op == "train":
            stage = "trained"
            models.append(str(entry.get("name") or entry["config"].get("model")))
    files = next((list(e["files"]) for e in reversed(log) if e["op"] == "load"), [])
    files = [] if stage == "empty" else files
    return {"stage": stage, "steps": steps, "models": sorted(set(models)), "ica": ica,
            "files": files}  # fmt: skip


def summary(log: list[Entry]) -> str:
    """The study as the model sees it before the replay: what will be restored on first use."""
    if not log:
        return "EEG study: empty."
    steps = "; ".join(label(e) for e in log)
    return (
        f"EEG study: stage={planned(log)['stage']} (saved with this conversation; restored "
        f"automatically at the first EEG tool call): {steps}."
    )
