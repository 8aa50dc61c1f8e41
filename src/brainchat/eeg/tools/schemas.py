"""Pydantic argument schemas of the EEG tools: ranges and cross-field rules, with clear messages."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

ModelName = Literal["eegnet", "shallowconvnet", "sccnet", "csp_lda"]


class NoArgs(BaseModel):
    pass


class ListFilesArgs(BaseModel):
    pattern: str = Field("*", description="glob on file names, e.g. '*.edf' or 'sub-01*'")


class LoadArgs(BaseModel):
    files: list[str] = Field(
        ...,
        min_length=1,
        max_length=200,
        description="file paths relative to the data folder (from list_data_files)",
    )


class BandpassArgs(BaseModel):
    l_freq: float | None = Field(
        None, ge=0, le=1000, description="low cut-off in Hz (None: low-pass only)"
    )
    h_freq: float | None = Field(
        None, gt=0, le=5000, description="high cut-off in Hz (None: high-pass only)"
    )

    @model_validator(mode="after")
    def _order(self) -> BandpassArgs:
        if self.l_freq is None and self.h_freq is None:
            raise ValueError("give l_freq, h_freq or both")
        if self.l_freq is not None and self.h_freq is not None and self.l_freq >= self.h_freq:
            raise ValueError(
                f"low frequency {self.l_freq:g} Hz must be below high frequency {self.h_freq:g} Hz"
            )
        return self


class NotchArgs(BaseModel):
    freqs: list[float] = Field(
        [50.0],
        min_length=1,
        max_length=20,
        description="line-noise frequencies in Hz, e.g. [50, 100] or [60]",
    )

    @model_validator(mode="after")
    def _positive(self) -> NotchArgs:
        if any(f <= 0 for f in self.freqs):
            raise ValueError("notch frequencies must be positive (Hz)")
        return self


class ResampleArgs(BaseModel):
    sfreq: float = Field(..., ge=16, le=10000, description="new sampling rate in Hz")


class ReferenceArgs(BaseModel):
    ref: Literal["average"] | list[str] = Field(
        "average", description="'average' or a list of reference channels, e.g. ['Cz']"
    )


class SelectChannelsArgs(BaseModel):
    keep: list[str] | None = Field(None, description="channels to keep (all others dropped)")
    drop: list[str] | None = Field(None, description="channels to drop")

    @model_validator(mode="after")
    def _one(self) -> SelectChannelsArgs:
        if not self.keep and not self.drop:
            raise ValueError("give channels to keep or to drop")
        return self


class MontageArgs(BaseModel):
    name: str = Field(
        "standard_1005", description="an MNE built-in montage, e.g. standard_1005, biosemi64"
    )


class IcaFitArgs(BaseModel):
    n_components: int = Field(15, ge=2, le=256, description="number of ICA components")
    method: Literal["fastica", "infomax"] = "fastica"
    seed: int = Field(0, ge=0)


class IcaComponentsArgs(BaseModel):
    components: list[int] | None = Field(
        None, description="component indices to plot (default: all, up to 20)"
    )


class IcaApplyArgs(BaseModel):
    exclude: list[int] = Field(..., description="component indices to remove (from ica_components)")


class EpochArgs(BaseModel):
    tmin: float = Field(
        0.5, ge=-10, le=60, description="start of each epoch relative to the event, s"
    )
    tmax: float = Field(
        2.5, ge=-10, le=60, description="end of each epoch relative to the event, s"
    )
    events: list[str] | None = Field(None, description="event names (classes) to use; default: all")
    baseline: tuple[float | None, float | None] | None = Field(
        None,
        description="baseline interval (start, end) in s within tmin..tmax; None: no correction",
    )
    reject_uv: float | None = Field(
        None, gt=0, le=10000, description="drop epochs whose peak-to-peak exceeds this, in µV"
    )

    @model_validator(mode="after")
    def _order(self) -> EpochArgs:
        if self.tmin >= self.tmax:
            raise ValueError(f"tmin ({self.tmin:g} s) must be before tmax ({self.tmax:g} s)")
        return self


class SplitArgs(BaseModel):
    by: Literal["trial", "session", "subject"] = Field(
        "trial",
        description="trial: stratified by class; session/subject: whole groups held out for test",
    )
    test_ratio: float = Field(0.2, gt=0, lt=0.9, description="fraction for the test set")
    val_ratio: float = Field(
        0.2, ge=0, lt=0.9, description="fraction for validation (from training)"
    )
    seed: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _sum(self) -> SplitArgs:
        if self.test_ratio + self.val_ratio >= 0.9:
            raise ValueError("test_ratio + val_ratio must stay below 0.9 to leave training data")
        return self


class PlotRawArgs(BaseModel):
    channels: list[str] | None = Field(None, description="channels (default: up to 20)")
    start: float = Field(0.0, ge=0, description="start time in s")
    duration: float = Field(10.0, gt=0, le=120, description="window length in s")
    file: str | None = Field(None, description="which loaded file (default: the first)")


class PsdArgs(BaseModel):
    fmin: float = Field(1.0, ge=0, le=500)
    fmax: float = Field(45.0, gt=0, le=1000)

    @model_validator(mode="after")
    def _order(self) -> PsdArgs:
        if self.fmin >= self.fmax:
            raise ValueError(f"fmin ({self.fmin:g} Hz) must be below fmax ({self.fmax:g} Hz)")
        return self


class TopomapArgs(PsdArgs):
    fmin: float = Field(8.0, ge=0, le=500)
    fmax: float = Field(13.0, gt=0, le=1000)


class EpochsAverageArgs(BaseModel):
    channels: list[str] | None = Field(
        None, description="channels (default: C3, Cz, C4 when present)"
    )


class TrainArgs(BaseModel):
    model: ModelName = Field("eegnet", description="eegnet, shallowconvnet, sccnet or csp_lda")
    epochs: int = Field(30, ge=1, le=1000, description="training epochs (ignored by csp_lda)")
    batch_size: int = Field(32, ge=1, le=4096)
    learning_rate: float = Field(1e-3, gt=0, le=1.0)
    optimizer: Literal["adam", "adamw", "sgd"] = "adam"
    seed: int = Field(0, ge=0)
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="auto uses CUDA when present"
    )


class EvaluateArgs(BaseModel):
    model: str | None = Field(None, description="trained model name (default: the latest)")
