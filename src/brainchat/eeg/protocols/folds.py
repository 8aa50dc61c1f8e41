"""One fold's work, as a module-level function over a picklable task (arrays, params, seed),
so any runner (in-process, joblib processes, a Dask cluster) gives the same scores."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FoldTask:
    """Fit `pipeline` on X[train] and score it on each part of X[test]; then again for each
    permutation, with the training labels shuffled (the test labels never are)."""

    pipeline: str
    X: np.ndarray  # the trials this fold draws from (train, test and parts index into it)
    y: np.ndarray
    train: np.ndarray
    test: np.ndarray
    sfreq: float
    seed: int  # the pipeline's own seed (network weights)
    fold_id: int  # seeds this fold's label permutations (the same for every pipeline)
    permutations: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    # X holds each trial's covariance (pipelines.trial_covariances), estimated once for all
    # folds; the pipeline is then built without its first step (PER_TRIAL_COVARIANCE only)
    covariances: bool = False
    # the test trials scored apart (MOABB's CrossSubjectEvaluation scores each session of the
    # held-out subject on its own); empty: `test` is scored as one
    parts: tuple[np.ndarray, ...] = ()


@dataclass(frozen=True)
class PartScore:
    """One scored group of test trials: MOABB's score and the class-balanced measures."""

    score: float  # scorer_name's (ROC AUC for 2 classes, else accuracy); NaN: see `why`
    balanced: float  # balanced accuracy (chance 1/k whatever the class sizes)
    kappa: float  # Cohen's kappa (chance 0)
    why: str = ""  # why the score is NaN


@dataclass(frozen=True)
class FoldScore:
    parts: tuple[PartScore, ...]
    null: tuple[tuple[float, ...], ...]  # per part: the scores with permuted training labels
    seconds: float  # fitting and scoring the observed labels


def scorer_name(n_classes: int) -> str:
    """MOABB's choice: ROC AUC for two classes, accuracy otherwise."""
    return "roc_auc" if n_classes == 2 else "accuracy"


def run_fold(task: FoldTask) -> FoldScore:
    """The observed scores and the permutation scores of one fold, per part."""
    import mne

    from brainchat.eeg.protocols.pipelines import build

    n_classes = len(np.unique(task.y))
    from brainchat.eeg.protocols.pipelines import TRIAL_BY_TRIAL

    parts = task.parts or (task.test,)
    if task.pipeline in TRIAL_BY_TRIAL and not task.covariances:
        pick: Any = TrialSubset  # read in place, trial by trial: no copy of the fold
    else:
        pick = trials
    Xtr, ytr = pick(task.X, task.train), task.y[task.train]

    def fit(labels: np.ndarray) -> Any:
        est = build(
            task.pipeline,
            task.X.shape[1],
            task.sfreq,
            task.seed,
            **task.params,
            on_covariances=task.covariances,
        )
        with mne.utils.use_log_level("error"):
            return est.fit(Xtr, labels)

    start = time.perf_counter()
    est = fit(ytr)
    observed = tuple(part_score(est, pick(task.X, p), task.y[p], n_classes) for p in parts)
    seconds = time.perf_counter() - start
    from brainchat.eeg.protocols.runner import Stopped, current_stop

    stop = current_stop()  # a Stop ends the permutations at the next one, not after all
    null: list[list[float]] = [[] for _ in parts]
    for k in range(task.permutations):
        if stop.is_set():
            raise Stopped(f"stopped after {k} of {task.permutations} permutations")
        rng = np.random.default_rng([task.seed, task.fold_id, k])
        est = fit(rng.permutation(ytr))
        for i, p in enumerate(parts):
            null[i].append(score(est, pick(task.X, p), task.y[p], n_classes))
    return FoldScore(observed, tuple(tuple(n) for n in null), seconds)


def trials(X: np.ndarray, index: np.ndarray) -> np.ndarray:
    """X[index], as a read-only view when the index is a run of consecutive trials (no copy;
    a step that wrote into its input would raise instead of changing the study's epochs)."""
    if (
        len(index)
        and int(index[-1]) - int(index[0]) + 1 == len(index)
        and (np.diff(index) == 1).all()
    ):
        view = X[int(index[0]) : int(index[-1]) + 1]
        view.flags.writeable = False
        return view
    return X[index]


class TrialSubset:
    """The trials X[index] without a copy: a trial (`[i]`, iteration) is read from X in place,
    a slice or index array (a batch) is copied; `shape` and `len` as the array would have them.
    For estimators that read trials one at a time or by batch (pipelines.TRIAL_BY_TRIAL); one
    that needs the whole array gets a copy through `np.asarray`."""

    def __init__(self, X: np.ndarray, index: np.ndarray) -> None:
        self.X, self.index = X, np.asarray(index)

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.index), *self.X.shape[1:])

    @property
    def dtype(self) -> Any:
        return self.X.dtype

    @property
    def ndim(self) -> int:
        return self.X.ndim

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.X[self.index[key]]

    def __iter__(self) -> Any:
        return (self.X[i] for i in self.index)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.X[self.index], dtype=dtype)


def trial_covariances(X: np.ndarray) -> np.ndarray:
    """The per-trial first step of a pool of trials (a picklable task for any runner)."""
    from brainchat.eeg.protocols.pipelines import trial_covariances as covariances

    return covariances(X)


def score(est: Any, X: np.ndarray, y: np.ndarray, n_classes: int) -> float:
    """The fold's score, as MOABB computes it (sklearn's scorer of that name)."""
    from sklearn.metrics import get_scorer

    if n_classes == 2 and len(np.unique(y)) < 2:
        return float("nan")  # ROC AUC needs both classes in the test part
    return float(get_scorer(scorer_name(n_classes))(est, X, y))


def part_score(est: Any, X: np.ndarray, y: np.ndarray, n_classes: int) -> PartScore:
    """MOABB's score of a fitted estimator on one group of test trials, its balanced accuracy
    and Cohen's kappa, and why the score could not be computed when it could not."""
    from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score

    predicted = est.predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one class in the test part: kappa is undefined
        balanced = float(balanced_accuracy_score(y, predicted))
        kappa = float(cohen_kappa_score(y, predicted))
    value = score(est, X, y, n_classes)
    why = ""
    if not np.isfinite(value):
        why = (
            "its test trials hold one class only (ROC AUC needs both)"
            if len(np.unique(y)) < 2
            else "the pipeline's predictions were not finite"
        )
    return PartScore(value, balanced, kappa if np.isfinite(kappa) else float("nan"), why)
