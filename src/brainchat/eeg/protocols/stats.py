"""Statistics of a cross-validation: per-subject scores, mean ± sd, permutation chance level and
p-value per pipeline, paired Wilcoxon signed-rank tests between pipelines across subjects."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FoldRecord:
    pipeline: str
    subject: str
    session: str
    fold: int
    score: float
    null: tuple[float, ...]
    n_train: int
    n_test: int
    seconds: float


@dataclass(frozen=True)
class PipelineSummary:
    pipeline: str
    mean: float  # over subjects (each subject: the mean of its folds)
    sd: float  # over subjects (0 with one subject)
    per_subject: dict[str, float]
    per_session: dict[tuple[str, str], float]  # (subject, session) -> mean of its folds
    chance: float | None  # mean of the permutation means (None: no permutations)
    p_value: float | None
    permutations: int


@dataclass(frozen=True)
class PairedTest:
    a: str
    b: str
    n: int  # subjects
    statistic: float | None
    p_value: float | None
    note: str = ""


def _mean(values: list[float]) -> float:
    arr = np.array(values, dtype=float)
    return float(np.nanmean(arr)) if np.isfinite(arr).any() else float("nan")


def summarise(records: list[FoldRecord], pipeline: str) -> PipelineSummary:
    """One pipeline's scores per subject and session, and its permutation test.

    The statistic is the mean over subjects; each permutation redoes the same folds with the
    training labels shuffled, giving one such mean; p = (1 + #null >= observed) / (1 + n)."""
    mine = [r for r in records if r.pipeline == pipeline]
    sessions: dict[tuple[str, str], list[float]] = {}
    for r in mine:
        sessions.setdefault((r.subject, r.session), []).append(r.score)
    per_session = {k: _mean(v) for k, v in sessions.items()}
    per_subject = _by_subject(mine, [r.score for r in mine])
    values = np.array(list(per_subject.values()))
    mean = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    sd = float(np.nanstd(values, ddof=1)) if np.isfinite(values).sum() > 1 else 0.0
    n_perm = min((len(r.null) for r in mine), default=0)
    if n_perm == 0:
        return PipelineSummary(pipeline, mean, sd, per_subject, per_session, None, None, 0)
    null = np.array(
        [
            np.nanmean(list(_by_subject(mine, [r.null[k] for r in mine]).values()))
            for k in range(n_perm)
        ]
    )
    p = (1 + int((null >= mean - 1e-12).sum())) / (1 + n_perm)
    return PipelineSummary(
        pipeline, mean, sd, per_subject, per_session, float(np.nanmean(null)), p, n_perm
    )


def _by_subject(records: list[FoldRecord], scores: list[float]) -> dict[str, float]:
    """Each subject's mean: over its sessions' means (each the mean of their folds)."""
    sessions: dict[tuple[str, str], list[float]] = {}
    for r, s in zip(records, scores, strict=True):
        sessions.setdefault((r.subject, r.session), []).append(s)
    subjects: dict[str, list[float]] = {}
    for (subject, _), v in sessions.items():
        subjects.setdefault(subject, []).append(_mean(v))
    return {k: _mean(v) for k, v in subjects.items()}


def paired_tests(summaries: list[PipelineSummary]) -> list[PairedTest]:
    """Wilcoxon signed-rank test of every pair of pipelines over their per-subject scores."""
    from scipy.stats import wilcoxon

    out = []
    for i, a in enumerate(summaries):
        for b in summaries[i + 1 :]:
            common = [s for s in a.per_subject if s in b.per_subject]
            x = np.array([a.per_subject[s] for s in common])
            y = np.array([b.per_subject[s] for s in common])
            ok = np.isfinite(x) & np.isfinite(y)
            x, y = x[ok], y[ok]
            if len(x) < 2:
                out.append(
                    PairedTest(a.pipeline, b.pipeline, len(x), None, None, "needs 2+ subjects")
                )
                continue
            if np.allclose(x, y):
                out.append(PairedTest(a.pipeline, b.pipeline, len(x), 0.0, 1.0, "identical scores"))
                continue
            res = wilcoxon(x, y)
            note = "fewer than 6 subjects: p cannot reach 0.05" if len(x) < 6 else ""
            out.append(
                PairedTest(
                    a.pipeline, b.pipeline, len(x), float(res.statistic), float(res.pvalue), note
                )
            )
    return out
