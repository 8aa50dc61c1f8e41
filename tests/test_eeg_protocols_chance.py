"""Chance stated honestly (#38): the majority-class rate beside 1/k, balanced accuracy and Cohen's
kappa where accuracy's chance is not 1/k, each subject's own permutation p beside the group's, a
fold that could not be scored named with the reason, and the Wilcoxon note driven by the number of
non-zero differences. Real pipelines on arrays of pure noise (no effect: chance is the truth)."""

from __future__ import annotations

import numpy as np
import pytest

from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays
from brainchat.eeg.protocols.report import table
from brainchat.eeg.protocols.result_json import from_json, to_json
from brainchat.eeg.protocols.stats import PipelineSummary, paired_tests


def noise(per_class: list[int], subjects: int = 2, sessions: int = 1, seed: int = 0):
    """Gaussian noise trials with labels in the given proportions, per subject and session."""
    rng = np.random.default_rng(seed)
    y_one = np.repeat(np.arange(len(per_class)), per_class)
    n = len(y_one)
    groups = [
        (f"{s:02d}", f"{k:02d}") for s in range(1, subjects + 1) for k in range(1, sessions + 1)
    ]
    X = rng.standard_normal((n * len(groups), 6, 64))
    y = np.tile(y_one, len(groups))
    subj = np.repeat([g[0] for g in groups], n)
    sess = np.repeat([g[1] for g in groups], n)
    return X, y, subj, sess


def test_imbalanced_classes_state_the_majority_rate_and_balanced_scores() -> None:
    """60/20/20 noise: accuracy near 0.6 is what always guessing the majority class scores, and
    the table says so; balanced accuracy (chance 1/3) and kappa (chance 0) stand beside it."""
    X, y, subj, sess = noise([60, 20, 20])
    res = cross_validate_arrays(
        CVConfig("within_session", ("ts_lr",), 5, 0, 0), X, y, subj, sess, 64.0
    )
    text = table(res)
    assert (
        "score accuracy (chance 0.33 = 1/3 classes; always guessing the majority class scores 0.60)"
        in text
    )
    header = next(line for line in text.splitlines() if line.startswith("pipeline | "))
    assert "balanced accuracy (chance 1/k) | Cohen's kappa (chance 0)" in header
    [row] = [line for line in text.splitlines() if line.startswith("ts_lr | ")]
    cells = row.split(" | ")
    assert len(cells) == len(header.split(" | ")) - 1 + 1  # one cell per column
    [s] = res.summaries
    assert s.mean > 0.5 and s.balanced[0] < 0.45 and abs(s.kappa[0]) < 0.2, (
        s.mean,
        s.balanced,
        s.kappa,
    )
    assert f"{s.balanced[0]:.3f} ± {s.balanced[1]:.3f}" in cells[3]
    # kept in the study's JSON form and read back the same (a resumed thread, the derivatives)
    assert table(from_json(to_json(res, ("a", "b", "c")))) == text


def test_balanced_two_classes_keep_roc_auc_and_say_its_chance() -> None:
    X, y, subj, sess = noise([30, 30])
    res = cross_validate_arrays(
        CVConfig("within_session", ("csp_lda",), 3, 0, 0), X, y, subj, sess, 64.0
    )
    text = table(res)
    assert "score ROC AUC (chance 0.5 at any class balance)" in text
    assert "balanced accuracy" not in text  # ROC AUC's chance is 0.5 whatever the classes
    # the columns name their score: the table read without its first line still says ROC AUC
    header = next(line for line in text.splitlines() if line.startswith("pipeline | "))
    assert "| ROC AUC mean ± sd over subjects |" in header and "| ROC AUC per subject" in header


def test_each_subject_gets_its_own_permutation_p() -> None:
    """A subject's p compares its own mean with its means under the same label permutations:
    recomputed here from the fold records, it equals what the summary and the table say."""
    X, y, subj, sess = noise([20, 20], subjects=3)
    res = cross_validate_arrays(
        CVConfig("within_session", ("csp_lda",), 2, 9, 1), X, y, subj, sess, 64.0
    )
    [s] = res.summaries
    assert set(s.per_subject_p) == {"01", "02", "03"}
    for subject, p in s.per_subject_p.items():
        mine = [r for r in res.records if r.subject == subject]
        observed = np.mean([r.score for r in mine])
        null = np.array([np.mean([r.null[k] for r in mine]) for k in range(9)])
        assert p == pytest.approx((1 + (null >= observed - 1e-12).sum()) / 10)
    line = next(x for x in table(res).splitlines() if "per-subject permutation test" in x)
    assert line.startswith("csp_lda per-subject permutation test: 01 p=")
    assert to_json(res, ("a", "b"))["summaries"][0]["per_subject_p"] == s.per_subject_p


def test_a_fold_that_cannot_be_scored_is_named_with_its_reason() -> None:
    """cross_subject scores each held-out session apart (as MOABB): a session holding one class
    has no ROC AUC; the note names it and why, and the subject's mean comes from the rest."""
    X, y, subj, sess = noise([20, 20], subjects=2, sessions=2)
    only = (subj == "02") & (sess == "02")
    y = y.copy()
    y[only] = 0
    res = cross_validate_arrays(
        CVConfig("cross_subject", ("csp_lda",), 5, 0, 0), X, y, subj, sess, 64.0
    )
    notes = [n for n in res.notes if n.startswith("not scored")]
    assert notes == [
        "not scored: csp_lda subject 02 session 02 fold 1: its test trials hold one class only "
        "(ROC AUC needs both); left out of the means"
    ]
    [s] = res.summaries
    assert np.isfinite(s.per_subject["02"]) and s.per_subject["02"] == s.per_session[("02", "01")]
    assert "note: not scored: csp_lda subject 02 session 02" in table(res)


def summary(name: str, scores: list[float]) -> PipelineSummary:
    per = {f"{i:02d}": v for i, v in enumerate(scores, 1)}
    return PipelineSummary(name, float(np.mean(scores)), 0.0, per, {}, None, None, 0)


def test_the_wilcoxon_note_counts_non_zero_differences_not_subjects() -> None:
    """Six subjects with one tie leave five non-zero differences: p cannot go below 2/2**5,
    whatever the effect; with six non-zero differences p can reach 0.05 and no note is due."""
    a = [0.9, 0.8, 0.85, 0.95, 0.9, 0.7]
    tied = summary("b", [0.6, 0.5, 0.55, 0.65, 0.6, 0.7])  # subject 06: same score
    [t] = paired_tests([summary("a", a), tied])
    assert t.n == 6 and t.p_value == pytest.approx(0.0625)
    assert t.note == (
        "5 non-zero difference(s) (1 tied subject(s) dropped): the smallest possible p is "
        "0.062, so p cannot reach 0.05"
    )
    [t] = paired_tests([summary("a", a), summary("b", [0.6, 0.5, 0.55, 0.65, 0.6, 0.6])])
    assert t.p_value < 0.05 and t.note == ""
