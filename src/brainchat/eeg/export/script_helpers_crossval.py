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
from types import SimpleNamespace
from typing import Any

import mne
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from brainchat.eeg.export.script_helpers import RESULTS, log
from brainchat.eeg.export.script_helpers_torch import train_network
from brainchat.eeg.protocols.crossval import scored_parts, unscored_notes
from brainchat.eeg.protocols.folds import part_score, score, scorer_name
from brainchat.eeg.protocols.pipelines import build
from brainchat.eeg.protocols.report import chance_text, shows_balanced
from brainchat.eeg.protocols.splits import make_folds
from brainchat.eeg.protocols.stats import FoldRecord, paired_tests, summarise

# isort: split
# === section: crossval


def run_fold(name, X, y, train, parts, sfreq, seed, fold_id, permutations, params):
    """One pipeline on one fold: the observed scores of each test part (session), then one
    score per part and permutation of the training labels
    (brainchat.eeg.protocols.folds.run_fold: the same seeds)."""
    n_classes = len(np.unique(y))
    Xtr, ytr = X[train], y[train]

    def fit(labels):
        est = build(name, X.shape[1], sfreq, seed, **params)
        with mne.utils.use_log_level("error"):
            return est.fit(Xtr, labels)

    start = time.perf_counter()
    est = fit(ytr)
    observed = [part_score(est, X[t], y[t], n_classes) for t in parts]
    seconds = time.perf_counter() - start
    null: list[list[float]] = [[] for _ in parts]
    for k in range(permutations):
        rng = np.random.default_rng([seed, fold_id, k])
        est = fit(rng.permutation(ytr))
        for i, t in enumerate(parts):
            null[i].append(score(est, X[t], y[t], n_classes))
    return observed, [tuple(n) for n in null], seconds


def cross_validate(epochs, protocol, pipelines, folds, permutations, seed, net_epochs):
    """Every pipeline through every fold of the protocol, then the statistics
    (brainchat.eeg.protocols.crossval.cross_validate_arrays)."""
    X, y, sfreq = epochs["X"], np.asarray(epochs["y"]), float(epochs["sfreq"])
    sessions = np.asarray(epochs["sessions"]).astype(str)
    cut, notes = make_folds(protocol, y, epochs["subjects"], sessions, folds, seed)
    records = []
    for name in pipelines:
        params = {"epochs": net_epochs} if name in ("eegnet", "shallowconvnet", "sccnet") else {}
        for fold_id, f in enumerate(cut):
            parts = scored_parts(f, sessions)
            observed, null, secs = run_fold(
                name, X, y, f.train, [t for _, t in parts], sfreq, seed, fold_id, permutations,
                params,
            )  # fmt: skip
            for (session, test), part, part_null in zip(parts, observed, null, strict=True):
                records.append(
                    FoldRecord(name, f.subject, session, f.index, part.score, part_null,
                               len(f.train), len(test), secs, part.balanced, part.kappa, part.why)
                )  # fmt: skip
                log(f"{protocol} {name} subject {f.subject} session {session} fold {f.index}: "
                    f"{part.score:.3f}")  # fmt: skip
    summaries = [summarise(records, name) for name in pipelines]
    counts = [int(c) for c in np.bincount(y)]
    result = crossval_json(
        protocol, scorer_name(len(counts)), records, summaries, paired_tests(summaries),
        [*notes, *unscored_notes(records)], counts,
    )  # fmt: skip
    RESULTS.setdefault("crossval", {})[protocol] = result
    print_crossval(result)


def _plain(value):
    return None if value is None or not math.isfinite(value) else float(value)


def crossval_json(protocol, scoring, records, summaries, tests, notes, counts):
    """The result as brainchat keeps it (brainchat.eeg.protocols.result_json.to_json)."""
    return {
        "protocol": protocol,
        "scoring": scoring,
        "class_counts": counts,
        "records": [
            {
                "pipeline": r.pipeline,
                "subject": r.subject,
                "session": r.session,
                "fold": r.fold,
                "score": _plain(r.score),
                "n_train": r.n_train,
                "n_test": r.n_test,
                "balanced_accuracy": _plain(r.balanced),
                "kappa": _plain(r.kappa),
                **({"not_scored": r.why} if r.why else {}),
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
                "per_subject_p": dict(s.per_subject_p),
                "balanced_accuracy": [_plain(v) for v in s.balanced],
                "kappa": [_plain(v) for v in s.kappa],
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
    """The scores per fold and the statistics, as lines on stdout; the chance level as
    brainchat states it (report.chance_text), balanced accuracy and kappa where it shows them."""
    counts = result["class_counts"]
    shape: Any = SimpleNamespace(
        scoring=result["scoring"], n_classes=len(counts), class_counts=counts
    )
    print(f"cross-validation {result['protocol']} (score: {result['scoring']}; "
          f"{chance_text(shape)})")  # fmt: skip
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
        balanced = (
            f"; balanced accuracy {_f(s['balanced_accuracy'][0])} ± "
            f"{_f(s['balanced_accuracy'][1])}, kappa {_f(s['kappa'][0])} ± {_f(s['kappa'][1])}"
            if shows_balanced(shape)
            else ""
        )
        print(f"  {s['pipeline']}: {_f(s['mean'])} ± {_f(s['sd'])} over subjects; {chance}"
              f"{balanced}; per subject: {subjects}")  # fmt: skip
        if s["per_subject_p"]:
            ps = ", ".join(f"{k} p={_f(v)}" for k, v in s["per_subject_p"].items())
            print(f"  {s['pipeline']} per-subject permutation test: {ps}")
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
