"""The exported script's code of the bad-channel and bad-segment steps: the same MNE calls as
brainchat's (eeg/preprocessing/bad_marks.py `apply_bad_marks`)."""

from __future__ import annotations

from typing import Any


def bad_channels_code(p: dict[str, Any]) -> str:
    """Interpolate (from the other channels) or drop the channels the user marked bad."""
    names = f"canonical(raw, {list(p['channels'])!r})"
    if p["action"] == "drop":
        return f"for raw in raws:\n    raw.drop_channels({names})"
    return (
        "for raw in raws:\n"
        f"    names = {names}\n"
        "    earlier = [b for b in raw.info['bads'] if b not in names]  # stay bad\n"
        "    raw.info['bads'] = [*earlier, *names]\n"
        '    raw.interpolate_bads(reset_bads=True, exclude=earlier, verbose="error")'
    )


def bad_segments_code(p: dict[str, Any]) -> str:
    """Annotate the spans the user marked bad as BAD_artifact (epochs overlapping them go)."""
    spans = [(s["recording"], s["onset"], s["duration"]) for s in p["segments"]]
    return (
        f"for i, onset, duration in {spans!r}:  # recording (load order), s from its start\n"
        "    raw = raws[i]\n"
        "    raw.annotations.append(onset + raw.first_time, duration, 'BAD_artifact')"
    )
