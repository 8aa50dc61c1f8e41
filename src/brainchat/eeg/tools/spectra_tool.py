"""The `band_power` agent tool: its argument schema (the computation is eeg/analysis/spectra.py)."""

from __future__ import annotations

from typing import Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.analysis_kit import analysis_tool
from brainchat.eeg.tools.toolkit import READ_ONLY

DESCRIPTION = (
    "Band power per channel and band (Welch or multitaper PSD): absolute (µV²) and relative, "
    "the peak (alpha) frequency, per recording or per condition when epoched; topomaps."
)


class BandSpec(BaseModel):
    name: str = Field(..., description="its name")
    fmin: float = Field(..., description="Hz, included")
    fmax: float = Field(..., description="Hz, excluded")


class BandPowerArgs(BaseModel):
    bands: list[str | BandSpec] | None = Field(
        None,
        max_length=20,
        description="delta 1-4, theta 4-8, alpha/mu 8-13, beta 13-30, gamma 30-45 Hz, or "
        "given; default: all but mu",
    )
    method: Literal["welch", "multitaper"] = Field("welch", description="PSD")
    source: Literal["auto", "recordings", "epochs"] = Field(
        "auto",
        description="auto: epochs when epoched",
    )
    channels: list[str] | None = Field(None, max_length=512, description="default: all EEG")
    window_s: float = Field(2.0, gt=0, le=60, description="Welch window, s")
    overlap: float = Field(0.5, ge=0, lt=1, description="Welch, a fraction")
    bandwidth: float | None = Field(None, gt=0, le=50, description="multitaper, Hz")
    relative_range: list[float] = Field(
        [1.0, 45.0],
        min_length=2,
        max_length=2,
        description="relative to the power in [fmin, fmax] Hz",
    )
    peak_range: list[float] = Field(
        [7.0, 13.0], min_length=2, max_length=2, description="[fmin, fmax] Hz"
    )


def spectra_tools(study: Study) -> list[BaseTool]:
    """The band_power tool bound to one study."""
    return [analysis_tool(study, "band_power", DESCRIPTION, BandPowerArgs, **READ_ONLY)]
