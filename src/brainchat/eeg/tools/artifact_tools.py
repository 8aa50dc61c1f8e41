"""The artifact tools: the scans that propose bad channels, bad segments and ICA components
(eeg/analysis/artifacts.py), and the steps that remove what the user agreed to."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from brainchat.eeg.core.state import Op, Step, StudyState
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.analysis_kit import analysis_tool
from brainchat.eeg.tools.toolkit import DESTRUCTIVE, READ_ONLY, make_tool, run_op, step


class FindArtifactsArgs(BaseModel):
    flat_uv: float = Field(
        0.5, gt=0, le=100, description="flat: a channel's std, or a window's peak-to-peak, under "
        "this many µV",
    )  # fmt: skip
    noisy_z: float = Field(
        5.0, gt=0, le=100, description="noisy: a channel's robust z-score (against the other "
        "channels' median and MAD) of its robust std or of its high-frequency amplitude over this",
    )  # fmt: skip
    hf_hz: float = Field(30.0, gt=0, le=5000, description="high-frequency noise: power above this")
    ptp_uv: float = Field(
        150.0, gt=0, le=1e5, description="bad segment: a window's peak-to-peak over this many µV"
    )
    window_s: float = Field(1.0, ge=0.05, le=60, description="window length for segments, s")
    channel_fraction: float = Field(
        0.2, gt=0, le=1, description="bad channel: over this share of its windows above ptp_uv"
    )


class IcaMatchArgs(BaseModel):
    eog_channels: list[str] | None = Field(
        None, description="EOG channels to match (default: channels typed or named EOG); a "
        "frontal EEG channel such as Fp1 may be named as an EOG proxy",
    )  # fmt: skip
    ecg_channels: list[str] | None = Field(
        None, description="ECG channels to match (default: channels typed or named ECG/EKG)"
    )
    threshold: float = Field(3.0, gt=0, le=20, description="z-score threshold (MNE's default 3)")


class MarkBadChannelsArgs(BaseModel):
    channels: list[str] = Field(..., min_length=1, description="the bad channels")
    action: Literal["interpolate", "drop"] = Field(
        "interpolate", description="interpolate them from the other channels (needs electrode "
        "positions: set_montage) or drop them",
    )  # fmt: skip


class BadSegment(BaseModel):
    file: str | None = Field(None, description="the recording (may be left out with one loaded)")
    onset: float = Field(..., ge=0, description="start, s from the recording's start")
    duration: float = Field(..., gt=0, le=86400, description="length, s")


class AnnotateBadSegmentsArgs(BaseModel):
    segments: list[BadSegment] = Field(..., min_length=1, max_length=100000)


FIND_DESCRIPTION = (
    "Find bad channels (flat, noisy by robust z-score of amplitude or of >30 Hz power, often "
    "over the peak-to-peak threshold) and bad segments (windows over ptp_uv peak-to-peak, or "
    "flat) in each recording, and propose the mark_bad_channels and annotate_bad_segments calls "
    "that would remove them. Removes nothing."
)
ICA_DESCRIPTION = (
    "Find the fitted ICA's components that match the EOG/ECG channels (correlation, MNE's "
    "find_bads_eog/find_bads_ecg) and propose ica_apply(exclude=[...]). Without such channels it "
    "says so; a frontal channel is used as an EOG proxy only when named. Removes nothing."
)
MARK_DESCRIPTION = (
    "Remove bad channels that find_artifacts proposed (or the user named), after the user "
    "agreed: interpolate them from the other channels (needs a montage) or drop them."
)
ANNOTATE_DESCRIPTION = (
    "Mark the bad segments that find_artifacts proposed (or the user named) as BAD_ spans, after "
    "the user agreed: epoch_data then leaves out every epoch that overlaps one."
)


async def _preprocess(study: Study, make: Callable[[], Op], record: dict[str, Any]) -> str:
    """Run one preprocessing step, refused up front when over the memory of one operation."""
    from brainchat.eeg.study.memory import guarded, step_need

    need = step_need(record["step"]["op"], record["step"]["params"])
    op = guarded(make(), need, study.max_operation_mb)
    return await run_op(study, op, mutates_data=True, record=record)


def _segments_op(segments: list[dict[str, Any]], label: str, record: dict[str, Any]) -> Op:
    """The bad-segments step, its files resolved against the loaded recordings (logged so)."""

    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.preprocessing.bad_marks import segment_params
        from brainchat.eeg.preprocessing.preprocessing import step_op

        state.require("loaded")
        params = segment_params([r.name for r in state.recordings], segments)
        record["step"]["params"] = params
        return step_op(Step("bad_segments", params, label))(state, stop)

    return op


def artifact_tools(study: Study) -> list[BaseTool]:
    async def mark_bad_channels(channels: list[str], action: str = "interpolate") -> str:
        verb = "interpolate" if action == "interpolate" else "drop"
        label = f"{verb} bad {', '.join(channels)}"
        params = {"channels": list(dict.fromkeys(channels)), "action": action}
        return await _preprocess(study, *step("bad_channels", params, label))

    async def annotate_bad_segments(segments: list[Any]) -> str:
        segs = [s if isinstance(s, dict) else s.model_dump() for s in segments]
        seconds = sum(float(s["duration"]) for s in segs)
        label = f"bad segments: {len(segs)} span(s), {seconds:.1f} s"
        record = {"op": "step", "step": {"op": "bad_segments", "params": {}, "label": label}}
        op = _segments_op(segs, label, record)
        return await _preprocess(study, lambda: op, record)

    return [
        analysis_tool(study, "artifact_scan", FIND_DESCRIPTION, FindArtifactsArgs, **READ_ONLY),
        analysis_tool(study, "ica_match", ICA_DESCRIPTION, IcaMatchArgs, **READ_ONLY),
        make_tool(
            mark_bad_channels,
            "mark_bad_channels",
            MARK_DESCRIPTION,
            MarkBadChannelsArgs,
            **DESTRUCTIVE,
        ),
        make_tool(
            annotate_bad_segments,
            "annotate_bad_segments",
            ANNOTATE_DESCRIPTION,
            AnnotateBadSegmentsArgs,
            **DESTRUCTIVE,
        ),
    ]
