"""MOABB as the reference: the project's synthetic set as a MOABB dataset, and MOABB's
WithinSessionEvaluation of brainchat's own pipelines. For the agreement test and the bench;
moabb is a development dependency, imported only here and only when called."""

from __future__ import annotations

from typing import Any

import numpy as np


def synthetic_dataset(
    subjects: int = 2, sessions: int = 1, trials: int = 96, seed: int = 0, effect_size: float = 0.4
) -> Any:
    """The synthetic motor-imagery recordings (eeg/synthetic.py) as a MOABB dataset: no
    download, left_hand/right_hand annotations as its events."""
    from moabb.datasets.base import BaseDataset

    from brainchat.eeg.io import synthetic

    class SyntheticMI(BaseDataset):
        def __init__(self) -> None:
            super().__init__(
                subjects=list(range(1, subjects + 1)),
                sessions_per_subject=sessions,
                events={"left_hand": 1, "right_hand": 2},
                code=f"SyntheticMI-{subjects}-{sessions}-{trials}-{seed}",
                interval=[0.5, 2.5],
                paradigm="imagery",
            )

        def _get_single_subject_data(self, subject: int) -> dict:
            return {
                str(s - 1): {"0": synthetic.make_recording(subject, s, trials, effect_size, seed)}
                for s in range(1, sessions + 1)
            }

        def data_path(self, subject, path=None, force_update=False, update_path=None, verbose=None):
            return []

    return SyntheticMI()


def paradigm(n_classes: int = 2) -> Any:
    """MOABB's LeftRightImagery (8-32 Hz IIR band-pass) for two classes; its MotorImagery over the
    dataset's first `n_classes` events (same band) otherwise."""
    from moabb.paradigms import LeftRightImagery, MotorImagery

    if n_classes == 2:
        return LeftRightImagery()
    return MotorImagery(n_classes=n_classes, fmin=8, fmax=32)


def paradigm_arrays(
    dataset: Any, sfreq: float, n_classes: int = 2
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """X, y (class indices), subjects, sessions and sampling rate as MOABB's `paradigm` hands
    them to its evaluations."""
    X, labels, meta = paradigm(n_classes).get_data(dataset, return_epochs=False)
    classes = sorted(set(labels))
    y = np.array([classes.index(v) for v in labels])
    subjects = meta.subject.astype(str).to_numpy()
    return X, y, subjects, meta.session.astype(str).to_numpy(), sfreq


def reference_pipelines(n_channels: int) -> dict[str, Any]:
    """CSP+LDA and TS+LR as MOABB's pipeline files define them (moabb/pipelines/*.yml), built
    here independently of brainchat's own (eeg/protocols/pipelines.py)."""
    from mne.decoding import CSP
    from pyriemann.estimation import Covariances
    from pyriemann.tangentspace import TangentSpace
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return {
        "csp_lda": make_pipeline(
            CSP(n_components=min(8, n_channels)), LinearDiscriminantAnalysis(solver="svd")
        ),
        "ts_lr": make_pipeline(
            Covariances("oas"), TangentSpace(metric="riemann"), LogisticRegression(max_iter=1000)
        ),
    }


EVALUATIONS = {
    "within_session": "WithinSessionEvaluation",
    "cross_session": "CrossSessionEvaluation",
    "cross_subject": "CrossSubjectEvaluation",
}


def moabb_scores(
    protocol: str, dataset: Any, pipelines: dict[str, Any], seed: int = 0, n_classes: int = 2
) -> dict[tuple[str, str, str], float]:
    """MOABB's evaluation of `protocol` (within_session: 5-fold, random_state=seed):
    (pipeline, subject, session) -> score, as MOABB reports it."""
    import tempfile

    from moabb import evaluations

    with tempfile.TemporaryDirectory() as tmp:
        evaluation = getattr(evaluations, EVALUATIONS[protocol])(
            paradigm=paradigm(n_classes),
            datasets=[dataset],
            random_state=seed,
            overwrite=True,
            hdf5_path=tmp,
            save_model=False,
        )
        table = evaluation.process(pipelines)
    return {
        (str(r.pipeline), str(r.subject), str(r.session)): float(r.score)
        for r in table.itertuples()
    }


def moabb_within_session(
    dataset: Any, pipelines: dict[str, Any], seed: int = 0
) -> dict[tuple[str, str, str], float]:
    """MOABB's WithinSessionEvaluation (5-fold, random_state=seed)."""
    return moabb_scores("within_session", dataset, pipelines, seed)
