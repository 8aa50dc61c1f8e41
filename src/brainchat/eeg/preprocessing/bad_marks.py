"""Removing what an artifact scan proposed (eeg/analysis/artifacts.py), as preprocessing steps:
bad channels interpolated or dropped ("bad_channels"), bad time spans annotated BAD_ so that
epoching leaves out the epochs that overlap them ("bad_segments")."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import ToolException

from brainchat.tools.errors import ToolError, call

BAD_MARKS = ("bad_channels", "bad_segments")
BAD_LABEL = "BAD_artifact"  # MNE's epoching leaves out spans whose description starts with BAD


def _canonical(raw: Any, names: list[str]) -> list[str]:
    by_lower = {c.lower(): c for c in raw.ch_names}
    return [by_lower[n.lower()] for n in names]


def check_bad_marks(raws: tuple, op: str, p: dict[str, Any]) -> None:
    """Refuse a bad-channel or bad-segment step that cannot apply, before anything changes."""
    if op == "bad_segments":
        for seg in p["segments"]:
            raw = raws[seg["recording"]]
            length = raw.n_times / raw.info["sfreq"]
            if seg["onset"] >= length:
                raise ToolException(
                    f"segment at {seg['onset']:g} s is past the end of {seg['file']} "
                    f"({length:g} s); onsets are seconds from the recording's start"
                )
        return
    for raw in raws:
        lookup = {c.lower() for c in raw.ch_names}
        unknown = [n for n in p["channels"] if n.lower() not in lookup]
        if unknown:
            raise ToolException(
                f"unknown channel(s) {unknown}; available: {', '.join(raw.ch_names)}"
            )
        names = _canonical(raw, p["channels"])
        if p["action"] == "drop":
            if len(names) >= len(raw.ch_names):
                raise ToolException("that would remove every channel; keep at least one")
            continue
        _check_interpolation(raw, names)


def _check_interpolation(raw: Any, names: list[str]) -> None:
    """Interpolation needs EEG channels with electrode positions, and enough good ones."""
    import mne
    import numpy as np

    types = dict(zip(raw.ch_names, raw.get_channel_types(), strict=True))
    other = [n for n in names if types[n] != "eeg"]
    if other:
        raise ToolException(
            f"only EEG channels can be interpolated, not {other} "
            f'({", ".join(types[n] for n in other)}); use action="drop" for them'
        )
    eeg = [raw.ch_names[i] for i in mne.pick_types(raw.info, eeg=True, exclude=[])]
    locs = {c["ch_name"]: np.asarray(c["loc"][:3]) for c in raw.info["chs"]}
    placed = {n for n in eeg if np.all(np.isfinite(locs[n])) and np.any(locs[n] != 0)}
    missing = [n for n in names if n not in placed]
    if missing:
        raise ToolError(
            f"interpolating {', '.join(missing)} needs electrode positions, and the data has "
            "none for them: call set_montage first (e.g. set_montage(name='standard_1005')), or "
            f"remove them instead with mark_bad_channels(channels={names}, action='drop')",
            call("set_montage", {"name": "standard_1005"}),
        )
    if len(placed - set(names) - set(raw.info["bads"])) < 3:
        raise ToolException(
            "too few good channels with positions left to interpolate from (need 3); "
            'use action="drop"'
        )


def apply_bad_marks(raws: tuple, op: str, p: dict[str, Any]) -> None:
    """Apply a bad-channel or bad-segment step to the recordings, in place (the exported script
    does the same, export/script_bad_marks.py)."""
    if op == "bad_segments":
        for seg in p["segments"]:
            raw = raws[seg["recording"]]
            # in place: a raw's annotations count from its first sample's time (first_time);
            # set_annotations would shift them all once more when the raw has no meas_date
            raw.annotations.append(seg["onset"] + raw.first_time, seg["duration"], BAD_LABEL)
        return
    for raw in raws:
        names = _canonical(raw, p["channels"])
        if p["action"] == "drop":
            raw.drop_channels(names)
            continue
        earlier = [b for b in raw.info["bads"] if b not in names]  # stay bad, not interpolated
        raw.info["bads"] = [*earlier, *names]
        raw.interpolate_bads(reset_bads=True, exclude=earlier, verbose="error")


def segment_params(names: list[str], segments: list[dict[str, Any]]) -> dict[str, Any]:
    """The step's parameters: each segment with its recording's index (`names` in load order);
    a file that is not loaded, or none named among several, is refused."""
    out = []
    for seg in segments:
        file = seg.get("file")
        if file is None and len(names) == 1:
            file = names[0]
        matches = [i for i, n in enumerate(names) if file in (n, n.rsplit("/", 1)[-1])]
        if len(matches) != 1:
            what = "has no file" if file is None else f"file {file!r} is not loaded"
            raise ToolException(
                f"the segment at {seg['onset']:g} s {what}; name each segment's file as "
                f"find_artifacts does: {', '.join(names)}"
            )
        i = matches[0]
        out.append({"file": names[i], "recording": i, "onset": float(seg["onset"]),
                    "duration": float(seg["duration"])})  # fmt: skip
    return {"segments": out}
