"""The study's immutable state: stages, steps, epochs, split, models. No I/O, no threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from brainchat.eeg.core.trials import Trials
from brainchat.eeg.io.loading import Recording
from brainchat.tools.errors import ToolError, call

STAGES = ("empty", "loaded", "epoched", "split", "trained")
MISSING = {  # what a stage lacks, and the tool that makes it
    "loaded": ("no data loaded: call load_data first", "load_data"),
    "epoched": ("no epochs yet: call epoch_data first", "epoch_data"),
    "split": (
        "the epochs are not split into train/validation/test: call split_dataset first",
        "split_dataset",
    ),
    "trained": ("no trained model yet: call train_model first", "train_model"),
}


@dataclass(frozen=True)
class Fitted:
    """What a kind of step learns from the data of all trials together (see `STEP_KINDS`)."""

    name: str  # the step as a user knows it ("ICA")
    learned: str  # what it estimated from the data ("its unmixing")


# Every kind of preprocessing step (Step.op), declared with what it learns from the data of all
# trials together; None: nothing, a fixed transform of each sample or channel. Preprocessing runs
# on the continuous recordings, before epoching and so before any split or fold: a step that
# learns from all trials learned from the ones later held out too, and every score after it
# names it as a leakage risk (core/leakage.py). A Step of an undeclared kind is refused.
STEP_KINDS: dict[str, Fitted | None] = {
    "bandpass": None,  # a fixed FIR filter, its coefficients from the band alone
    "notch": None,
    "resample": None,
    "reference": None,  # the average or given channels, subtracted sample by sample
    "select": None,  # channels the user named
    "montage": None,  # electrode positions
    "ica": Fitted("ICA", "its unmixing"),  # fitted on the whole continuous recordings
    "bad_channels": None,  # channels the user named, interpolated from the others or dropped
    "bad_segments": None,  # time spans the user named, annotated BAD_
}


@dataclass(frozen=True)
class Step:
    """One preprocessing step, replayable on the data as loaded."""

    op: str
    params: dict[str, Any]
    label: str

    def __post_init__(self) -> None:
        if self.op not in STEP_KINDS:
            raise ValueError(
                f"step kind {self.op!r} is not declared in STEP_KINDS (eeg/core/state.py): "
                "declare whether it learns from the data of all trials"
            )

    @property
    def fitted(self) -> Fitted | None:
        """What this step learned from all trials (None: a fixed transform)."""
        return STEP_KINDS[self.op]


@dataclass(frozen=True)
class EpochSet:
    """Epochs of all recordings, as arrays, with the labels and groups splits need."""

    X: Any  # (n_epochs, n_channels, n_times) float64, volts
    y: Any  # (n_epochs,) int index into classes
    classes: tuple[str, ...]
    subjects: Any  # (n_epochs,) str
    sessions: Any  # (n_epochs,) str
    info: Any  # mne.Info of the epochs
    tmin: float
    dropped: int = 0
    # each trial's recording, event sample, events.tsv row, and why a rejected one went
    trials: Trials | None = None

    def counts(self) -> dict[str, int]:
        return {c: int((self.y == i).sum()) for i, c in enumerate(self.classes)}


@dataclass(frozen=True)
class Split:
    by: str
    seed: int
    train: Any
    val: Any
    test: Any


@dataclass(frozen=True)
class TrainedModel:
    name: str
    kind: str
    predictor: Any  # a torch module wrapper or a sklearn pipeline
    config: dict[str, Any]
    history: dict[str, list[float]]
    seconds: float
    device: str


@dataclass(frozen=True)
class StudyState:
    recordings: tuple[Recording, ...] = ()
    raws: tuple[Any, ...] = ()  # mne Raw, one per recording, preprocessed
    history: tuple[Step, ...] = ()
    ica: Any = None  # a fitted, not yet applied mne ICA
    epochs: EpochSet | None = None
    split: Split | None = None
    models: dict[str, TrainedModel] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    # cross_validate's latest result per protocol, as plain JSON-able values
    crossval: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def stage(self) -> str:
        if self.models:
            return "trained"
        if self.split is not None:
            return "split"
        if self.epochs is not None:
            return "epoched"
        return "loaded" if self.raws else "empty"

    @property
    def eps(self) -> EpochSet:
        """The epochs, for code past a `require("epoched")` check."""
        if self.epochs is None:
            raise ToolError("no epochs yet: call epoch_data first", call("epoch_data"))
        return self.epochs

    def require(self, stage: str) -> None:
        """Raise a ToolError naming what is missing and which tool to call first."""
        have = STAGES.index(self.stage)
        if have < STAGES.index(stage):
            text, tool = MISSING[STAGES[have + 1]]  # the first missing step
            raise ToolError(text, call(tool))

    def without_derived(self) -> StudyState:
        """The same continuous data, with epochs, split, models and cross-validations dropped."""
        return replace(self, epochs=None, split=None, models={}, results={}, crossval={})


Op = Callable[[StudyState, threading.Event], tuple[StudyState, str]]
