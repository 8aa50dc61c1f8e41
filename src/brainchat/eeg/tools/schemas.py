"""Pydantic argument schemas of the EEG tools: ranges and cross-field rules, with clear messages."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from brainchat.eeg.tools.repairs import is_seconds, repair_epoch_args, repaired_baseline
from brainchat.tools.errors import CorrectedCall, ToolError, call

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

    @classmethod
    def repair(cls, args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The call's arguments with slips of form fixed, and what was fixed."""
        return repair_load_args(args)


RECORDING_SUFFIXES = (".edf", ".bdf", ".gdf", ".fif", ".fif.gz", ".vhdr", ".set")
SELECTORS = ("subjects", "sessions", "tasks", "runs")  # BIDS entities (eeg/tools/bids_tools.py)


def repair_load_args(args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """load_data naming single recording files and BIDS selectors beside them (a small model
    fills every argument, `subjects: ["01"], runs: [""]`): the selectors can only pick
    recordings inside a dataset folder, so with files alone named they select nothing; they are
    left out, and said."""
    files = args.get("files")
    if (
        not isinstance(files, list)
        or not files
        or not all(isinstance(f, str) and f.lower().endswith(RECORDING_SUFFIXES) for f in files)
    ):
        return args, []
    given = [k for k in SELECTORS if k in args and args[k] is not None]
    if not given:
        return args, []
    shown = ", ".join(f"{k} {json.dumps(args[k])}" for k in given)
    note = (
        f"{shown} left out: they select recordings inside a BIDS dataset folder, and files "
        "names single files"
    )
    return {k: v for k, v in args.items() if k not in given}, [note]


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
        description="null (default): no baseline correction; or [start, end] in s within "
        "tmin..tmax",
    )
    reject_uv: float | None = Field(
        None, gt=0, le=10000, description="drop epochs whose peak-to-peak exceeds this, in µV"
    )

    @classmethod
    def repair(cls, args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The call's arguments with slips of form fixed, and what was fixed."""
        return repair_epoch_args(args)

    @field_validator("baseline", mode="before")
    @classmethod
    def _baseline_shape(cls, value: Any, info: ValidationInfo) -> Any:
        value, _ = repaired_baseline(value)
        if value is None or (
            isinstance(value, list | tuple) and len(value) == 2 and all(map(is_seconds, value))
        ):
            return value
        tmin, tmax = info.data.get("tmin", 0.5), info.data.get("tmax", 2.5)
        fixed = {**info.data, "baseline": None}
        raise CorrectedCall(
            f"baseline {json.dumps(value, default=str)} is not an interval. "
            + _baseline_rule(tmin, tmax)
            + " Corrected call: "
            + epoch_call(fixed),
            _epoch_fix(fixed),
        )

    @model_validator(mode="after")
    def _order(self) -> EpochArgs:
        own = self.model_dump(exclude_none=True)
        if self.tmin >= self.tmax:
            fix = {"tmin": self.tmax, "tmax": self.tmin} if self.tmin > self.tmax else {}
            raise CorrectedCall(
                f"tmin ({self.tmin:g} s) must be before tmax ({self.tmax:g} s)"
                + (f". Corrected call: {epoch_call({**own, **fix})}" if fix else ""),
                _epoch_fix({**own, **fix}) if fix else None,
            )
        if self.baseline is not None:
            start, end = self.baseline
            start = self.tmin if start is None else start
            end = self.tmax if end is None else end
            if start < self.tmin - 1e-9 or end > self.tmax + 1e-9 or start > end:
                raise CorrectedCall(
                    f"baseline {json.dumps(list(self.baseline))} is outside the epoch "
                    f"{self.tmin:g}..{self.tmax:g} s. "
                    + _baseline_rule(self.tmin, self.tmax)
                    + " Corrected call: "
                    + epoch_call({**own, "baseline": None}),
                    _epoch_fix({**own, "baseline": None}),
                )
        return self


def _baseline_rule(tmin: Any, tmax: Any) -> str:
    return (
        "Allowed: leave baseline out (null: no baseline correction, the usual choice before "
        "CSP or a classifier), or [start, end] in seconds with "
        f"{tmin:g} <= start <= end <= {tmax:g} (null for an end means the epoch's edge)."
    )


def _epoch_fix(args: dict[str, Any]) -> dict[str, Any]:
    """The corrected epoch_data call as a value (tools/errors.py), None values left out."""
    return call("epoch_data", {k: v for k, v in args.items() if v is not None and k in EpochArgs.model_fields})  # fmt: skip


def epoch_call(args: dict[str, Any]) -> str:
    """An epoch_data call as prompt mode writes it, from the model's own arguments (None left out)."""
    kept = {k: v for k, v in args.items() if v is not None and k in EpochArgs.model_fields}
    return json.dumps({"name": "epoch_data", "arguments": kept})


def epoch_error(
    message: str, args: dict[str, Any], labels: frozenset[str] | set[str] = frozenset()
) -> ToolError:
    """epoch_data's error from the study, with the allowed values and a corrected call where the
    error is the model's argument: unknown event names (`labels`: the BIDS labels of the loaded
    recordings' file names, which name recordings, not events)."""
    if message.startswith("unknown event") and "available: " in message:
        sent = [str(e) for e in args.get("events") or []]
        named = [e for e in sent if e.lower() in labels]
        why = (
            f" ({', '.join(named)} {'is a label' if len(named) == 1 else 'are labels'} of the "
            "recordings' file names, not an event)"
            if named
            else ""
        )
        fixed = {k: v for k, v in args.items() if k in EpochArgs.model_fields and v is not None}
        fixed.pop("events", None)
        return ToolError(
            f"{message}{why}. Leave events out to use all of them, or name two or more of the "
            f"available ones. Corrected call: {epoch_call({**args, 'events': None})}",
            call("epoch_data", fixed),
        )
    return ToolError(message)  # never reached for another error: epoch_data re-raises those


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
