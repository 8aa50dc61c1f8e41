"""Cross-validate pipelines on epochs with a protocol: folds -> fold tasks -> run_tasks ->
statistics. Works on plain arrays (for MOABB's data as for the study's epochs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from brainchat.eeg.protocols.folds import FoldScore, FoldTask, run_fold, scorer_name
from brainchat.eeg.protocols.splits import Fold, make_folds
from brainchat.eeg.protocols.stats import (
    FoldRecord,
    PairedTest,
    PipelineSummary,
    paired_tests,
    summarise,
)


@dataclass(frozen=True)
class CVConfig:
    protocol: str = "within_session"
    pipelines: tuple[str, ...] = ("csp_lda", "ts_lr")
    folds: int = 5
    permutations: int = 0
    seed: int = 0
    epochs: int = 30  # training epochs of the networks


@dataclass(frozen=True)
class CVResult:
    config: CVConfig
    scoring: str
    records: list[FoldRecord]
    summaries: list[PipelineSummary]
    tests: list[PairedTest]
    notes: list[str] = field(default_factory=list)
    n_epochs: int = 0
    subjects: tuple[str, ...] = ()
    sessions: int = 0  # (subject, session) groups
    n_classes: int = 2


def fold_tasks(
    cfg: CVConfig, X: np.ndarray, y: np.ndarray, folds: list[Fold], sfreq: float
) -> list[FoldTask]:
    """One task per pipeline and fold; each task holds only its fold's group of trials (a
    session, a subject, or all), so a process pool ships no more than a fold needs."""
    pools: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    tasks = []
    params = {"epochs": cfg.epochs}
    for name in cfg.pipelines:
        for fold_id, f in enumerate(folds):
            pool = np.union1d(f.train, f.test)
            key = pool.tobytes()
            if key not in pools:
                pools[key] = (pool, X[pool], y[pool])
            pool, Xp, yp = pools[key]
            train, test = np.searchsorted(pool, f.train), np.searchsorted(pool, f.test)
            extra = params if name in ("eegnet", "shallowconvnet", "sccnet") else {}
            tasks.append(
                FoldTask(
                    name, Xp, yp, train, test, sfreq, cfg.seed, fold_id, cfg.permutations, extra
                )
            )
    return tasks


def cross_validate_arrays(
    cfg: CVConfig,
    X: np.ndarray,
    y: np.ndarray,
    subjects: np.ndarray,
    sessions: np.ndarray,
    sfreq: float,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CVResult:
    """Every pipeline through every fold of the protocol, then the statistics."""
    from brainchat.eeg.protocols.runner import run_tasks

    y = np.asarray(y)
    folds, notes = make_folds(cfg.protocol, y, subjects, sessions, cfg.folds, cfg.seed)
    tasks = fold_tasks(cfg, X, y, folds, sfreq)
    scores: list[FoldScore] = run_tasks(run_fold, tasks, progress=progress, should_stop=should_stop)
    records = [
        FoldRecord(
            t.pipeline,
            folds[t.fold_id].subject,
            folds[t.fold_id].session,
            folds[t.fold_id].index,
            s.score,
            s.null,
            len(t.train),
            len(t.test),
            s.seconds,
        )
        for t, s in zip(tasks, scores, strict=True)
    ]
    summaries = [summarise(records, name) for name in cfg.pipelines]
    groups = {(f.subject, f.session) for f in folds}
    return CVResult(
        cfg,
        scorer_name(len(np.unique(y))),
        records,
        summaries,
        paired_tests(summaries),
        notes,
        len(y),
        tuple(sorted({f.subject for f in folds})),
        len(groups),
        len(np.unique(y)),
    )
