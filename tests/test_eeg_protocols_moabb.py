"""brainchat's within_session scores equal MOABB's WithinSessionEvaluation per subject and
session (same data, same 5 folds, same seed), for CSP+LDA and tangent space + LR. MOABB runs its
own pipelines (moabb_ref.reference_pipelines, built as MOABB's pipeline files build them)."""

from __future__ import annotations

import numpy as np
import pytest

from brainchat.eeg.protocols import moabb_ref
from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays

pytest.importorskip("moabb")


def assert_agree(dataset, sfreq: float, seed: int) -> dict:
    X, y, subjects, sessions, sfreq = moabb_ref.paradigm_arrays(dataset, sfreq)
    ours = cross_validate_arrays(
        CVConfig("within_session", ("csp_lda", "ts_lr"), 5, 0, seed),
        X,
        y,
        subjects,
        sessions,
        sfreq,
    )
    theirs = moabb_ref.moabb_within_session(
        dataset, moabb_ref.reference_pipelines(X.shape[1]), seed
    )
    pairs = {}
    for s in ours.summaries:
        for (subject, session), score in s.per_session.items():
            pairs[(s.pipeline, subject, session)] = (score, theirs[(s.pipeline, subject, session)])
    assert set(pairs) == set(theirs)
    for key, (a, b) in pairs.items():
        assert abs(a - b) <= 0.01, (key, a, b)
    return pairs


def test_synthetic_set_as_a_moabb_dataset_agrees() -> None:
    dataset = moabb_ref.synthetic_dataset(
        subjects=3, sessions=1, trials=60, effect_size=0.15, seed=2
    )
    pairs = assert_agree(dataset, 250.0, seed=42)
    scores = np.array([a for a, _ in pairs.values()])
    assert len(pairs) == 6 and scores.min() < 0.99 and scores.max() > 0.6  # not at the ceiling


def test_moabb_fake_dataset_agrees() -> None:
    from moabb.datasets.fake import FakeDataset

    dataset = FakeDataset(
        event_list=["left_hand", "right_hand"], n_sessions=2, n_runs=1, n_subjects=2,
        n_events=60, duration=200, seed=7, channels=("C3", "Cz", "C4", "FC3", "FC4", "CP3"),
    )  # fmt: skip
    pairs = assert_agree(dataset, dataset.sfreq, seed=0)
    assert len(pairs) == 2 * 2 * 2  # pipelines x subjects x sessions
