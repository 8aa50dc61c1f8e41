"""Epoching the continuous recordings and splitting the epochs into train/validation/test."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
from langchain_core.tools import ToolException

from brainchat.eeg.core.state import EpochSet, Op, Split, StudyState
from brainchat.eeg.core.trials import Trials, joined, of_recording
from brainchat.eeg.io.bids.event_rows import event_rows
from brainchat.eeg.io.loading import class_names
from brainchat.tools.errors import ToolError, call


def _classes(state: StudyState, events: list[str] | None) -> list[str]:
    available = sorted({c for raw in state.raws for c in class_names(raw)})
    if not available:
        raise ToolException("the recordings have no event annotations to epoch around")
    if not events:
        return available
    unknown = [e for e in events if e not in available]
    if unknown:
        raise ToolException(f"unknown event(s) {unknown}; available: {', '.join(available)}")
    if len(set(events)) < 2:
        raise ToolException("choose at least two event types (classes) to decode")
    # in the recordings' (sorted) order, not the order they were named in: the labels, and so
    # the split and every score, are the same however a request lists the classes
    return [c for c in available if c in set(events)]


def _check_compatible(state: StudyState) -> None:
    first = state.raws[0]
    for rec, raw in zip(state.recordings, state.raws, strict=True):
        if raw.ch_names != first.ch_names:
            raise ToolException(
                f"{rec.name} has other channels than {state.recordings[0].name}; call "
                "select_channels(keep=[...]) with the channels common to all files"
            )
        if raw.info["sfreq"] != first.info["sfreq"]:
            raise ToolError(
                "recordings differ in sampling rate; call resample_data first",
                call("resample_data"),
            )


def _traced(index, rec, raw, ev, ep, classes, earlier: list[Trials], reject_uv) -> Trials:
    """The trials of recording `index` (after the `earlier` recordings' trials), each traced
    to its events.tsv row."""
    before = sum(int((t.epoch >= 0).sum()) for t in earlier)  # epochs kept before it
    names = [classes[code - 1] for code in ev[:, 2]]
    rows, onsets = event_rows(rec.path, ev[:, 0], names, raw.first_samp, raw.info["sfreq"])
    return of_recording(index, ev, ep, rows, onsets, before, reject_uv)


def make_epochs(
    state: StudyState,
    tmin: float,
    tmax: float,
    events: list[str] | None = None,
    baseline: tuple[float | None, float | None] | None = None,
    reject_uv: float | None = None,
) -> EpochSet:
    """Cut every recording around its class events and stack the epochs."""
    import mne

    classes = _classes(state, events)
    _check_compatible(state)
    reject = {"eeg": reject_uv * 1e-6} if reject_uv else None
    xs, ys, subjects, sessions, info, dropped = [], [], [], [], None, 0
    trials: list[Trials] = []
    for index, (rec, raw) in enumerate(zip(state.recordings, state.raws, strict=True)):
        present = {c: i + 1 for i, c in enumerate(classes) if c in class_names(raw)}
        if not present:
            continue
        ev, _ = mne.events_from_annotations(raw, event_id=present, verbose="error")
        ep = mne.Epochs(
            raw,
            ev,
            present,
            tmin,
            tmax,
            baseline=baseline,
            reject=reject,
            preload=True,
            verbose="error",
        )
        dropped += len(ev) - len(ep)
        trials.append(_traced(index, rec, raw, ev, ep, classes, trials, reject_uv))
        xs.append(ep.get_data(copy=False))
        ys.append(ep.events[:, 2] - 1)
        subjects += [rec.subject] * len(ep)
        sessions += [rec.session] * len(ep)
        info = ep.info
    if not xs or sum(len(x) for x in xs) == 0:
        why = (
            f"reject_uv={reject_uv:g} µV dropped all {dropped} epoch(s) (EEG peak-to-peak is "
            "usually 50-150 µV; typical thresholds are 100-200 µV)"
            if reject_uv
            else "the recordings have no epochs of these events"
        )
        raise ToolException(f"no epochs left: {why}; raise reject_uv or leave it out")
    y = np.concatenate(ys)
    return EpochSet(
        np.concatenate(xs),
        y,
        tuple(classes),
        np.array(subjects),
        np.array(sessions),
        info,
        float(tmin),
        dropped,
        joined(trials),
    )


def epoch_op(tmin, tmax, events, baseline, reject_uv) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        state.require("loaded")
        duration = min(raw.times[-1] for raw in state.raws)
        if tmax - tmin > duration:
            raise ToolException(f"epochs of {tmax - tmin:g} s are longer than the data")
        if baseline is not None and (baseline[0] or tmin) < tmin - 1e-9:
            raise ToolException(f"baseline {baseline} must lie within tmin..tmax ({tmin}..{tmax})")
        epochs = make_epochs(state, tmin, tmax, events, baseline, reject_uv)
        new = replace(state.without_derived(), epochs=epochs)
        counts = ", ".join(f"{k} {v}" for k, v in epochs.counts().items())
        note = "; previous epochs, split and models replaced" if state.stage != "loaded" else ""
        return new, (
            f"epoched {tmin:g}..{tmax:g} s: {len(epochs.y)} epochs ({counts}), "
            f"{epochs.X.shape[1]} ch x {epochs.X.shape[2]} samples; {epochs.dropped} rejected{note}"
        )

    return op


def _group_split(groups, test_ratio, rng) -> tuple[np.ndarray, np.ndarray]:
    unique = np.array(sorted(set(groups)))
    if len(unique) < 2:
        raise ToolException(
            f"only one {'group'} in the data ({unique[0]}): cannot hold one out; split by trial"
        )
    n_test = min(len(unique) - 1, max(1, round(test_ratio * len(unique))))
    test_groups = rng.permutation(unique)[:n_test]
    test = np.isin(groups, test_groups)
    return np.flatnonzero(~test), np.flatnonzero(test)


def _trial_split(idx, y, ratio, seed) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    if ratio <= 0:
        return idx, idx[:0]
    try:
        return train_test_split(idx, test_size=ratio, random_state=seed, stratify=y[idx])
    except ValueError as exc:
        raise ToolException(f"cannot split {len(idx)} epochs with ratio {ratio}: {exc}") from None


def make_split(epochs: EpochSet, by: str, test_ratio: float, val_ratio: float, seed: int) -> Split:
    """Test set by trial (stratified), or whole sessions/subjects held out; validation by trial."""
    idx = np.arange(len(epochs.y))
    rng = np.random.default_rng(seed)
    if by == "trial":
        train, test = _trial_split(idx, epochs.y, test_ratio, seed)
    else:
        groups = (
            epochs.subjects
            if by == "subject"
            else np.char.add(epochs.subjects.astype(str), "/" + epochs.sessions.astype(str))
        )
        try:
            train, test = _group_split(groups, test_ratio, rng)
        except ToolException:
            raise ToolException(
                f"only one {by} in the data: cannot hold one out; use by='trial'"
            ) from None
    train, val = _trial_split(np.sort(train), epochs.y, val_ratio / (1 - test_ratio), seed)
    return Split(by, seed, np.sort(train), np.sort(val), np.sort(test))


def split_op(by: str, test_ratio: float, val_ratio: float, seed: int) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        state.require("epoched")
        split = make_split(state.eps, by, test_ratio, val_ratio, seed)
        new = replace(state, split=split, models={}, results={})
        y = state.eps.y
        parts = []
        for label, part in (("train", split.train), ("val", split.val), ("test", split.test)):
            counts = "/".join(str(int((y[part] == i).sum())) for i in range(len(state.eps.classes)))
            parts.append(f"{label} {len(part)} ({counts})")
        note = "; previous models discarded" if state.models else ""
        return new, f"split by {by} (seed {seed}): " + ", ".join(parts) + f" per class{note}"

    return op
