"""The `erp_analysis` agent tool: its argument schema (the analysis is eeg/analysis/erp.py)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, field_validator

from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.analysis_kit import analysis_tool
from brainchat.eeg.tools.toolkit import READ_ONLY

DESCRIPTION = (
    "ERPs: the average per condition and difference waves, each channel's peak amplitude (µV), "
    "latency (ms) and mean amplitude in a window; butterfly, joint or compare plots. Needs "
    "epochs (for ERPs: tmin -0.2, tmax 0.8, baseline [-0.2, 0])."
)


class ErpArgs(BaseModel):
    conditions: list[str] | None = Field(None, min_length=1, description="default: all")
    differences: list[list[str]] | None = Field(
        None,
        description="[A, B] pairs: A − B",
    )
    window: list[float] | None = Field(
        None,
        min_length=2,
        max_length=2,
        description="[tmin, tmax] s; default 0 s to the end",
    )
    polarity: Literal["positive", "negative", "absolute"] = Field(
        "absolute", description="peak sign"
    )
    channels: list[str] | None = Field(
        None,
        min_length=1,
        description="default: all",
    )
    plot: Literal["butterfly", "joint", "compare"] = Field(
        "butterfly",
        description="compare: conditions overlaid",
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
