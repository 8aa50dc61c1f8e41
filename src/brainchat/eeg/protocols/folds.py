"""One fold's work, as a module-level function over a picklable task (arrays, params, seed),
so any runner (in-process, joblib processes, a Dask cluster) gives the same scores."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FoldTask:
    """Fit `pipeline` on X[train] and score it on X[test]; then again for each permutation,
    with the training labels shuffled (the test labels never are)."""

    pipeline: str
    X: np.ndarray  # the trials this fold draws from (train and test index into it)
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


@dataclass(frozen=True)
class FoldScore:
    score: float
    null: tuple[float, ...]  # the scores with permuted training labels
    seconds: float  # fitting and scoring the observed labels


def scorer_name(n_classes: int) -> str:
    """MOABB's choice: ROC AUC for two classes, accuracy otherwise."""
    return "roc_auc" if n_classes == 2 else "accuracy"


def run_fold(task: FoldTask) -> FoldScore:
    """The observed score and the permutation scores of one fold."""
    import mne

    from brainchat.eeg.protocols.pipelines import build

    n_classes = len(np.unique(task.y))
    Xtr, ytr, Xte, yte = (
        task.X[task.train],
        task.y[task.train],
        task.X[task.test],
        task.y[task.test],
    )

    def fit_score(labels: np.ndarray) -> float:
        est = build(
            task.pipeline,
            task.X.shape[1],
            task.sfreq,
            task.seed,
            **task.params,
            on_covariances=task.covariances,
        )
        with mne.utils.use_log_level("error"):
            est.fit(Xtr, labels)
        return score(est, Xte, yte, n_classes)

    start = time.perf_counter()
    observed = fit_score(ytr)
    seconds = time.perf_counter() - start
    from brainchat.eeg.protocols.runner import Stopped, current_stop

    stop = current_stop()  # a Stop ends the permutations at the next one, not after all
    null = []
    for k in range(task.permutations):
        if stop.is_set():
            raise Stopped(f"stopped after {k} of {task.permutations} permutations")
        rng = np.random.default_rng([task.seed, task.fold_id, k])
        null.append(fit_score(rng.permutation(ytr)))
    return FoldScore(observed, tuple(null), seconds)


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
