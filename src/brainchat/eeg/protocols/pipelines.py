"""The decoding pipelines, each a fresh unfitted scikit-learn estimator, built inside each fold.

Every step that learns (CSP, covariance shrinkage, tangent-space reference, scaling, the
classifier, the network) is a step of the estimator, so fitting it on a training fold fits all
of it there and nowhere else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin

# imported here, not in a method: the exported script copies this module's classes and has
# CSPFeatures (numpy and scikit-learn only) as its own
from brainchat.eeg.decoding.csp import CSPFeatures

CLASSICAL = ("csp_lda", "ts_lr", "mdm", "fbcsp")
NETWORKS = ("eegnet", "shallowconvnet", "sccnet")
PIPELINES = (*CLASSICAL, *NETWORKS)
# the filter bank of Ang et al. 2008's FBCSP, 4 Hz bands from 4 to 40 Hz; the fbcsp pipeline here
# filters each trial in them, not the continuous recording (see FilterBankCSP)
FB_BANDS = tuple((lo, lo + 4) for lo in range(4, 40, 4))
# Pipelines whose first step is each trial's own covariance (pyriemann Covariances("oas"): the
# shrinkage comes from that trial's samples alone, its fit learns nothing). The cross-validation
# estimates it once per trial for every fold (trial_covariances) and fits the rest per fold.
PER_TRIAL_COVARIANCE = ("ts_lr", "mdm")
# Pipelines that read their trials one at a time or a batch at a time (CSPFeatures, then a
# classifier on its features): a fold hands them its trials as a folds.TrialSubset of the
# epochs, never a copy of the training trials.
TRIAL_BY_TRIAL = ("csp_lda",)


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
        # rank-aware CSP; on full-rank trials exactly MOABB's CSP(n_components=8, log=True)
        csp = FilterBankCSP(sfreq=sfreq, n_components=min(8, n_channels))
        return make_pipeline(csp, LDA(solver="svd"))
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
            FilterBankCSP(sfreq, min(4, n_channels), bands=FB_BANDS, n_best=4),
            LDA(solver="lsqr", shrinkage="auto"),
        )
    if name in NETWORKS:
        return NetworkClassifier(kind=name, sfreq=sfreq, seed=seed, epochs=epochs)
    raise ValueError(f"unknown pipeline '{name}'; choose from {', '.join(PIPELINES)}")


def bands_below(
    sfreq: float, bands: tuple[tuple[float, float], ...] = FB_BANDS
) -> list[tuple[float, float]]:
    """The filter bank's bands that fit under the Nyquist frequency."""
    return [(lo, hi) for lo, hi in bands if hi < sfreq / 2 * 0.95]


class FilterBankCSP(TransformerMixin, BaseEstimator):
    """CSP log-variance features: of the trials as given (`bands` None, the csp_lda pipeline's
    CSP) or of each band of a filter bank (the fbcsp pipeline). Each CSP is
    decoding/csp.py's CSPFeatures: MNE's CSP, restricted to the training trials' rank when ICA
    removal or an average reference left them rank-deficient, and holding no copy of them.

    fbcsp follows Ang et al. 2008 with one difference: the bands (`bands`, those below Nyquist)
    are band-passed per trial (zero-phase 4th-order Butterworth), not on the continuous recording,
    as this pipeline sees only epochs, so each trial's edges carry filter transients. One CSP per
    band (two classes: components in pairs, largest and smallest eigenvalue first); then the
    `n_best` features of highest mutual information with the class on the training trials
    (sklearn's k-nearest-neighbour estimate, where Ang et al. used Parzen windows), each with its
    paired feature (their MIBIF). All of it is learned in fit, on the training fold only.
    """

    def __init__(
        self,
        sfreq: float = 250.0,
        n_components: int = 4,
        bands: tuple[tuple[float, float], ...] | None = None,
        n_best: int | None = None,
    ) -> None:
        self.sfreq = sfreq
        self.n_components = n_components
        self.bands = bands
        self.n_best = n_best

    def _banded(self, X: np.ndarray) -> list[np.ndarray]:
        from scipy.signal import butter, sosfiltfilt

        if self.bands is None:
            return [X]
        out = []
        for lo, hi in bands_below(self.sfreq, self.bands):
            sos = butter(4, [lo, hi], btype="bandpass", fs=self.sfreq, output="sos")
            out.append(sosfiltfilt(sos, X, axis=-1))
        if not out:
            raise ValueError(f"no filter-bank band fits under {self.sfreq / 2:g} Hz (Nyquist)")
        return out

    def _csp(self, X: np.ndarray, y: np.ndarray, paired: bool) -> Any:
        order = "alternate" if paired else "mutual_info"
        return CSPFeatures(self.n_components, order).fit(X, y)

    def fit(self, X: np.ndarray, y: np.ndarray) -> FilterBankCSP:
        import mne

        paired = self.n_best is not None and len(np.unique(y)) == 2
        with mne.utils.use_log_level("error"):
            banded = self._banded(X)
            self.csps_ = [self._csp(b, y, paired) for b in banded]
            self.selected_: np.ndarray | None = None
            if self.n_best is not None:
                feats = np.hstack([c.transform(b) for c, b in zip(self.csps_, banded, strict=True)])
                self.selected_ = self._mibif(feats, y, paired)
        return self

    def _mibif(self, feats: np.ndarray, y: np.ndarray, paired: bool) -> np.ndarray:
        """The `n_best` columns of highest mutual information with y, each with its pair."""
        from sklearn.feature_selection import mutual_info_classif

        mi = mutual_info_classif(feats, y, random_state=0)
        best = [int(j) for j in np.argsort(-mi, kind="stable")[: self.n_best]]
        if paired:  # "alternate" order: a band's columns 0-1, 2-3, ... are pairs
            starts = np.cumsum([0] + [len(c.filters_) for c in self.csps_])
            for j in list(best):
                band = int(np.searchsorted(starts, j, side="right")) - 1
                mate = starts[band] + ((j - starts[band]) ^ 1)
                if mate < starts[band + 1]:
                    best.append(int(mate))
        return np.array(sorted(set(best)))

    def transform(self, X: np.ndarray) -> np.ndarray:
        import mne

        with mne.utils.use_log_level("error"):
            banded = self._banded(X)
            feats = np.hstack([c.transform(b) for c, b in zip(self.csps_, banded, strict=True)])
        return feats if self.selected_ is None else feats[:, self.selected_]


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
