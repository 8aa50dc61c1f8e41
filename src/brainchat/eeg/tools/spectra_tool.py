"""The `band_power` agent tool: its argument schema (the computation is eeg/analysis/spectra.py)."""

from __future__ import annotations

from typing import Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.analysis_kit import analysis_tool
from brainchat.eeg.tools.toolkit import READ_ONLY

DESCRIPTION = (
    "Band power per channel and frequency band from the power spectral density (MNE Welch or "
    "multitaper): absolute power in µV² (the PSD integrated over the band) and relative power "
    "(its fraction of the power in relative_range, default 1-45 Hz), the peak (alpha) frequency "
    "per channel (the PSD maximum in peak_range, default 7-13 Hz; none when the maximum sits on "
    "the range's edge), and the channel with the most power per band. Named bands: delta 1-4, "
    "theta 4-8, alpha 8-13, mu 8-13, beta 13-30, gamma 30-45 Hz, or explicit "
    '{"name", "fmin", "fmax"}. Per condition (epochs averaged per class) when the study is '
    "epoched, else per recording (source). Shows topomaps per band (a bar chart per channel "
    "when the channels have no positions: set_montage). Changes nothing."
)


class BandSpec(BaseModel):
    name: str = Field(..., description="the band's name, e.g. 'low_alpha'")
    fmin: float = Field(..., description="lower edge in Hz (included)")
    fmax: float = Field(..., description="upper edge in Hz (excluded)")


class BandPowerArgs(BaseModel):
    bands: list[str | BandSpec] | None = Field(
        None,
        max_length=20,
        description="band names (delta, theta, alpha, mu, beta, gamma) or "
        '{"name", "fmin", "fmax"} in Hz; default delta, theta, alpha, beta, gamma',
    )
    method: Literal["welch", "multitaper"] = Field("welch", description="PSD estimator")
    source: Literal["auto", "recordings", "epochs"] = Field(
        "auto",
        description="auto: per condition from the epochs when epoched, else per recording; "
        "recordings: the continuous recordings; epochs: per condition",
    )
    channels: list[str] | None = Field(
        None, max_length=512, description="a subset of channels (default: every good EEG channel)"
    )
    window_s: float = Field(
        2.0, gt=0, le=60, description="Welch window length in s (n_fft = window x sfreq)"
    )
    overlap: float = Field(0.5, ge=0, lt=1, description="Welch window overlap, a fraction")
    bandwidth: float | None = Field(
        None, gt=0, le=50, description="multitaper bandwidth in Hz (default MNE's: 8 / duration)"
    )
    relative_range: list[float] = Field(
        [1.0, 45.0],
        min_length=2,
        max_length=2,
        description="[fmin, fmax] Hz whose power relative power is a fraction of (clipped to "
        "Nyquist)",
    )
    peak_range: list[float] = Field(
        [7.0, 13.0], min_length=2, max_length=2, description="[fmin, fmax] Hz searched for a peak"
    )


def spectra_tools(study: Study) -> list[BaseTool]:
    """The band_power tool bound to one study."""
    return [analysis_tool(study, "band_power", DESCRIPTION, BandPowerArgs, **READ_ONLY)]
