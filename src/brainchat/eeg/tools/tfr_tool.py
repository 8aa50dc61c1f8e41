"""The `time_frequency` and `cluster_test` agent tools: their argument schemas (the analyses are
eeg/analysis/tfr.py and eeg/analysis/clusters.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, field_validator

from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.analysis_kit import analysis_tool
from brainchat.eeg.tools.toolkit import READ_ONLY

BandName = Literal["delta", "theta", "alpha", "mu", "beta", "low_beta", "high_beta", "gamma"]
Pair = Annotated[list[float], Field(min_length=2, max_length=2)]  # [low, high]
BAND_HELP = (
    "named (delta 1-4, theta 4-8, alpha 8-13, mu 8-13, beta 13-30, low_beta 13-20, "
    "high_beta 20-30, gamma 30-45 Hz) or [fmin, fmax] in Hz"
)

TFR_DESCRIPTION = (
    "Time-frequency power of the epochs per condition (MNE Morlet wavelets, or multitaper), "
    "as change from a pre-stimulus baseline: ERD/ERS in percent ((P - R) / R x 100; negative = "
    "ERD, Pfurtscheller's convention) or in dB (logratio), per channel and band averaged over a "
    "time window, with the strongest ERD per condition and band, edge effects flagged, and TFR "
    "maps of C3/Cz/C4 (or the channels of largest change) per condition. Needs epochs with a "
    "pre-stimulus interval (epoch_data tmin < 0, e.g. tmin -1, tmax 3)."
)
CLUSTER_DESCRIPTION = (
    "Cluster-based permutation test between conditions (MNE permutation_cluster_test; "
    "cluster-level family-wise error, Maris & Oostenveld 2007) on the trials' ERP amplitudes "
    "(measure erp) or time-frequency power in dB (measure tfr: in a band, or over frequencies "
    "x times), over channels x time: t-test for two conditions, F for three or more. Channels "
    "are neighbours by their positions when a montage is set, else each channel clusters "
    "alone over time. Returns each cluster's channels, time (and frequency) span, statistic "
    "sum and p-value, significant ones first, and a statistic map with the clusters outlined. "
    "Trials count as independent observations (no group inference). Needs epochs."
)


def _pair(value: list[float] | None, what: str) -> list[float] | None:
    if value is not None and value[0] >= value[1]:
        raise ValueError(f"{what} [t0, t1] needs t0 < t1, got {value}")
    return value


class TimeFrequencyArgs(BaseModel):
    method: Literal["morlet", "multitaper"] = Field("morlet", description="morlet or multitaper")
    bands: list[BandName | Pair] | None = Field(
        None, min_length=1, max_length=8, description=f"bands, each {BAND_HELP}; default "
        "mu and beta (those below Nyquist)",
    )  # fmt: skip
    freqs: Pair | None = Field(
        None, description="[fmin, fmax] of the map in Hz; "
        "default: the bands' range",
    )  # fmt: skip
    fstep: float = Field(1.0, gt=0, le=10, description="frequency resolution of the map, Hz")
    n_cycles: float | None = Field(
        None, gt=0, le=50, description="cycles per wavelet; default freqs/2 (0.5 s wavelets)"
    )
    time_bandwidth: float = Field(4.0, ge=2, le=20, description="multitaper time-bandwidth")
    baseline: Pair | None = Field(
        None, description="[t0, t1] in s inside the epochs, before "
        "the cue; default: the epochs' start (clear of half a wavelet) to 0 s",
    )  # fmt: skip
    mode: Literal["percent", "logratio"] = Field(
        "percent", description="percent change (ERD/ERS %) or logratio (dB, 10 log10 P/R)"
    )
    window: Pair | None = Field(
        None, description="[t0, t1] in s where ERD/ERS is averaged; "
        "default 0.5 s to the epochs' end less half a wavelet",
    )  # fmt: skip
    channels: list[str] | None = Field(None, min_length=1, description="default: all")
    decim: int | None = Field(
        None, ge=1, le=50, description="keep every n-th time point of the power (memory); "
        "default: ~50 Hz steps",
    )  # fmt: skip

    @field_validator("baseline", "window")
    @classmethod
    def _ordered(cls, value: list[float] | None) -> list[float] | None:
        return _pair(value, "the interval")

    @field_validator("freqs")
    @classmethod
    def _freqs(cls, value: list[float] | None) -> list[float] | None:
        if value is not None and not 0 < value[0] < value[1]:
            raise ValueError(f"freqs [fmin, fmax] needs 0 < fmin < fmax, got {value}")
        return value


class ClusterTestArgs(BaseModel):
    measure: Literal["erp", "tfr"] = Field(
        "erp", description="erp: trial amplitudes over time; tfr: per-trial power (dB)"
    )
    conditions: list[str] | None = Field(
        None, min_length=2, description="classes compared (two: t-test; more: F); default all"
    )
    window: Pair | None = Field(
        None, description="[t0, t1] in s; default: the whole "
        "epoch (tfr: clear of half a wavelet at the edges)",
    )  # fmt: skip
    channels: list[str] | None = Field(None, min_length=1, description="default: all")
    band: BandName | Pair | None = Field(
        None, description=f"tfr: mean power in one band, {BAND_HELP}; default: every frequency"
    )
    freqs: Pair | None = Field(
        None, description="tfr without band: [fmin, fmax] Hz "
        "(default 4-40)",
    )  # fmt: skip
    fstep: float = Field(1.0, gt=0, le=10, description="tfr: frequency step in Hz")
    n_cycles: float | None = Field(None, gt=0, le=50, description="tfr: default freqs/2")
    decim: int | None = Field(None, ge=1, le=50, description="tfr: keep every n-th time point")
    n_permutations: int = Field(
        1000, ge=1, le=20000, description="random permutations; smallest p is 1/(n+1)"
    )
    threshold: float | None = Field(
        None, gt=0, description="cluster-forming |t| or F; default: that of p < 0.05"
    )
    tail: Literal[-1, 0, 1] | None = Field(
        None, description="0 two-tailed, 1 first > second, -1 first < second (F: 1); default 0"
    )
    seed: int = Field(0, ge=0, description="seeds the permutations (reproducible)")

    @field_validator("window")
    @classmethod
    def _ordered(cls, value: list[float] | None) -> list[float] | None:
        return _pair(value, "window")


def tfr_tools(study: Study) -> list[BaseTool]:
    flags = {**READ_ONLY, "long_running": True, "timeout": 1800}
    return [
        analysis_tool(study, "tfr", TFR_DESCRIPTION, TimeFrequencyArgs, **flags),
        analysis_tool(study, "cluster", CLUSTER_DESCRIPTION, ClusterTestArgs, **flags),
    ]
