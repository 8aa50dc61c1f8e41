"""Pydantic argument schemas of the EEG tools: ranges and cross-field rules, with clear messages."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

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
    def repair(cls, args: dict[str, Any], question: str = "") -> tuple[dict[str, Any], list[str]]:
        """The call's arguments with harmless, unambiguous slips fixed, and what was fixed."""
        return repair_load_args(args)


RECORDING_SUFFIXES = (".edf", ".bdf", ".gdf", ".fif", ".fif.gz", ".vhdr", ".set")
SELECTORS = ("subjects", "sessions", "tasks", "runs")  # BIDS entities (eeg/tools/bids_tools.py)


def repair_load_args(args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """load_data naming single recording files and BIDS selectors beside them (issue #23: the
    1.5B model filled every argument, `subjects: ["01"], runs: [""]`, and each load failed with
    'select recordings of a BIDS dataset'): the selectors can only pick recordings inside a
    dataset folder, so with files alone named they are left out, and said."""
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
    def repair(cls, args: dict[str, Any], question: str = "") -> tuple[dict[str, Any], list[str]]:
        """The call's arguments with harmless, unambiguous slips fixed, and what was fixed
        (`question`: the user's request, which decides whether a baseline was asked for)."""
        return repair_epoch_args(args, question)

    @field_validator("baseline", mode="before")
    @classmethod
    def _baseline_shape(cls, value: Any, info: ValidationInfo) -> Any:
        value, _ = _repaired_baseline(value)
        if value is None or (
            isinstance(value, list | tuple) and len(value) == 2 and all(map(_seconds, value))
        ):
            return value
        tmin, tmax = info.data.get("tmin", 0.5), info.data.get("tmax", 2.5)
        raise ValueError(
            f"baseline {json.dumps(value, default=str)} is not an interval. "
            + _baseline_rule(tmin, tmax)
            + " Corrected call: "
            + epoch_call({**info.data, "baseline": None})
        )

    @model_validator(mode="after")
    def _order(self) -> EpochArgs:
        own = self.model_dump(exclude_none=True)
        if self.tmin >= self.tmax:
            fix = {"tmin": self.tmax, "tmax": self.tmin} if self.tmin > self.tmax else {}
            raise ValueError(
                f"tmin ({self.tmin:g} s) must be before tmax ({self.tmax:g} s)"
                + (f". Corrected call: {epoch_call({**own, **fix})}" if fix else "")
            )
        if self.baseline is not None:
            start, end = self.baseline
            start = self.tmin if start is None else start
            end = self.tmax if end is None else end
            if start < self.tmin - 1e-9 or end > self.tmax + 1e-9 or start > end:
                raise ValueError(
                    f"baseline {json.dumps(list(self.baseline))} is outside the epoch "
                    f"{self.tmin:g}..{self.tmax:g} s. "
                    + _baseline_rule(self.tmin, self.tmax)
                    + " Corrected call: "
                    + epoch_call({**own, "baseline": None})
                )
        return self


NO_BASELINE = ("", "none", "null", "no", "false", "off")  # as text: no baseline correction


def repair_epoch_args(args: dict[str, Any], question: str = "") -> tuple[dict[str, Any], list[str]]:
    """epoch_data's `baseline` written harmlessly wrong in a way with one meaning (issue #23, a
    small model): the text "None"/"null", an empty list, [null], false -> null (no correction);
    a list written as text ("[0, 0.5]") -> that list. And a baseline outside the epoch when the
    user's request asks for no baseline: the model made it up (the 1.5B model sent [0.0, 0.5],
    then [0.0, 0.0], for 'epoch 0.5-2.5 s', and never the corrected call), and it cannot be
    applied to that epoch, so it is left out. Anything else is left for the check."""
    args, notes = _repaired_reject(args, question)
    if "baseline" not in args:
        return args, notes
    fixed, note = _repaired_baseline(args["baseline"])
    if not note and "baseline" not in question.lower() and _outside(fixed, args):
        note = (
            f"baseline {json.dumps(fixed)} lies outside the epoch and the request asks for no "
            "baseline correction, so it was left out (no baseline correction)"
        )
        fixed = None
    return ({**args, "baseline": fixed}, [note, *notes]) if note else (args, notes)


# EEG's peak-to-peak is usually 50-150 µV: a made-up limit under it drops most epochs or all
# (the bench's pipeline run of 27 Nov: reject_uv 20 nobody asked for dropped all 192 epochs)
REJECT_FLOOR_UV = 50.0
REJECT_WORDS = ("reject", "artifact", "artefact", "threshold", "peak", "µv", "uv")


def _repaired_reject(args: dict[str, Any], question: str) -> tuple[dict[str, Any], list[str]]:
    """A `reject_uv` under REJECT_FLOOR_UV that the request never asked for: the model made it up
    (the 1.5B model sent 2.0, and once 20.0, for 'epoch 0.5-2.5 s', and every epoch was
    dropped), so it is left out. Asked for, it stays, and the tool's error says what to write."""
    value = args.get("reject_uv")
    low = question.lower()
    if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
        # "0" for "no rejection" (the 1.5B model, golden run of 25 Nov: the schema refused it,
        # and the model never sent the call again): one meaning, whatever the request says
        note = f"reject_uv {value:g} means no rejection, so it was left out (no rejection)"
        return {k: v for k, v in args.items() if k != "reject_uv"}, [note]
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 < value < REJECT_FLOOR_UV
        and not any(word in low for word in REJECT_WORDS)
    ):
        note = (
            f"reject_uv {value:g} µV is under EEG's usual peak-to-peak (50-150 µV), so it would "
            "drop most epochs or all, and the request asks for no rejection: it was left out "
            "(no rejection)"
        )
        return {k: v for k, v in args.items() if k != "reject_uv"}, [note]
    return args, []


def _outside(baseline: Any, args: dict[str, Any]) -> bool:
    """A well-formed baseline interval that does not fit in the call's epoch."""
    if not (isinstance(baseline, list | tuple) and len(baseline) == 2):
        return False
    if not all(map(_seconds, baseline)):
        return False
    try:
        tmin, tmax = float(args.get("tmin", 0.5)), float(args.get("tmax", 2.5))
    except (TypeError, ValueError):
        return False
    start = tmin if baseline[0] is None else float(baseline[0])
    end = tmax if baseline[1] is None else float(baseline[1])
    return start < tmin - 1e-9 or end > tmax + 1e-9 or start > end


def _repaired_baseline(value: Any) -> tuple[Any, str]:
    shown = json.dumps(value, default=str)
    if value is False or (isinstance(value, str) and value.strip().lower() in NO_BASELINE):
        return None, f"baseline {shown} was read as null (no baseline correction)"
    if isinstance(value, list | tuple) and (
        not value or (len(value) == 1 and (value[0] is None or value[0] in NO_BASELINE))
    ):
        return None, f"baseline {shown} was read as null (no baseline correction)"
    if isinstance(value, str):
        text = value.strip().replace("(", "[").replace(")", "]").replace("None", "null")
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return value, ""
        if isinstance(parsed, list):
            return parsed, f"baseline {shown} (text) was read as the list {json.dumps(parsed)}"
    return value, ""


def _seconds(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _baseline_rule(tmin: Any, tmax: Any) -> str:
    return (
        "Allowed: leave baseline out (null: no baseline correction, the usual choice before "
        "CSP or a classifier), or [start, end] in seconds with "
        f"{tmin:g} <= start <= end <= {tmax:g} (null for an end means the epoch's edge)."
    )


def epoch_call(args: dict[str, Any]) -> str:
    """An epoch_data call as prompt mode writes it, from the model's own arguments (None left out)."""
    kept = {k: v for k, v in args.items() if v is not None and k in EpochArgs.model_fields}
    return json.dumps({"name": "epoch_data", "arguments": kept})


BIDS_LABEL = re.compile(r"(?:^|[_/])[a-z]+-([A-Za-z0-9]+)")  # sub-01, ses-02, task-mi, run-1


def events_naming_recordings(
    events: list[str] | None, names: list[str], available: list[str]
) -> str | None:
    """A note when every event the model named is unknown and is a label in the loaded
    recordings' BIDS file names (the 1.5B model sent events=["mi"], the task of
    `sub-01_ses-01_task-mi_eeg.edf`, and then the same call again): those name recordings, not
    events, so epoch_data uses all events. None when any named event exists, or a name is
    neither an event nor such a label (the tool's error then lists the events)."""
    if not events or any(e in available for e in events):
        return None
    labels = {m.group(1).lower() for name in names for m in BIDS_LABEL.finditer(name)}
    if not all(str(e).lower() in labels for e in events):
        return None
    return (
        f"events {json.dumps(events)} name the recordings (labels in their file names), not "
        f"events, so all events were used ({', '.join(available)})"
    )


def epoch_error(message: str, args: dict[str, Any]) -> str:
    """epoch_data's error from the study, with the allowed values and a corrected call where the
    error is the model's argument: unknown event names."""
    if message.startswith("unknown event") and "available: " in message:
        return (
            f"{message}. Leave events out to use all of them, or name two or more of the "
            f"available ones. Corrected call: {epoch_call({**args, 'events': None})}"
        )
    return message


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
