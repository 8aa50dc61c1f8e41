"""The `erp_analysis` agent tool: its argument schema (the analysis is eeg/analysis/erp.py)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, field_validator

from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.analysis_kit import analysis_tool
from brainchat.eeg.tools.toolkit import READ_ONLY

DESCRIPTION = (
    "Event-related potentials of the epochs: the average per condition (class) and difference "
    "waves (A − B), with each channel's peak amplitude (µV) and latency (ms) and its mean "
    "amplitude (µV) in a time window, the trials per condition, whether a baseline was "
    "applied (set at epoch_data), and peaks on the window's edge flagged. Plots: butterfly "
    "(all channels per condition), joint (with topomaps; needs a montage) or compare "
    "(conditions overlaid at a few channels). Needs epochs (epoch_data); for ERPs epoch from "
    "before the event, e.g. tmin -0.2, tmax 0.8, baseline [-0.2, 0]."
)


class ErpArgs(BaseModel):
    conditions: list[str] | None = Field(
        None, min_length=1, description="classes to average; default: all of the epochs' classes"
    )
    differences: list[list[str]] | None = Field(
        None,
        description='difference waves as [A, B] pairs, e.g. [["left_hand", "right_hand"]] '
        "gives left_hand − right_hand",
    )
    window: list[float] | None = Field(
        None,
        min_length=2,
        max_length=2,
        description="[tmin, tmax] in s inside the epochs, where peaks and mean amplitudes are "
        "measured; default: from 0 s (or the epochs' start) to the epochs' end",
    )
    polarity: Literal["positive", "negative", "absolute"] = Field(
        "absolute", description="peak of largest positive, negative or absolute value"
    )
    channels: list[str] | None = Field(
        None,
        min_length=1,
        description="channels to measure (and to overlay in the compare plot); default: all",
    )
    plot: Literal["butterfly", "joint", "compare"] = Field(
        "butterfly",
        description="butterfly, joint (butterfly + topomap at the peak) or compare (conditions "
        "overlaid at the channels given or those of largest effect)",
    )

    @field_validator("differences", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
            value = [value]  # one pair given flat: ["A", "B"]
        for pair in value or []:
            if not isinstance(pair, list | tuple) or len(pair) != 2 or pair[0] == pair[1]:
                raise ValueError(
                    f"each difference is a pair of two different conditions [A, B], got {pair!r}"
                )
        return value

    @field_validator("window")
    @classmethod
    def _ordered(cls, value: list[float] | None) -> list[float] | None:
        if value is not None and value[0] >= value[1]:
            raise ValueError(f"window [tmin, tmax] needs tmin < tmax, got {value}")
        return value


def erp_tools(study: Study) -> list[BaseTool]:
    return [analysis_tool(study, "erp", DESCRIPTION, ErpArgs, **READ_ONLY)]
