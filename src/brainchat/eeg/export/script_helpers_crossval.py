"""The cross-validation section of an exported analysis script's helpers (see script_helpers.py).
NOT imported by brainchat.

A script that reruns a cross_validate step gets, in this order: brainchat's own folds, pipelines,
scorer and statistics copied from eeg/protocols/ (splits.py, pipelines.py, folds.py, stats.py; see
script_crossval.py: one implementation, no drift), then the text of the "crossval" section below,
which runs them over the folds as eeg/protocols/crossval.py and folds.py do (same fold numbers,
same permutation seeds), prints the table and keeps the result in RESULTS. The "crossval_torch"
section (after script_helpers_torch.py's) is brainchat's NetworkClassifier on the script's
train_network. What those sections use is imported above the markers, for linters and tests only.
"""
# ruff: noqa: E402

from __future__ import annotations

import math
import time

import mne
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from brainchat.eeg.export.script_helpers import RESULTS, log
from brainchat.eeg.export.script_helpers_torch import train_network
from brainchat.eeg.protocols.folds import score, scorer_name
from brainchat.eeg.protocols.pipelines import build
from brainchat.eeg.protocols.splits import make_folds
from brainchat.eeg.protocols.stats import FoldRecord, paired_tests, summarise

# isort: split
# === section: crossval


def run_fold(name, X, y, train, test, sfreq, seed, fold_id, permutations, params):
    """One pipeline on one fold: the observed score, then one score per permutation of the
    training labels (brainchat.eeg.protocols.folds.run_fold: the same seeds)."""
    n_classes = len(np.unique(y))
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]

    def fit_score(labels):
        est = build(name, X.shape[1], sfreq, seed, **params)
        with mne.utils.use_log_level("error"):
            est.fit(Xtr, labels)
        return score(est, Xte, yte, n_classes)

    start = time.perf_counter()
    observed = fit_score(ytr)
    seconds = time.perf_counter() - start
    null = []
    for k in range(permutations):
        rng = np.random.default_rng([seed, fold_id, k])
        null.append(fit_score(rng.permutation(ytr)))
    return observed, tuple(null), seconds


def cross_validate(epochs, protocol, pipelines, folds, permutations, seed, net_epochs):
    """Every pipeline through every fold of the protocol, then the statistics
    (brainchat.eeg.protocols.crossval.cross_validate_arrays)."""
    X, y, sfreq = epochs["X"], np.asarray(epochs["y"]), float(epochs["sfreq"])
    cut, notes = make_folds(protocol, y, epochs["subjects"], epochs["sessions"], folds, seed)
    records = []
    for name in pipelines:
        params = {"epochs": net_epochs} if name in ("eegnet", "shallowconvnet", "sccnet") else {}
        for fold_id, f in enumerate(cut):
            s, null, secs = run_fold(
                name, X, y, f.train, f.test, sfreq, seed, fold_id, permutations, params
            )
            records.append(
                FoldRecord(name, f.subject, f.session, f.index, s, null, len(f.train),
                           len(f.test), secs)
            )  # fmt: skip
            log(
                f"{protocol} {name} subject {f.subject} session {f.session} fold {f.index}: {s:.3f}"
            )
    summaries = [summarise(records, name) for name in pipelines]
    result = crossval_json(
        protocol, scorer_name(len(np.unique(y))), records, summaries, paired_tests(summaries), notes
    )
    RESULTS.setdefault("crossval", {})[protocol] = result
    print_crossval(result)


def _plain(value):
    return None if value is None or not math.isfinite(value) else float(value)


def crossval_json(protocol, scoring, records, summaries, tests, notes):
    """The result as brainchat keeps it (brainchat.eeg.protocols.result_json.to_json)."""
    return {
        "protocol": protocol,
        "scoring": scoring,
        "records": [
            {
                "pipeline": r.pipeline,
                "subject": r.subject,
                "session": r.session,
                "fold": r.fold,
                "score": _plain(r.score),
                "n_train": r.n_train,
                "n_test": r.n_test,
            }
            for r in records
        ],  # fmt: skip
        "summaries": [
            {
                "pipeline": s.pipeline,
                "mean": _plain(s.mean),
                "sd": _plain(s.sd),
                "chance": _plain(s.chance),
                "p_value": _plain(s.p_value),
                "permutations": s.permutations,
                "per_subject": {k: _plain(v) for k, v in s.per_subject.items()},
            }
            for s in summaries
        ],  # fmt: skip
        "tests": [
            {
                "a": t.a,
                "b": t.b,
                "n": t.n,
                "statistic": _plain(t.statistic),
                "p_value": _plain(t.p_value),
                "note": t.note,
            }
            for t in tests
        ],  # fmt: skip
        "notes": list(notes),
    }


def _f(value, digits=3):
    return "n/a" if value is None else f"{value:.{digits}f}"


def print_crossval(result):
    """The scores per fold and the statistics, as lines on stdout."""
    print(f"cross-validation {result['protocol']} (score: {result['scoring']})")
    for r in result["records"]:
        print(f"  {r['pipeline']} subject {r['subject']} session {r['session']} fold {r['fold']}: "
              f"{_f(r['score'])} ({r['n_train']} train, {r['n_test']} test)")  # fmt: skip
    for s in result["summaries"]:
        chance = (
            f"permutation chance {_f(s['chance'])}, p={_f(s['p_value'])} "
            f"({s['permutations']} permutations)"
            if s["permutations"]
            else "no permutations"
        )
        subjects = " ".join(f"{k} {_f(v, 2)}" for k, v in s["per_subject"].items())
        print(f"  {s['pipeline']}: {_f(s['mean'])} ± {_f(s['sd'])} over subjects; {chance}; "
              f"per subject: {subjects}")  # fmt: skip
    for t in result["tests"]:
        stat = (
            f"W={_f(t['statistic'], 1)}, p={_f(t['p_value'])}"
            if t["p_value"] is not None
            else "not run"
        )
        note = f" ({t['note']})" if t["note"] else ""
        print(f"  Wilcoxon signed-rank {t['a']} vs {t['b']} over {t['n']} subjects: {stat}{note}")
    for note in result["notes"]:
        print(f"  note: {note}")


# === end


# === section: crossval_torch


class NetworkClassifier(ClassifierMixin, BaseEstimator):
    """A network trained on the training fold only, from `seed`
    (brainchat.eeg.protocols.pipelines.NetworkClassifier: Adam, no validation set, on the CPU)."""

    def __init__(self, kind="eegnet", sfreq=250.0, seed=0, epochs=30, batch_size=32,
                 learning_rate=1e-3):  # fmt: skip
        self.kind = kind
        self.sfreq = sfreq
        self.seed = seed
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate

    def fit(self, X, y):
        self.classes_, codes = np.unique(y, return_inverse=True)
        shape = {"X": X, "classes": list(self.classes_), "sfreq": self.sfreq}
        data = {"X_train": X, "y_train": codes, "X_val": X[:0], "y_val": codes[:0]}
        cfg = {"device": "cpu", "seed": self.seed, "epochs": self.epochs, "optimizer": "adam",
               "batch_size": self.batch_size, "learning_rate": self.learning_rate}  # fmt: skip
        self.predictor_ = train_network(self.kind, shape, data, cfg)
        return self

    def predict_proba(self, X):
        return self.predictor_.predict_proba(X)

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(1)]


# === end
