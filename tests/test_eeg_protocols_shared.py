"""Work shared by the folds of a cross-validation without sharing what they fit: each trial's
covariance (ts_lr, mdm: pyriemann's Covariances("oas"), estimated from that trial's samples
alone) is estimated once for all folds and pipelines; the tangent-space reference, the
classifier and MDM's class means are still fitted inside each training fold, and the scores are
exactly those of the whole pipeline fitted per fold."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from brainchat.eeg.io import synthetic
from brainchat.eeg.protocols import pipelines
from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays, scored_parts
from brainchat.eeg.protocols.folds import FoldTask, run_fold
from brainchat.eeg.protocols.splits import make_folds


@pytest.fixture(scope="module")
def arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Two subjects x two sessions of 40 synthetic motor-imagery trials, 8-30 Hz, 2 s epochs."""
    import mne

    X, y, subjects, sessions = [], [], [], []
    for subject in (1, 2):
        for session in (1, 2):
            raw = synthetic.make_recording(subject, session, 40, 0.5, seed=5)
            raw.filter(8.0, 30.0, verbose="error").resample(125.0, verbose="error")
            events, ids = mne.events_from_annotations(raw, verbose="error")
            eps = mne.Epochs(raw, events, ids, 0.5, 2.5, baseline=None, verbose="error")
            X.append(eps.get_data(copy=True))
            y.append((eps.events[:, 2] == ids["right_hand"]).astype(int))
            subjects += [f"0{subject}"] * len(eps)
            sessions += [f"0{session}"] * len(eps)
    return np.concatenate(X), np.concatenate(y), np.array(subjects), np.array(sessions), 125.0


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAINCHAT_CV_WORKERS", "1")
    monkeypatch.delenv("BRAINCHAT_DASK_SCHEDULER", raising=False)


def test_each_trials_covariance_is_estimated_once_for_all_folds(
    arrays, in_process, monkeypatch
) -> None:
    import pyriemann.estimation

    X, y, subjects, sessions, sfreq = arrays
    estimated: list[str] = []
    real = pyriemann.estimation.covariances

    def counting(Xc, *args, **kwargs):
        estimated.extend(_digest(t) for t in Xc)
        return real(Xc, *args, **kwargs)

    monkeypatch.setattr(pyriemann.estimation, "covariances", counting)
    for protocol in ("within_session", "cross_session", "cross_subject"):
        estimated.clear()
        cfg = CVConfig(protocol, ("ts_lr", "mdm"), 5, permutations=1)
        res = cross_validate_arrays(cfg, X, y, subjects, sessions, sfreq)
        assert len(res.records) > 2
        # once per trial: not once per fold, pipeline and permutation (5 x 2 x 2 times here)
        assert sorted(estimated) == sorted(_digest(t) for t in X), protocol


@pytest.mark.parametrize("protocol", ["within_session", "cross_subject"])
def test_shared_covariances_give_the_whole_pipelines_scores(arrays, in_process, protocol) -> None:
    """Observed and permuted-label scores equal, to the last bit, those of the whole pipeline
    (Covariances -> tangent space -> LR; Covariances -> MDM) fitted on each training fold."""
    X, y, subjects, sessions, sfreq = arrays
    cfg = CVConfig(protocol, ("ts_lr", "mdm"), 4, permutations=2, seed=3)
    res = cross_validate_arrays(cfg, X, y, subjects, sessions, sfreq)
    folds, _ = make_folds(protocol, y, subjects, sessions, 4, 3)
    records = iter(res.records)
    for name in cfg.pipelines:
        for k, f in enumerate(folds):
            parts = scored_parts(f, sessions)
            whole = run_fold(
                FoldTask(
                    name, X, y, f.train, f.test, sfreq, 3, k, 2, parts=tuple(t for _, t in parts)
                )
            )
            for (session, _), part, null in zip(parts, whole.parts, whole.null, strict=True):
                r = next(records)
                assert (r.pipeline, r.subject, r.session) == (name, f.subject, session)
                assert (r.score, r.null) == (part.score, null)


def test_what_learns_is_fitted_on_the_training_covariances_only(
    arrays, in_process, monkeypatch
) -> None:
    """The fitted part of ts_lr (tangent space + LR) sees exactly the training trials'
    covariances of its fold, never a test trial's."""
    from pyriemann.estimation import Covariances

    X, y, subjects, sessions, sfreq = arrays
    seen: list[set[str]] = []
    real_build = pipelines.build

    class Recording:
        def __init__(self, inner) -> None:
            self.inner = inner

        def fit(self, Xf, yf):
            seen.append({_digest(c) for c in Xf})
            self.inner.fit(Xf, yf)
            self.classes_ = self.inner.classes_
            return self

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(pipelines, "build", lambda *a, **kw: Recording(real_build(*a, **kw)))
    cross_validate_arrays(
        CVConfig("within_session", ("ts_lr",), 3), X, y, subjects, sessions, sfreq
    )
    folds, _ = make_folds("within_session", y, subjects, sessions, 3, 0)
    covs = Covariances("oas").transform(X)
    assert len(seen) == len(folds)
    for fitted, f in zip(seen, folds, strict=True):
        assert fitted == {_digest(covs[i]) for i in f.train}
        assert fitted.isdisjoint({_digest(covs[i]) for i in f.test})


def _digest(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


def test_two_local_workers_give_the_same_scores(arrays, monkeypatch) -> None:
    """The covariances are estimated on the workers too (one task per session); the scores
    are those of the in-process run."""
    X, y, subjects, sessions, sfreq = arrays
    cfg = CVConfig("within_session", ("ts_lr", "csp_lda"), 3, permutations=1)
    monkeypatch.delenv("BRAINCHAT_DASK_SCHEDULER", raising=False)
    runs = []
    for workers in ("1", "2"):
        monkeypatch.setenv("BRAINCHAT_CV_WORKERS", workers)
        res = cross_validate_arrays(cfg, X, y, subjects, sessions, sfreq)
        runs.append([(r.pipeline, r.subject, r.session, r.score, r.null) for r in res.records])
    assert runs[0] == runs[1]
