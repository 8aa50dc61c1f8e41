"""The folds work on views of the epochs, not copies (#38: memory that scales by subject): a
group of trials that lie side by side (a session's, a subject's, all of them) is handed to its
tasks as a read-only view of the study's array, so cross-validating never holds the epochs twice.
bench/crossval_memory.py measures the peaks this keeps down."""

from __future__ import annotations

import numpy as np
import pytest

from brainchat.eeg.protocols.crossval import CVConfig, fold_tasks
from brainchat.eeg.protocols.folds import trials
from brainchat.eeg.protocols.splits import make_folds


def epochs(subjects: int = 3, sessions: int = 2, per: int = 20):
    rng = np.random.default_rng(0)
    n = subjects * sessions * per
    X = rng.standard_normal((n, 4, 32))
    y = np.tile(np.repeat([0, 1], per // 2), subjects * sessions)
    subj = np.repeat([f"{s:02d}" for s in range(1, subjects + 1)], sessions * per)
    sess = np.tile(np.repeat([f"{k:02d}" for k in range(1, sessions + 1)], per), subjects)
    return X, y, subj, sess


@pytest.mark.parametrize("protocol", ["within_session", "cross_session", "cross_subject"])
def test_each_task_holds_a_read_only_view_of_the_epochs(protocol: str) -> None:
    X, y, subj, sess = epochs()
    folds, _ = make_folds(protocol, y, subj, sess, 5, 0)
    tasks = fold_tasks(CVConfig(protocol, ("csp_lda",)), X, y, folds, 64.0, None, sess)
    assert tasks and all(np.shares_memory(t.X, X) for t in tasks)
    assert not any(t.X.flags.writeable for t in tasks)  # a step writing into it would raise
    for t in tasks:  # the view holds the very trials its indices name
        f = folds[t.fold_id]
        assert np.array_equal(t.X[t.train], X[f.train]) and np.array_equal(t.X[t.test], X[f.test])


def test_scattered_trials_are_copied_once_and_consecutive_ones_are_viewed() -> None:
    X = np.arange(40.0).reshape(10, 2, 2)
    assert np.shares_memory(trials(X, np.arange(3, 8)), X)
    scattered = trials(X, np.array([1, 4, 5]))
    assert not np.shares_memory(scattered, X) and np.array_equal(scattered, X[[1, 4, 5]])
    assert X.flags.writeable  # the study's own array stays as it was


def test_csp_features_equal_mnes_and_hold_no_copy_of_the_trials() -> None:
    """decoding/csp.py's CSP gives MNE's CSP features (as MOABB's CSP+LDA uses them) while its
    peak allocation stays a batch of trials, not MNE's twice the training trials."""
    import tracemalloc

    import mne
    from mne.decoding import CSP

    from brainchat.eeg.decoding.csp import CSPFeatures

    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 16, 250)) * np.linspace(1, 3, 16)[None, :, None]
    y = np.arange(400) % 2
    X[y == 1, 3] *= 1.5  # a class difference in one channel's power
    with mne.utils.use_log_level("error"):
        theirs = CSP(n_components=8, log=True).fit(X, y).transform(X)
    CSPFeatures(8).fit(X[:40], y[:40])  # first-use allocations (imports) out of the count
    tracemalloc.start()
    try:
        mine = CSPFeatures(8).fit(X, y).transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.abs(mine - theirs).max() <= 1e-9 * np.abs(theirs).max()
    assert peak < 0.2 * X.nbytes, (peak, X.nbytes)


@pytest.mark.parametrize("protocol", ["within_session", "cross_subject"])
def test_csp_lda_folds_read_the_epochs_in_place(protocol: str) -> None:
    """A csp_lda fold reads its training and test trials from the epochs (folds.TrialSubset):
    what the whole cross-validation allocates stays a fraction of a subject's share of the
    epochs, not a copy of the training trials."""
    import tracemalloc

    from brainchat.eeg.protocols.crossval import cross_validate_arrays

    _, y, subj, sess = epochs(subjects=4, sessions=1, per=200)
    X = np.random.default_rng(2).standard_normal((len(y), 16, 256))  # 800 trials, 6.5 MB
    cfg = CVConfig(protocol, ("csp_lda",), 5)
    few = np.arange(0, len(X), 5)  # every subject, every class: imports and first uses first
    cross_validate_arrays(cfg, X[few], y[few], subj[few], sess[few], 64.0)
    tracemalloc.start()
    try:
        res = cross_validate_arrays(cfg, X, y, subj, sess, 64.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(res.records) > 3
    # a copy of the training trials: cross_subject 3/4 of the epochs, within_session 4/5 of one
    # subject's quarter; a batch of 64 trials and its filtered signals: about 1/10
    assert peak < {"cross_subject": 0.3, "within_session": 0.22}[protocol] * X.nbytes, (
        peak / X.nbytes
    )
