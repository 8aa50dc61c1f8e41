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
BAND_HELP = "a name (delta, theta, alpha, mu, beta, low_beta, high_beta, gamma) or [fmin, fmax] Hz"

TFR_DESCRIPTION = (
    "Time-frequency power per condition (Morlet or multitaper) against a pre-stimulus "
    "baseline: ERD/ERS per channel and band in a time window, in % (negative = ERD) or dB, "
    "with TFR maps. Needs epochs that start before the cue (epoch_data tmin < 0)."
)
CLUSTER_DESCRIPTION = (
    "Cluster-based permutation test between conditions (MNE; cluster-level FWE) on trial ERPs "
    "or time-frequency power: each cluster's channels, time/frequency span and p-value."
)


def _pair(value: list[float] | None, what: str) -> list[float] | None:
    if value is not None and value[0] >= value[1]:
        raise ValueError(f"{what} [t0, t1] needs t0 < t1, got {value}")
    return value


class TimeFrequencyArgs(BaseModel):
    method: Literal["morlet", "multitaper"] = Field("morlet", description="morlet or multitaper")
    bands: list[BandName | Pair] | None = Field(
        None, min_length=1, max_length=8, description=f"each {BAND_HELP}; default mu, beta",
    )  # fmt: skip
    freqs: Pair | None = Field(
        None, description="map range [fmin, fmax] Hz",
    )  # fmt: skip
    fstep: float = Field(1.0, gt=0, le=10, description="Hz")
    n_cycles: float | None = Field(None, gt=0, le=50, description="default freqs/2")
    time_bandwidth: float = Field(4.0, ge=2, le=20, description="multitaper")
    baseline: Pair | None = Field(
        None, description="[t0, t1] s before the cue; default: epoch start to 0",
    )  # fmt: skip
    mode: Literal["percent", "logratio"] = Field("percent", description="percent or logratio (dB)")
    window: Pair | None = Field(
        None, description="[t0, t1] s averaged; default 0.5 s to the end",
    )  # fmt: skip
    channels: list[str] | None = Field(None, min_length=1, description="default: all")
    decim: int | None = Field(
        None, ge=1, le=50, description="time decimation factor; default: about 50 samples per second kept",
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
    measure: Literal["erp", "tfr"] = Field("erp", description="erp amplitudes or tfr power")
    conditions: list[str] | None = Field(
        None, min_length=2, description="two: t-test; more: F; default all"
    )
    window: Pair | None = Field(
        None, description="[t0, t1] s; default: the epoch",
    )  # fmt: skip
    channels: list[str] | None = Field(None, min_length=1, description="default: all")
    band: BandName | Pair | None = Field(
        None, description=f"tfr: one band, {BAND_HELP}; default: all frequencies"
    )
    freqs: Pair | None = Field(
        None, description="tfr: [fmin, fmax] Hz, default 4-40",
    )  # fmt: skip
    fstep: float = Field(1.0, gt=0, le=10, description="tfr: Hz")
    n_cycles: float | None = Field(None, gt=0, le=50, description="tfr: default freqs/2")
    decim: int | None = Field(None, ge=1, le=50, description="tfr: time decimation")
    n_permutations: int = Field(1000, ge=1, le=20000, description="smallest p: 1/(n+1)")
    threshold: float | None = Field(None, gt=0, description="cluster-forming t/F; default p < 0.05")
    tail: Literal[-1, 0, 1] | None = Field(None, description="0 two-tailed, 1 or -1 one-tailed")
    seed: int = Field(0, ge=0, description="permutation seed")

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
