"""A cross-validation's result as plain JSON-able values, and back.

The study keeps this form (its state, its log, the exported script's RESULTS and the BIDS
derivatives all read it), so nothing below `protocols` needs to import it. A score that could not
be computed (NaN) is None here: a stored conversation is strict JSON. The permutation scores of
each fold are not kept (only each pipeline's chance level, p-value and count), so a result of
1000 permutations stays small.
"""

from __future__ import annotations

import math
from typing import Any

from brainchat.eeg.protocols.crossval import CVConfig, CVResult
from brainchat.eeg.protocols.stats import FoldRecord, PairedTest, PipelineSummary

RECORD_KEYS = ("pipeline", "subject", "session", "fold", "score", "n_train", "n_test")


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _back(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def to_json(res: CVResult, classes: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The result of one cross_validate call (configuration, folds, statistics, notes)."""
    cfg = res.config
    return {
        "protocol": cfg.protocol,
        "pipelines": list(cfg.pipelines),
        "folds": cfg.folds,
        "permutations": cfg.permutations,
        "seed": cfg.seed,
        "epochs": cfg.epochs,
        "scoring": res.scoring,
        "n_epochs": res.n_epochs,
        "classes": list(classes),
        "subjects": list(res.subjects),
        "sessions": res.sessions,
        "class_counts": list(res.class_counts),
        "records": [_record(r) for r in res.records],
        "summaries": [
            {
                "pipeline": s.pipeline,
                "mean": _num(s.mean),
                "sd": _num(s.sd),
                "chance": _num(s.chance),
                "p_value": _num(s.p_value),
                "permutations": s.permutations,
                "per_subject": {k: _num(v) for k, v in s.per_subject.items()},
                "per_session": [[a, b, _num(v)] for (a, b), v in s.per_session.items()],
                "per_subject_p": dict(s.per_subject_p),
                "balanced_accuracy": [_num(v) for v in s.balanced],
                "kappa": [_num(v) for v in s.kappa],
            }
            for s in res.summaries
        ],  # fmt: skip
        "tests": [
            {
                "a": t.a,
                "b": t.b,
                "n": t.n,
                "statistic": _num(t.statistic),
                "p_value": _num(t.p_value),
                "note": t.note,
            }
            for t in res.tests
        ],  # fmt: skip
        "notes": list(res.notes),
    }


def _record(r: FoldRecord) -> dict[str, Any]:
    """One fold's scored test part."""
    return {
        "pipeline": r.pipeline,
        "subject": r.subject,
        "session": r.session,
        "fold": r.fold,
        "score": _num(r.score),
        "n_train": r.n_train,
        "n_test": r.n_test,
        "seconds": round(r.seconds, 3),
        "balanced_accuracy": _num(r.balanced),
        "kappa": _num(r.kappa),
        **({"not_scored": r.why} if r.why else {}),
    }


def from_json(data: dict[str, Any]) -> CVResult:
    """The CVResult of `to_json`'s form (for its table and plot); permutation scores are gone."""
    cfg = CVConfig(
        data["protocol"],
        tuple(data["pipelines"]),
        data["folds"],
        data["permutations"],
        data["seed"],
        data["epochs"],
    )
    records = [
        FoldRecord(r["pipeline"], r["subject"], r["session"], r["fold"], _back(r["score"]), (),
                   r["n_train"], r["n_test"], r.get("seconds", 0.0),
                   _back(r.get("balanced_accuracy")), _back(r.get("kappa")),
                   r.get("not_scored", ""))
        for r in data["records"]
    ]  # fmt: skip
    summaries = [
        PipelineSummary(
            s["pipeline"], _back(s["mean"]), _back(s["sd"]),
            {k: _back(v) for k, v in s["per_subject"].items()},
            {(a, b): _back(v) for a, b, v in s["per_session"]},
            s["chance"], s["p_value"], s["permutations"], dict(s.get("per_subject_p", {})),
            _pair(s.get("balanced_accuracy")), _pair(s.get("kappa")),
        )
        for s in data["summaries"]
    ]  # fmt: skip
    tests = [
        PairedTest(t["a"], t["b"], t["n"], t["statistic"], t["p_value"], t["note"])
        for t in data["tests"]
    ]
    return CVResult(
        cfg,
        data["scoring"],
        records,
        summaries,
        tests,
        list(data["notes"]),
        data["n_epochs"],
        tuple(data["subjects"]),
        data["sessions"],
        len(data["classes"]),
        tuple(data.get("class_counts", ())),
    )


def _pair(values: list[float | None] | None) -> tuple[float, float]:
    """A (mean, sd) pair back from JSON (a result stored before it was kept: NaN, NaN)."""
    a, b = values or (None, None)
    return _back(a), _back(b)
