"""CSP log-variance features that are rank-aware and hold no copy of the trials.

MNE's CSP (mne.decoding.CSP, `cov_est="concat"`, no regularisation) as MOABB's CSP+LDA uses it,
with two changes that leave its features unchanged on full-rank trials (to rounding):

- **Rank.** ICA with a component removed, or an average reference, leaves the trials spanning
  fewer dimensions than channels; a CSP that takes them as full rank solves a generalised
  eigenproblem on a singular covariance and fails. The rank is estimated here (`rank_of`) and
  given to MNE's decomposition, which then works in that subspace (as its `rank="info"` does).
  MNE's own estimate (machine precision times the samples) can miss a lost dimension that
  rounding or float32 storage lifted to 1e-15 of the largest eigenvalue.
- **Memory.** MNE stacks all trials into one array to estimate the rank, copies each class's
  trials and their concatenation to estimate its covariance, and the filtered trials to get
  their power: about twice the training trials at its peak. Here each class's covariance is
  summed over batches of trials (MNE's estimate: the uncentred concatenated-samples covariance,
  denominator n - 1, reduced to the top `rank` eigenvalues when rank-deficient) and the
  features are computed per batch of trials, so the peak is a batch's filtered signals.

The decomposition itself (generalised eigenproblem or joint diagonalisation, restriction to
the rank, component order) is MNE's own code, fed these covariances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

BATCH = 64  # trials per batch of a feature computation


def rank_of(X: np.ndarray) -> int:
    """Numerical rank of the trials' pooled covariance: channels scaled to unit variance (a flat
    one drops out), eigenvalues above 1e-10 of the largest (singular values above 1e-5). A
    removed ICA component or an average reference leaves an eigenvalue near 1e-16 of the
    largest, rounding or float32 storage one near 1e-15; real channels stay far above 1e-10."""
    total = X.shape[0] * X.shape[2]
    sums = np.zeros(X.shape[1])
    cov = np.zeros((X.shape[1], X.shape[1]))
    for trial in X:  # one trial at a time: no copy of the trials
        trial = np.asarray(trial, dtype=float)
        sums += trial.sum(axis=1)
        cov += trial @ trial.T
    mean = sums / total
    cov = cov / total - np.outer(mean, mean)
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    live = sd > 0
    corr = cov[np.ix_(live, live)] / np.outer(sd[live], sd[live])
    eig = np.linalg.eigvalsh(corr)
    return int(np.sum(eig > 1e-10 * eig.max())) if len(eig) else 0


def class_covariance(X: np.ndarray, index: np.ndarray, rank: int) -> np.ndarray:
    """MNE's concatenated-samples covariance of the trials X[index] (uncentred, denominator
    n - 1), summed trial by trial; kept to its top `rank` eigenvalues when below full rank."""
    n_channels, n_times = X.shape[1], X.shape[2]
    cov = np.zeros((n_channels, n_channels))
    for i in index:  # one trial at a time: no copy of the trials
        cov += X[i] @ X[i].T
    cov /= len(index) * n_times - 1
    if rank < n_channels:
        values, vectors = np.linalg.eigh(cov)
        top = vectors[:, -rank:]
        cov = (top * values[-rank:]) @ top.T
    return cov


def log_power(filters: np.ndarray, X: np.ndarray) -> np.ndarray:
    """log of each trial's mean power through each filter (MNE's CSP features, log=True)."""
    out = np.empty((len(X), len(filters)))
    for start in range(0, len(X), BATCH):
        part = filters @ X[start : start + BATCH]
        out[start : start + len(part)] = (part**2).mean(axis=2)
    return np.log(out)


class CSPFeatures(TransformerMixin, BaseEstimator):
    """Rank-aware, batch-wise CSP log-variance features (see the module's docstring).
    `component_order` is MNE's: "mutual_info" (its default) or "alternate" (two classes: the
    largest and smallest eigenvalue first, in pairs)."""

    def __init__(self, n_components: int = 4, component_order: str = "mutual_info") -> None:
        self.n_components = n_components
        self.component_order = component_order

    def fit(self, X: np.ndarray, y: np.ndarray) -> CSPFeatures:
        from functools import partial

        import mne
        from mne.decoding import CSP
        from mne.decoding.base import _GEDTransformer

        self.rank_ = rank_of(X)
        self.classes_ = np.unique(y)
        n = min(self.n_components, self.rank_)
        csp = CSP(n_components=n, log=True, component_order=self.component_order)
        csp.cov_callable = partial(_estimate, rank=self.rank_)
        with mne.utils.use_log_level("error"):
            csp._validate_params(y=y)
            _GEDTransformer.fit(csp, X, y)  # MNE's decomposition of these covariances
        self.filters_ = csp.filters_[:n]
        self.patterns_ = csp.patterns_
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return log_power(self.filters_, X)


def _estimate(X: np.ndarray, y: np.ndarray, rank: int) -> tuple[Any, ...]:
    """What MNE's CSP covariance step returns (covariances, their mean, info, rank, weights),
    from class_covariance."""
    from mne import create_info

    n_channels = X.shape[1]
    classes = np.unique(y)
    covs = np.stack([class_covariance(X, np.flatnonzero(y == c), rank) for c in classes])
    info = create_info(n_channels, 1000.0, "mag")  # as MNE does without an info
    weights = np.full(len(classes), n_channels)  # concat: each class weighs its channel count
    return covs, covs.mean(0), info, {"mag": rank}, {"sample_weights": weights}
