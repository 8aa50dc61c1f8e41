"""Statistics of a cross-validation: per-subject scores, mean ± sd, permutation chance level and
p-value per pipeline, paired Wilcoxon signed-rank tests between pipelines across subjects."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    balanced: float = float("nan")  # balanced accuracy
    kappa: float = float("nan")  # Cohen's kappa
    why: str = ""  # why `score` is NaN


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
    per_subject_p: dict[str, float] = field(default_factory=dict)  # each subject's own test
    balanced: tuple[float, float] = (float("nan"), float("nan"))  # mean, sd over subjects
    kappa: tuple[float, float] = (float("nan"), float("nan"))


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


def _spread(per_subject: dict[str, float]) -> tuple[float, float]:
    """Mean and sd (ddof 1; 0 with one subject) of the finite per-subject values."""
    values = np.array(list(per_subject.values()), dtype=float)
    finite = values[np.isfinite(values)]
    if not len(finite):
        return float("nan"), float("nan")
    return float(finite.mean()), float(finite.std(ddof=1)) if len(finite) > 1 else 0.0


def _p(observed: float, null: np.ndarray) -> float:
    """(1 + #null >= observed) / (1 + n): never 0, calibrated under the null."""
    return (1 + int((null >= observed - 1e-12).sum())) / (1 + len(null))


def summarise(records: list[FoldRecord], pipeline: str) -> PipelineSummary:
    """One pipeline's scores per subject and session, and its permutation tests.

    The group statistic is the mean over subjects; each permutation redoes the same folds with
    the training labels shuffled, giving one such mean; p = (1 + #null >= observed) / (1 + n).
    Each subject's own p compares its mean with its means under the same permutations."""
    mine = [r for r in records if r.pipeline == pipeline]
    sessions: dict[tuple[str, str], list[float]] = {}
    for r in mine:
        sessions.setdefault((r.subject, r.session), []).append(r.score)
    per_session = {k: _mean(v) for k, v in sessions.items()}
    per_subject = _by_subject(mine, [r.score for r in mine])
    mean, sd = _spread(per_subject)
    balanced = _spread(_by_subject(mine, [r.balanced for r in mine]))
    kappa = _spread(_by_subject(mine, [r.kappa for r in mine]))
    n_perm = min((len(r.null) for r in mine), default=0)
    if n_perm == 0:
        return PipelineSummary(
            pipeline, mean, sd, per_subject, per_session, None, None, 0, {}, balanced, kappa
        )
    nulls = [_by_subject(mine, [r.null[k] for r in mine]) for k in range(n_perm)]
    group = np.array([np.nanmean(list(n.values())) for n in nulls])
    per_subject_p = {
        subject: _p(value, np.array([n[subject] for n in nulls]))
        for subject, value in per_subject.items()
        if np.isfinite(value)
    }
    return PipelineSummary(
        pipeline, mean, sd, per_subject, per_session, float(np.nanmean(group)),
        _p(mean, group), n_perm, per_subject_p, balanced, kappa,
    )  # fmt: skip


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
            note = _few_differences(x, y)
            out.append(
                PairedTest(
                    a.pipeline, b.pipeline, len(x), float(res.statistic), float(res.pvalue), note
                )
            )
    return out


def _few_differences(x: np.ndarray, y: np.ndarray) -> str:
    """A note when the non-zero differences are too few for p to reach 0.05: the exact
    two-sided signed-rank p is at least 2 / 2**n for n non-zero differences (zeros are
    dropped), so n <= 5 can never give p < 0.05, however large the effect."""
    nonzero = int((~np.isclose(x, y, rtol=0, atol=1e-12)).sum())
    if nonzero >= 6:
        return ""
    ties = f" ({len(x) - nonzero} tied subject(s) dropped)" if nonzero < len(x) else ""
    return (
        f"{nonzero} non-zero difference(s){ties}: the smallest possible p is "
        f"{2 / 2**nonzero:.3f}, so p cannot reach 0.05"
    )
