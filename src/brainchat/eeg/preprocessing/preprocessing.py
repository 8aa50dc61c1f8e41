"""Loading and preprocessing operations on a study, as replayable steps applied in place."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.state import Op, Step, StudyState
from brainchat.eeg.io.loading import Recording, infer_subject_session, read_raw
from brainchat.eeg.io.paths import existing_data_file, file_format, relative_name
from brainchat.eeg.preprocessing.bad_marks import BAD_MARKS, apply_bad_marks, check_bad_marks


def load_recordings(
    data_dir: Path, names: list[str], limit_mb: int | None = None
) -> tuple[tuple[Recording, ...], tuple]:
    """Resolve and read every file (all must succeed: nothing is loaded otherwise); together
    they may hold `limit_mb` of samples (None: no limit)."""
    from brainchat.eeg.io.bounds import Budget

    budget = Budget(limit_mb)
    paths = [existing_data_file(data_dir, n) for n in names]
    if len(set(paths)) != len(paths):
        raise ToolException("the same file is listed twice; list each file once")
    recordings, raws = [], []
    for path in paths:
        subject, session = infer_subject_session(path)
        name = relative_name(data_dir, path)
        notes: list[str] = []
        raws.append(read_raw(path, notes, budget))
        fmt = file_format(path) or ""
        recordings.append(Recording(name, path, subject, session, fmt, "; ".join(notes)))
    return tuple(recordings), tuple(raws)


def load_op(data_dir: Path, names: list[str], limit_mb: int | None = None) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        if state.stage != "empty" and _same_files(data_dir, names, state):
            from brainchat.eeg.core.report import describe

            done = "; ".join(s.label for s in state.history) or "none"
            return state, (
                f"already loaded: these {len(names)} file(s) are the study's (stage "
                f"{state.stage}; preprocessing so far: {done}), so nothing was done. To start "
                "again from the raw files call clear_study, then load_data\n" + describe(state)
            )
        if state.stage != "empty":
            raise ToolException(
                f"a study is already loaded ({len(state.recordings)} file(s)); call clear_study "
                "first to load other files (list all files of a study in one load_data call)"
            )
        recordings, raws = load_recordings(data_dir, names, limit_mb)
        new = StudyState(recordings=recordings, raws=raws)
        chans = {tuple(r.ch_names) for r in raws}
        warnings = [f"warning: {r.damage}" for r in recordings if r.damage]
        if len(chans) > 1:
            warnings.append("warning: files differ in channels; pick common ones")
        from brainchat.eeg.core.report import describe

        # warnings first: a truncated file must not hide below the channel list
        return new, "\n".join([f"loaded {len(raws)} file(s)", *warnings, describe(new)])

    return op


def _same_files(data_dir: Path, names: list[str], state: StudyState) -> bool:
    """Whether `names` are exactly the loaded recordings (a resumed conversation's model may ask
    for them again: loading what is loaded is done, not an error)."""
    try:
        paths = {existing_data_file(data_dir, n).resolve() for n in names}
    except (ToolException, OSError, ValueError):
        return False
    return len(paths) == len(names) and paths == {r.path.resolve() for r in state.recordings}


def rebuild(state: StudyState) -> StudyState:
    """The same study with its recordings re-read from disk and its history replayed."""
    if not state.recordings:
        return state
    raws = tuple(read_raw(r.path) for r in state.recordings)
    for step in state.history:
        apply_step(raws, step)
    return replace(state, raws=raws)


def check_channels(raws: tuple, names: list[str]) -> None:
    for raw in raws:
        lookup = {c.lower() for c in raw.ch_names}
        unknown = [n for n in names if n.lower() not in lookup]
        if unknown:
            raise ToolException(
                f"unknown channel(s) {unknown}; available: {', '.join(raw.ch_names)}"
            )


def _canonical(raw: Any, names: list[str]) -> list[str]:
    by_lower = {c.lower(): c for c in raw.ch_names}
    return [by_lower[n.lower()] for n in names]


def apply_step(raws: tuple, step: Step) -> None:
    """Apply one preprocessing step to every recording, in place."""
    p = step.params
    if step.op in BAD_MARKS:  # bad channels or segments (bad_marks.py)
        return apply_bad_marks(raws, step.op, p)
    for raw in raws:
        if step.op == "bandpass":
            _by_channel_blocks(
                raw,
                lambda picks, raw=raw: raw.filter(
                    p["l_freq"],
                    p["h_freq"],
                    picks=picks,  # type: ignore[misc]
                    verbose="error",
                ),
            )
            _note_filter(raw, p["l_freq"], p["h_freq"])
        elif step.op == "notch":
            _by_channel_blocks(
                raw,
                lambda picks, raw=raw: raw.notch_filter(
                    p["freqs"],
                    picks=picks,  # type: ignore[misc]
                    verbose="error",
                ),
            )
        elif step.op == "resample":
            raw.resample(p["sfreq"], verbose="error")
        elif step.op == "reference":
            ref = p["ref"] if p["ref"] == "average" else _canonical(raw, p["ref"])
            raw.set_eeg_reference(ref, verbose="error")
        elif step.op == "select":
            if p.get("keep"):
                raw.pick(_canonical(raw, p["keep"]))
            if p.get("drop"):
                raw.drop_channels(_canonical(raw, p["drop"]))
        elif step.op == "montage":
            raw.set_montage(
                montage_name(p["name"]), match_case=False, on_missing="ignore", verbose="error"
            )
        elif step.op == "ica":
            p["ica"].apply(raw, exclude=p["exclude"], verbose="error")
        else:  # pragma: no cover - steps are built by this module
            raise ValueError(f"unknown step {step.op}")


def _by_channel_blocks(raw: Any, run: Callable[[list[int]], Any], block: int = 8) -> None:
    """Filter a few channels at a time: MNE keeps every filtered channel until the end of a
    call, so one call over all channels would double the memory of the recording."""
    import mne

    picks = mne.pick_types(
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
    for i in range(0, len(picks), block):
        run(list(picks[i : i + block]))


def _note_filter(raw: Any, l_freq: float | None, h_freq: float | None) -> None:
    """Record the pass band in info, as a whole-recording raw.filter does."""
    with raw.info._unlock():
        if l_freq is not None and l_freq > (raw.info["highpass"] or 0):
            raw.info["highpass"] = float(l_freq)
        if h_freq is not None and h_freq < raw.info["lowpass"]:
            raw.info["lowpass"] = float(h_freq)


def check_step(raws: tuple, step: Step) -> None:
    """Refuse a step that cannot apply, before anything is changed."""
    p = step.params
    if step.op in BAD_MARKS:
        return check_bad_marks(raws, step.op, p)
    for raw in raws:
        nyquist = raw.info["sfreq"] / 2
        if step.op == "bandpass" and (p["h_freq"] or 0) >= nyquist:
            raise ToolException(
                f"high frequency {p['h_freq']} Hz must be below Nyquist ({nyquist:g} Hz)"
            )
        if step.op == "notch" and max(p["freqs"]) >= nyquist:
            raise ToolException(f"notch frequencies must be below Nyquist ({nyquist:g} Hz)")
        if step.op == "resample" and p["sfreq"] == raw.info["sfreq"]:
            raise ToolException(f"the data is already at {p['sfreq']:g} Hz")
    if step.op == "reference" and p["ref"] != "average":
        check_channels(raws, p["ref"])
    if step.op == "select":
        check_channels(raws, (p.get("keep") or []) + (p.get("drop") or []))
        left = len(p["keep"]) if p.get("keep") else len(raws[0].ch_names) - len(p["drop"])
        if left < 1:
            raise ToolException("that would remove every channel; keep at least one")
    if step.op == "montage":
        _check_montage(raws, p["name"])


def montage_name(name: str) -> str:
    """MNE 1.13 renamed standard_10xx to colin27_10xx (the old names warn, then go)."""
    import mne

    builtin = mne.channels.get_builtin_montages()
    if name.startswith("standard_") and name not in builtin:
        return name.replace("standard_", "colin27_")
    return name


def _check_montage(raws: tuple, name: str) -> None:
    import mne

    try:
        montage = mne.channels.make_standard_montage(montage_name(name))
    except ValueError:
        raise ToolException(f"unknown montage '{name}'; try standard_1005 or biosemi64") from None
    known = {c.lower() for c in montage.ch_names}
    unknown = [c for c in raws[0].ch_names if c.lower() not in known]
    if len(unknown) == len(raws[0].ch_names):
        raise ToolException(f"no channel of the data is in montage '{name}'")


def step_op(step: Step) -> Op:
    """An op applying `step` to the loaded data (stage must be 'loaded')."""

    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        state.require("loaded")
        if state.stage != "loaded":
            raise ToolException(
                f"the data is already {state.stage}; preprocessing applies to continuous data "
                "before epoching. Call reset_preprocessing to start again from the loaded data"
            )
        check_step(state.raws, step)
        apply_step(state.raws, step)
        raw = state.raws[0]
        ica, note = state.ica, ""
        gone = sorted(set(ica.ch_names) - set(raw.ch_names)) if ica is not None else []
        if gone:  # an ICA unmixes the channels it was fitted on: it no longer fits the data
            ica = None
            note = (
                f"; the fitted ICA was discarded (it was fitted with {', '.join(gone)}, now "
                "gone): call ica_fit again before ica_apply or ica_find_artifacts"
            )
        new = replace(state, history=(*state.history, step), ica=ica)
        return new, (
            f"applied {step.label} to {len(state.raws)} recording(s); now "
            f"{len(raw.ch_names)} ch @ {raw.info['sfreq']:g} Hz; history: "
            + ", ".join(s.label for s in new.history)
            + note
        )

    return op


def reset_op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
    state.require("loaded")
    raws = tuple(read_raw(r.path) for r in state.recordings)
    new = StudyState(recordings=state.recordings, raws=raws)
    dropped = [s.label for s in state.history]
    return new, (
        "preprocessing reset: data back as loaded"
        + (f" (undid: {', '.join(dropped)})" if dropped else "")
        + ("; epochs, split and models discarded" if state.stage != "loaded" else "")
    )
