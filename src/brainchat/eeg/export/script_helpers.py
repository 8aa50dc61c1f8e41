"""The helper functions of an exported analysis script (see export_script.py). NOT imported by brainchat.

Its text, from the first section marker on, is copied into every exported script, so it must not
import brainchat. Each helper mirrors the brainchat code named in its docstring; the honesty test
(tests/test_export.py) runs an exported script and compares its numbers with the study's, so a
change on one side without the other fails there. Its "common" section goes into every script;
the "torch" section of script_helpers_torch.py follows it when a network was trained.
"""
# ruff: noqa: E402

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import mne
import numpy as np

MODELS: dict[str, Any] = {}
RESULTS: dict[str, Any] = {}
NETWORK_CLASSES: dict[str, Any] = {}  # written into the script after the network classes
train_network: Any = None  # the torch section (script_helpers_torch.py), when a network is trained
CSPFeatures: Any = None  # brainchat.eeg.decoding.csp's CSP, copied into every script before this

# === section: common


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


READERS = {
    "edf": mne.io.read_raw_edf,
    "bdf": mne.io.read_raw_bdf,
    "gdf": mne.io.read_raw_gdf,
    "fif": mne.io.read_raw_fif,
    "set": mne.io.read_raw_eeglab,
    "vhdr": mne.io.read_raw_brainvision,
}
IGNORED_ANNOTATIONS = ("bad", "edge", "boundary")


def find_recordings(data_dir: Path, recordings: list[dict[str, Any]]) -> None:
    """Stop with what to do when DATA_DIR lacks a recording (a downloaded script run without it)."""
    missing = [r["file"] for r in recordings if not (data_dir / r["file"]).is_file()]
    if missing:
        sys.exit(
            f"not found in {data_dir}: {', '.join(missing)}. Give the data folder these "
            f"recordings' paths are relative to: python {Path(sys.argv[0]).name} DATA_DIR"
        )


def read_raw(path: Path, fmt: str) -> Any:
    """One recording in memory (brainchat.eeg.io.loading.read_raw): a file cut short loads the part
    brainchat analysed (whole GDF records, the intact FIF blocks), with a note on stderr."""
    try:
        raw = READERS[fmt](path, preload=False, verbose="error")
        if fmt == "gdf":
            crop_to_whole_records(raw, path)
        raw.load_data(verbose="error")
    except Exception:
        if fmt != "fif" or (raw := intact_fif_part(path)) is None:
            raise
        log(f"{path.name}: cut short, loaded its intact blocks")
    if fmt == "vhdr":  # BrainVision writes free-text labels as "Comment/<label>"
        ann = raw.annotations
        desc = [d.removeprefix("Comment/") for d in ann.description]
        raw.set_annotations(mne.Annotations(ann.onset, ann.duration, desc, orig_time=ann.orig_time))
    if len(mne.pick_types(raw.info, eeg=True, exclude=[])) == 0 and raw.ch_names:
        raw.set_channel_types(dict.fromkeys(raw.ch_names, "eeg"), verbose="error")
    bids_sidecars(raw, path)  # BIDS
    return raw


def _tsv(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def bids_annotations(rows: list[dict[str, str]]) -> Any:
    """events.tsv rows as annotations, as mne-bids reads them: rows without an onset or a
    trial_type are left out, and a trial_type with several values becomes 'trial_type/value'."""
    rows = [r for r in rows if r.get("onset") not in ("n/a", "nan", "NaN", "", None)]
    col = next((c for c in ("trial_type", "stim_type", "value") if rows and c in rows[0]), None)
    if col != "value" and col and "value" in rows[0] and all(r[col] == "n/a" for r in rows):
        col = "value" if any(r["value"] != "n/a" for r in rows) else col
    rows = [r for r in rows if col is None or r[col] != "n/a"]
    desc = [r[col] if col else "n/a" for r in rows]
    if col and col != "value" and rows and "value" in rows[0]:
        seen: dict[str, set[str]] = {}
        for d, r in zip(desc, rows, strict=True):
            seen.setdefault(d, set()).add(r["value"])
        desc = [f"{d}/{r['value'] if r['value'] != 'n/a' else 'na'}" if len(seen[d]) > 1 else d
                for d, r in zip(desc, rows, strict=True)]  # fmt: skip
    durations = [0.0 if r.get("duration", "n/a") == "n/a" else float(r["duration"]) for r in rows]
    return mne.Annotations([float(r["onset"]) for r in rows], durations, desc, orig_time=None)


def bids_sidecars(raw: Any, path: Path) -> None:
    """A BIDS recording's events.tsv as its annotations, channels.tsv's bad channels and types
    (brainchat.eeg.io.bids.read.apply_sidecars, which reads them with mne-bids: same rules)."""
    stem, sep, _ = path.name.rpartition("_eeg.")
    events, channels = path.with_name(f"{stem}_events.tsv"), path.with_name(f"{stem}_channels.tsv")
    subject = path.parent.parent  # sub-XX/[ses-YY/]eeg/<file>
    subject = subject.parent if subject.name.startswith("ses-") else subject
    if (
        not sep
        or path.parent.name != "eeg"
        or not (subject.parent / "dataset_description.json").is_file()
    ):
        return
    if events.is_file():
        raw.set_annotations(bids_annotations(_tsv(events)))
    if channels.is_file():
        kinds = {"EEG": "eeg", "EOG": "eog", "HEOG": "eog", "VEOG": "eog", "ECG": "ecg",
                 "EMG": "emg", "MISC": "misc", "TRIG": "stim", "RESP": "resp", "GSR": "gsr",
                 "TEMP": "temperature"}  # fmt: skip
        rows = [r for r in _tsv(channels) if r.get("name") in raw.ch_names]
        types = {r["name"]: kinds[t] for r in rows if (t := (r.get("type") or "").upper()) in kinds}
        if types:
            raw.set_channel_types(types, on_unit_change="ignore", verbose="error")
        bads = {r["name"] for r in rows if (r.get("status") or "").lower() == "bad"}
        raw.info["bads"] = sorted(set(raw.info["bads"]) | bads)


def crop_to_whole_records(raw: Any, path: Path) -> None:
    """The GDF records the file holds (brainchat.eeg.io.loading.crop_to_whole_records)."""
    extras = raw._raw_extras[0]
    per_record = int(extras["bytes_tot"])
    stated = int(extras["n_records"])
    held = (path.stat().st_size - int(extras["data_offset"])) // per_record if per_record else 0
    if held >= stated:
        return
    if held < 1:
        raise ValueError("the file ends before its first data record: it is truncated")
    log(f"{path.name}: cut short, loaded its {held} whole records of {stated}")
    raw.crop(tmax=(held * int(extras["max_samp"]) - 1) / raw.info["sfreq"], include_tmax=True)


def intact_fif_part(path: Path) -> Any:
    """The complete data blocks of a FIF cut short (brainchat.eeg.io.loading._intact_fif_part)."""
    try:
        raw = mne.io.read_raw_fif(path, preload=False, verbose="error")
        bounds = raw._raw_extras[0]["bounds"]
        if len(bounds) < 3:
            return None
        raw.crop(tmax=(bounds[-2] - 1) / raw.info["sfreq"], include_tmax=True)
        raw.load_data(verbose="error")
    except Exception:
        return None
    return raw


def describe_recordings(raws: list[Any]) -> None:
    RESULTS["recordings"] = [
        {
            "file": name["file"],
            "channels": len(raw.ch_names),
            "sfreq": raw.info["sfreq"],
            "seconds": round(raw.n_times / raw.info["sfreq"], 3),
        }
        for name, raw in zip(RECORDINGS, raws, strict=True)
    ]
    log(f"loaded {len(raws)} recording(s)")


RECORDINGS: list[dict[str, str]] = []  # written by the script's load step


def data_picks(raw: Any) -> Any:
    """The channels brainchat filters
    (brainchat.eeg.preprocessing.preprocessing._by_channel_blocks)."""
    return mne.pick_types(
        raw.info,
        meg=True,
        eeg=True,
        seeg=True,
        ecog=True,
        dbs=True,
        eog=True,
        emg=True,
        ecg=True,
        misc=True,
        exclude=[],
    )


def canonical(raw: Any, names: list[str]) -> list[str]:
    """Channel names as the recording spells them (names match case-insensitively)."""
    by_lower = {c.lower(): c for c in raw.ch_names}
    return [by_lower[n.lower()] for n in names]


def montage_name(name: str) -> str:
    """MNE 1.13 renamed standard_10xx to colin27_10xx
    (brainchat.eeg.preprocessing.preprocessing)."""
    if name.startswith("standard_") and name not in mne.channels.get_builtin_montages():
        return name.replace("standard_", "colin27_")
    return name


def fit_ica(raws: list[Any], n_components: int, method: str, seed: int) -> Any:
    """brainchat.eeg.decoding.decoding.ica_fit_op."""
    data = mne.concatenate_raws([r.copy() for r in raws]) if len(raws) > 1 else raws[0]
    ica = mne.preprocessing.ICA(n_components=n_components, method=method, rng=seed, max_iter="auto")
    ica.fit(data, picks="eeg", decim=max(1, int(data.info["sfreq"] // 100)), verbose="error")
    return ica


def class_names(raw: Any) -> list[str]:
    return sorted(
        {d for d in raw.annotations.description if not d.lower().startswith(IGNORED_ANNOTATIONS)}
    )


def make_epochs(raws, recordings, tmin, tmax, events, baseline, reject_uv) -> dict[str, Any]:
    """Every recording cut around its class events, stacked
    (brainchat.eeg.preprocessing.dataset.make_epochs)."""
    available = sorted({c for raw in raws for c in class_names(raw)})
    classes = [c for c in available if c in set(events)] if events else available  # any order
    reject = {"eeg": reject_uv * 1e-6} if reject_uv else None
    xs, ys, subjects, sessions, dropped, sfreq = [], [], [], [], 0, None
    for rec, raw in zip(recordings, raws, strict=True):
        present = {c: i + 1 for i, c in enumerate(classes) if c in class_names(raw)}
        if not present:
            continue
        ev, _ = mne.events_from_annotations(raw, event_id=present, verbose="error")
        ep = mne.Epochs(
            raw, ev, present, tmin, tmax, baseline=baseline, reject=reject, preload=True,
            verbose="error",
        )  # fmt: skip
        dropped += len(ev) - len(ep)
        xs.append(ep.get_data(copy=False))
        ys.append(ep.events[:, 2] - 1)
        subjects += [rec["subject"]] * len(ep)
        sessions += [rec["session"]] * len(ep)
        sfreq = ep.info["sfreq"]
    X, y, info = np.concatenate(xs), np.concatenate(ys), ep.info
    log(f"epoched {tmin:g}..{tmax:g} s: {len(y)} epochs, {X.shape[1]} ch x {X.shape[2]} samples")
    return {
        "X": X,
        "y": y,
        "classes": classes,
        "subjects": np.array(subjects),
        "sessions": np.array(sessions),
        "dropped": dropped,
        "sfreq": sfreq,
        "info": info,  # the last recording's epochs' mne.Info, as brainchat's EpochSet keeps
        "tmin": float(tmin),
    }


def epochs_summary(epochs: dict[str, Any]) -> dict[str, Any]:
    y, classes = epochs["y"], epochs["classes"]
    return {
        "n": len(y),
        "per_class": {c: int((y == i).sum()) for i, c in enumerate(classes)},
        "dropped": epochs["dropped"],
        "shape": list(epochs["X"].shape),
        "fingerprint": float(np.abs(epochs["X"]).sum()),  # sum of |X| in volts
    }


def _trial_split(idx, y, ratio, seed):
    from sklearn.model_selection import train_test_split

    if ratio <= 0:
        return idx, idx[:0]
    return train_test_split(idx, test_size=ratio, random_state=seed, stratify=y[idx])


def make_split(epochs, by, test_ratio, val_ratio, seed) -> dict[str, Any]:
    """Train/validation/test indices (brainchat.eeg.preprocessing.dataset.make_split)."""
    y = epochs["y"]
    idx = np.arange(len(y))
    rng = np.random.default_rng(seed)
    if by == "trial":
        train, test = _trial_split(idx, y, test_ratio, seed)
    else:
        subjects, sessions = epochs["subjects"], epochs["sessions"]
        groups = (
            subjects
            if by == "subject"
            else np.char.add(subjects.astype(str), "/" + sessions.astype(str))
        )
        unique = np.array(sorted(set(groups)))
        n_test = min(len(unique) - 1, max(1, round(test_ratio * len(unique))))
        held_out = np.isin(groups, rng.permutation(unique)[:n_test])
        train, test = np.flatnonzero(~held_out), np.flatnonzero(held_out)
    train, val = _trial_split(np.sort(train), y, val_ratio / (1 - test_ratio), seed)
    return {"train": np.sort(train), "val": np.sort(val), "test": np.sort(test)}


def split_summary(epochs, split) -> dict[str, Any]:
    log(", ".join(f"{k} {len(v)}" for k, v in split.items()))
    return {k: len(v) for k, v in split.items()}


def arrays(epochs, split) -> dict[str, Any]:
    return {
        f"{k}_{part}": arr[split[part]]
        for part in ("train", "val", "test")
        for k, arr in (("X", epochs["X"]), ("y", epochs["y"]))
    }


def train_csp_lda(data, n_components=4):
    """CSP log-variance features into LDA (brainchat.eeg.decoding.training.train_csp_lda; its
    rank-aware CSP, CSPFeatures, is copied into the script)."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.pipeline import make_pipeline

    n_comp = min(n_components, data["X_train"].shape[1])
    pipe = make_pipeline(CSPFeatures(n_comp), LinearDiscriminantAnalysis())
    with mne.utils.use_log_level("error"):
        pipe.fit(data["X_train"], data["y_train"])
    return pipe


def metrics(y_true, proba, classes) -> dict[str, Any]:
    """Test-set metrics (brainchat.eeg.decoding.training.metrics)."""
    from sklearn import metrics as m

    labels = list(range(len(classes)))
    pred = proba.argmax(1)
    try:
        if len(classes) == 2:
            auc = float(m.roc_auc_score(y_true, proba[:, 1]))
        else:
            auc = float(m.roc_auc_score(y_true, proba, multi_class="ovr", labels=labels))
    except ValueError:
        auc = float("nan")
    return {
        "accuracy": float(m.accuracy_score(y_true, pred)),
        "balanced_accuracy": float(m.balanced_accuracy_score(y_true, pred)),
        "kappa": float(m.cohen_kappa_score(y_true, pred, labels=labels)),
        "roc_auc": auc,
        "confusion": m.confusion_matrix(y_true, pred, labels=labels).tolist(),
        "n_test": len(y_true),
    }


def train(epochs, split, cfg) -> None:
    """Train one model on the training set, test it, and keep its metrics under its name."""
    kind = cfg["model"]
    name = kind if kind not in MODELS else f"{kind}-{len(MODELS) + 1}"  # as brainchat names them
    data = arrays(epochs, split)
    start = time.perf_counter()
    if kind == "csp_lda":
        model = train_csp_lda(data)
        proba = model.predict_proba(data["X_test"])
    else:
        model = train_network(kind, epochs, data, cfg)
        proba = model.predict_proba(data["X_test"])
    MODELS[name] = model
    res = metrics(data["y_test"], proba, epochs["classes"])
    res.update(kind=kind, config=cfg, seconds=round(time.perf_counter() - start, 2))
    RESULTS.setdefault("models", {})[name] = res
    log(f"{name}: test accuracy {res['accuracy']:.3f} on {res['n_test']} epochs")


def note(text: str) -> None:
    """A caveat of the scores just printed (brainchat's tool results and report say it too)."""
    print(f"note: {text}", flush=True)
    notes = RESULTS.setdefault("notes", [])
    if text not in notes:
        notes.append(text)


def versions() -> dict[str, str]:
    import platform

    import sklearn

    out = {"python": platform.python_version(), "mne": mne.__version__}
    out.update(numpy=np.__version__, sklearn=sklearn.__version__)
    for name in ("torch", "scipy", "pyriemann"):  # when the study's steps used them
        if name in sys.modules:
            out[name] = sys.modules[name].__version__
    return out


# === end
