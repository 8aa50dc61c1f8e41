"""The decoding pipelines, each a fresh unfitted scikit-learn estimator, built inside each fold.

Every step that learns (CSP, covariance shrinkage, tangent-space reference, scaling, the
classifier, the network) is a step of the estimator, so fitting it on a training fold fits all
of it there and nowhere else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin

CLASSICAL = ("csp_lda", "ts_lr", "mdm", "fbcsp")
NETWORKS = ("eegnet", "shallowconvnet", "sccnet")
PIPELINES = (*CLASSICAL, *NETWORKS)
# filter bank of FBCSP (Ang et al. 2008): 4 Hz bands from 4 to 40 Hz
FB_BANDS = tuple((lo, lo + 4) for lo in range(4, 40, 4))
# Pipelines whose first step is each trial's own covariance (pyriemann Covariances("oas"): the
# shrinkage comes from that trial's samples alone, its fit learns nothing). The cross-validation
# estimates it once per trial for every fold (trial_covariances) and fits the rest per fold.
PER_TRIAL_COVARIANCE = ("ts_lr", "mdm")


def trial_covariances(X: np.ndarray) -> np.ndarray:
    """Each trial's covariance, exactly as the first step of the PER_TRIAL_COVARIANCE pipelines
    computes it (n_trials x channels x channels)."""
    from pyriemann.estimation import Covariances

    return Covariances("oas").transform(X)


def build(
    name: str,
    n_channels: int,
    sfreq: float,
    seed: int = 0,
    epochs: int = 30,
    *,
    on_covariances: bool = False,
) -> Any:
    """A new, unfitted estimator for pipeline `name` (predict_proba, classes_). With
    `on_covariances` (PER_TRIAL_COVARIANCE only) its input is trial_covariances(X): the same
    pipeline without its first step."""
    if on_covariances and name not in PER_TRIAL_COVARIANCE:
        raise ValueError(f"pipeline '{name}' does not start with each trial's covariance")
    whole = _whole(name, n_channels, sfreq, seed, epochs)
    return whole[1:] if on_covariances else whole


def _whole(name: str, n_channels: int, sfreq: float, seed: int, epochs: int) -> Any:
    """Pipeline `name` with all its steps."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
    from sklearn.pipeline import make_pipeline

    if name == "csp_lda":
        from mne.decoding import CSP

        return make_pipeline(CSP(n_components=min(8, n_channels), log=True), LDA(solver="svd"))
    if name in ("ts_lr", "mdm"):
        from pyriemann.classification import MDM
        from pyriemann.estimation import Covariances
        from pyriemann.tangentspace import TangentSpace
        from sklearn.linear_model import LogisticRegression

        if name == "mdm":
            return make_pipeline(Covariances("oas"), MDM(metric="riemann"))
        return make_pipeline(
            Covariances("oas"), TangentSpace(metric="riemann"), LogisticRegression(max_iter=1000)
        )
    if name == "fbcsp":
        return make_pipeline(
            FilterBankCSP(sfreq=sfreq, n_components=min(4, n_channels)),
            LDA(solver="lsqr", shrinkage="auto"),
        )
    if name in NETWORKS:
        return NetworkClassifier(kind=name, sfreq=sfreq, seed=seed, epochs=epochs)
    raise ValueError(f"unknown pipeline '{name}'; choose from {', '.join(PIPELINES)}")


def bands_below(sfreq: float) -> list[tuple[int, int]]:
    """The filter bank's bands that fit under the Nyquist frequency."""
    return [(lo, hi) for lo, hi in FB_BANDS if hi < sfreq / 2 * 0.95]


class FilterBankCSP(TransformerMixin, BaseEstimator):
    """Band-pass each trial in fixed bands (no learning), one CSP per band fitted on the
    training trials; features: every band's CSP log-variances side by side."""

    def __init__(self, sfreq: float = 250.0, n_components: int = 4) -> None:
        self.sfreq = sfreq
        self.n_components = n_components

    def _banded(self, X: np.ndarray) -> list[np.ndarray]:
        from scipy.signal import butter, sosfiltfilt

        out = []
        for lo, hi in bands_below(self.sfreq):
            sos = butter(4, [lo, hi], btype="bandpass", fs=self.sfreq, output="sos")
            out.append(sosfiltfilt(sos, X, axis=-1))
        if not out:
            raise ValueError(f"no filter-bank band fits under {self.sfreq / 2:g} Hz (Nyquist)")
        return out

    def fit(self, X: np.ndarray, y: np.ndarray) -> FilterBankCSP:
        from mne.decoding import CSP

        self.csps_ = [
            CSP(n_components=self.n_components, log=True).fit(b, y) for b in self._banded(X)
        ]
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        banded = self._banded(X)
        return np.hstack([c.transform(b) for c, b in zip(self.csps_, banded, strict=True)])


class NetworkClassifier(ClassifierMixin, BaseEstimator):
    """One of the project's torch networks as a scikit-learn classifier: built and trained on
    the training fold only (its channel scaling too), from `seed`."""

    def __init__(
        self,
        kind: str = "eegnet",
        sfreq: float = 250.0,
        seed: int = 0,
        epochs: int = 30,
        batch_size: int = 32,
        learning_rate: float = 1e-3,
    ) -> None:
        self.kind = kind
        self.sfreq = sfreq
        self.seed = seed
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate

    def fit(self, X: np.ndarray, y: np.ndarray) -> NetworkClassifier:
        import torch

        from brainchat.eeg.decoding.models import build_model
        from brainchat.eeg.decoding.training import TrainConfig, train_torch

        self.classes_, codes = np.unique(y, return_inverse=True)
        torch.manual_seed(self.seed)
        module = build_model(self.kind, X.shape[1], X.shape[2], len(self.classes_), self.sfreq)
        cfg = TrainConfig(
            self.kind, self.epochs, self.batch_size, self.learning_rate, "adam", self.seed, "cpu"
        )
        data = {"X_train": X, "y_train": codes, "X_val": X[:0], "y_val": codes[:0]}
        from brainchat.eeg.protocols.runner import current_stop

        stop: Any = current_stop()  # a Stop ends training at its next batch
        self.predictor_ = train_torch(module, data, cfg, stop, lambda *_: None).predictor
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.predictor_.predict_proba(X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(1)]
