"""Cross-validate pipelines on epochs with a protocol: folds -> fold tasks -> run_tasks ->
statistics. Works on plain arrays (for MOABB's data as for the study's epochs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from brainchat.eeg.protocols.folds import (
    FoldScore,
    FoldTask,
    run_fold,
    scorer_name,
    trial_covariances,
)
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
    class_counts: tuple[int, ...] = ()  # trials per class (index order) of all the epochs


def fold_pools(folds: list[Fold]) -> tuple[list[np.ndarray], list[int]]:
    """The distinct groups of trials the folds draw from (a session, a subject, or all), and
    each fold's group: a task carries only its group, so a process pool ships no more."""
    pools: dict[bytes, int] = {}
    arrays: list[np.ndarray] = []
    of_fold: list[int] = []
    for f in folds:
        pool = np.union1d(f.train, f.test)
        key = pool.tobytes()
        if key not in pools:
            pools[key] = len(arrays)
            arrays.append(pool)
        of_fold.append(pools[key])
    return arrays, of_fold


def shared_covariances(
    cfg: CVConfig,
    X: np.ndarray,
    pools: list[np.ndarray],
    should_stop: Callable[[], bool] | None = None,
) -> list[np.ndarray] | None:
    """Each trial's covariance, once per trial for every fold and pipeline that starts with it
    (pipelines.PER_TRIAL_COVARIANCE; it learns nothing across trials), one task per group;
    None when no pipeline needs it."""
    from brainchat.eeg.protocols.pipelines import PER_TRIAL_COVARIANCE
    from brainchat.eeg.protocols.runner import run_tasks

    if not set(cfg.pipelines) & set(PER_TRIAL_COVARIANCE):
        return None
    groups = [group_trials(X, p) for p in pools]  # views: no second copy of the epochs
    return run_tasks(trial_covariances, groups, should_stop=should_stop)


def scored_parts(fold: Fold, sessions: np.ndarray) -> tuple[tuple[str, np.ndarray], ...]:
    """The fold's test trials as MOABB scores them: each session on its own (a cross_subject
    fold holds every session of the held-out subject; the other protocols' folds hold one)."""
    held = sessions[fold.test]
    return tuple((str(s), fold.test[held == s]) for s in sorted(set(held.tolist())))


def group_trials(X: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """A group's trials (`pool` sorted and distinct): a view of X when they lie side by side (a
    session's or a subject's epochs, or all of them: the usual case), else one copy shared by
    the group's tasks. A view costs no memory: the epochs are not held twice while folds run."""
    from brainchat.eeg.protocols.folds import trials

    return trials(X, pool)


def fold_tasks(
    cfg: CVConfig,
    X: np.ndarray,
    y: np.ndarray,
    folds: list[Fold],
    sfreq: float,
    covs: list[np.ndarray] | None = None,
    sessions: np.ndarray | None = None,
) -> list[FoldTask]:
    """One task per pipeline and fold, holding its fold's group of trials (fold_pools); a
    PER_TRIAL_COVARIANCE pipeline's task holds the group's covariances (`covs`, one array per
    group) when given, its raw trials otherwise. With `sessions`, each task scores each test
    session on its own (scored_parts)."""
    from brainchat.eeg.protocols.pipelines import NETWORKS, PER_TRIAL_COVARIANCE

    pools, of_fold = fold_pools(folds)
    raw: dict[int, np.ndarray] = {}
    tasks = []
    params = {"epochs": cfg.epochs}
    for name in cfg.pipelines:
        on_covs = covs is not None and name in PER_TRIAL_COVARIANCE
        for fold_id, f in enumerate(folds):
            k = of_fold[fold_id]
            pool = pools[k]
            if on_covs:
                Xp = covs[k]  # type: ignore[index]
            else:
                if k not in raw:
                    raw[k] = group_trials(X, pool)
                Xp = raw[k]
            train, test = np.searchsorted(pool, f.train), np.searchsorted(pool, f.test)
            parts = (
                tuple(np.searchsorted(pool, t) for _, t in scored_parts(f, sessions))
                if sessions is not None
                else ()
            )
            extra = params if name in NETWORKS else {}
            tasks.append(
                FoldTask(
                    name,
                    Xp,
                    y[pool],
                    train,
                    test,
                    sfreq,
                    cfg.seed,
                    fold_id,
                    cfg.permutations,
                    extra,
                    covariances=on_covs,
                    parts=parts,
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
    from brainchat.eeg.protocols.runner import Cancelled, run_tasks

    y = np.asarray(y)
    folds, notes = make_folds(cfg.protocol, y, subjects, sessions, cfg.folds, cfg.seed)
    try:
        covs = shared_covariances(cfg, X, fold_pools(folds)[0], should_stop)
    except Cancelled:
        raise Cancelled(0, len(cfg.pipelines) * len(folds)) from None
    sessions = np.asarray(sessions).astype(str)
    tasks = fold_tasks(cfg, X, y, folds, sfreq, covs, sessions)
    scores: list[FoldScore] = run_tasks(run_fold, tasks, progress=progress, should_stop=should_stop)
    records = fold_records(tasks, scores, folds, sessions)
    summaries = [summarise(records, name) for name in cfg.pipelines]
    groups = {(r.subject, r.session) for r in records}
    return CVResult(
        cfg,
        scorer_name(len(np.unique(y))),
        records,
        summaries,
        paired_tests(summaries),
        [*notes, *unscored_notes(records)],
        len(y),
        tuple(sorted({f.subject for f in folds})),
        len(groups),
        len(np.unique(y)),
        tuple(int(c) for c in np.bincount(y)),
    )


def fold_records(
    tasks: list[FoldTask], scores: list[FoldScore], folds: list[Fold], sessions: np.ndarray
) -> list[FoldRecord]:
    """One record per task and scored part (a test session), in task order."""
    records = []
    for t, s in zip(tasks, scores, strict=True):
        f = folds[t.fold_id]
        for (session, test), part, null in zip(
            scored_parts(f, sessions), s.parts, s.null, strict=True
        ):
            records.append(
                FoldRecord(
                    t.pipeline, f.subject, session, f.index, part.score, null, len(t.train),
                    len(test), s.seconds, part.balanced, part.kappa, part.why,
                )
            )  # fmt: skip
    return records


def unscored_notes(records: list[FoldRecord]) -> list[str]:
    """Each fold that could not be scored, and why: left out of the means, named, not hidden."""
    return [
        f"not scored: {r.pipeline} subject {r.subject} session {r.session} fold {r.fold}: "
        f"{r.why or 'the score was not finite'}; left out of the means"
        for r in records
        if not np.isfinite(r.score)
    ]
