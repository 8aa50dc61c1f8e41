"""brainchat's three protocols score exactly as MOABB's evaluations do, per subject and session:
WithinSessionEvaluation, CrossSessionEvaluation and CrossSubjectEvaluation (which scores each
session of the held-out subject on its own), for 2 classes (ROC AUC) and 3 (accuracy), two seeds.
MOABB runs its own pipelines (moabb_ref.reference_pipelines, built as MOABB's pipeline files build
them), on the same data as MOABB's paradigm hands it over."""

from __future__ import annotations

import numpy as np
import pytest

from brainchat.eeg.protocols import moabb_ref
from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays

pytest.importorskip("moabb")

PROTOCOLS = ("within_session", "cross_session", "cross_subject")
TOLERANCE = 1e-6  # MOABB keeps scores as float32: they differ from ours by ~1e-8


def reference(n_channels: int) -> dict:
    from pyriemann.classification import MDM
    from pyriemann.estimation import Covariances
    from sklearn.pipeline import make_pipeline

    pipelines = moabb_ref.reference_pipelines(n_channels)
    pipelines["mdm"] = make_pipeline(Covariances("oas"), MDM(metric="riemann"))
    return pipelines


def assert_agree(protocol: str, dataset, sfreq: float, seed: int, n_classes: int = 2) -> dict:
    X, y, subjects, sessions, sfreq = moabb_ref.paradigm_arrays(dataset, sfreq, n_classes)
    ours = cross_validate_arrays(
        CVConfig(protocol, ("csp_lda", "ts_lr", "mdm"), 5, 0, seed), X, y, subjects, sessions, sfreq
    )
    assert ours.scoring == ("roc_auc" if n_classes == 2 else "accuracy")
    theirs = moabb_ref.moabb_scores(protocol, dataset, reference(X.shape[1]), seed, n_classes)
    pairs = {}
    for s in ours.summaries:
        for (subject, session), score in s.per_session.items():
            pairs[(s.pipeline, subject, session)] = (
                score,
                theirs.get((s.pipeline, subject, session)),
            )
    assert set(pairs) == set(theirs)  # the same (pipeline, subject, session) scores, no more
    for key, (a, b) in pairs.items():
        assert abs(a - b) <= TOLERANCE, (protocol, key, a, b)
    return pairs


def fake(n_classes: int):
    """MOABB's own FakeDataset: 3 subjects x 2 sessions, no download."""
    from moabb.datasets.fake import FakeDataset

    return FakeDataset(
        event_list=["left_hand", "right_hand", "feet"][:n_classes], n_sessions=2, n_runs=1,
        n_subjects=3, n_events=40, duration=150, seed=7,
        channels=("C3", "Cz", "C4", "FC3", "FC4", "CP3"),
    )  # fmt: skip


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("seed", [0, 11])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_equals_moabbs_evaluation(protocol, seed, n_classes) -> None:
    pairs = assert_agree(protocol, fake(n_classes), 128.0, seed, n_classes)
    assert len(pairs) == 3 * 3 * 2  # pipelines x subjects x sessions: cross_subject per session


def test_synthetic_set_as_a_moabb_dataset_agrees() -> None:
    dataset = moabb_ref.synthetic_dataset(
        subjects=3, sessions=1, trials=60, effect_size=0.15, seed=2
    )
    pairs = assert_agree("within_session", dataset, 250.0, seed=42)
    scores = np.array([a for a, _ in pairs.values()])
    assert scores.min() < 0.99 and scores.max() > 0.6  # not at the ceiling
