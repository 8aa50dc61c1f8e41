"""Cross-validation results as BIDS derivative files, planned as text before anything is
written (derivatives.py writes them with the epochs).

    sub-01/[ses-1/]eeg/sub-01[_ses-1][_task-T]_desc-crossval_scores.tsv   every fold of the subject
    sub-01/.../..._desc-crossval_scores.json                             columns, protocols, stats
    desc-crossval_stats.tsv + .json                                      group level, at the top

A subject's file is in its session's folder when all its epochs come from one named session;
otherwise it lies under the subject, with a `session` column saying which session each fold
tested. A value that could not be computed is `n/a`, as BIDS writes a missing value. The study
keeps each protocol's latest result (eeg/protocols/result_json.py's plain form), so this module
reads dicts and imports nothing from the layers above.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainchat.eeg.io.bids.entities import parse_name

if TYPE_CHECKING:
    from brainchat.eeg.core.state import StudyState

DESC = "desc-crossval"
SCORES = f"{DESC}_scores"
STATS = f"{DESC}_stats"
SCORE_COLUMNS = {
    "protocol": "within_session (stratified k-fold inside each session), cross_session (leave "
    "one session out) or cross_subject (leave one subject out)",
    "pipeline": "csp_lda, ts_lr (tangent space + logistic regression), mdm, fbcsp (filter-bank "
    "CSP), eegnet, shallowconvnet or sccnet; every step fitted on the training fold only",
    "session": "the session whose trials were scored (cross_subject scores each session of the "
    "held-out subject on its own, as MOABB's CrossSubjectEvaluation)",
    "fold": "the fold's number within its session or protocol (0-based)",
    "score": "the test fold's score (see scoring)",
    "scoring": "roc_auc for two classes, else accuracy (as MOABB scores)",
    "n_train": "training trials of the fold",
    "n_test": "test trials of the fold",
    "balanced_accuracy": "mean recall over classes (chance 1/k whatever the class sizes)",
    "kappa": "Cohen's kappa (chance 0)",
    "not_scored": "why the score could not be computed (n/a: it was)",
}
STATS_COLUMNS = {
    "protocol": SCORE_COLUMNS["protocol"],
    "pipeline": SCORE_COLUMNS["pipeline"],
    "mean": "mean over subjects of each subject's mean score (sessions, then folds)",
    "sd": "standard deviation over subjects (ddof 1; 0 with one subject)",
    "n_subjects": "subjects scored",
    "chance": "permutation chance level: mean score with the training labels shuffled",
    "p_value": "permutation p-value of the mean: (1 + #permuted means >= observed) / (1 + n)",
    "permutations": "label permutations per fold (0: no permutation test)",
    "scoring": SCORE_COLUMNS["scoring"],
    "balanced_accuracy": "mean over subjects of balanced accuracy (chance 1/k)",
    "kappa": "mean over subjects of Cohen's kappa (chance 0)",
    "majority_rate": "the accuracy of always guessing the majority class (the trials' share of "
    "it): accuracy's real floor when classes differ in size",
}


def _label(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", str(text)) or "unknown"


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return repr(value)  # every digit: read back, it is the study's number
    return str(value).replace("\t", " ").replace("\n", " ")


def _tsv(columns: list[str], rows: list[list[Any]]) -> str:
    lines = ["\t".join(columns), *("\t".join(_cell(v) for v in row) for row in rows)]
    return "\n".join(lines) + "\n"


def _json(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"


def _config(cv: dict[str, Any]) -> dict[str, Any]:
    return {
        "Protocol": cv["protocol"],
        "Pipelines": list(cv["pipelines"]),
        "Folds": cv["folds"] if cv["protocol"] == "within_session" else "leave-one-out",
        "Seed": cv["seed"],
        "Permutations": cv["permutations"],
        "Scoring": cv["scoring"],
        "NetworkEpochs": cv["epochs"],
        "Classes": list(cv["classes"]),
    }


def _majority(cv: dict[str, Any]) -> float | None:
    """The share of the largest class among the epochs (None: a result kept before it was)."""
    counts = cv.get("class_counts") or []
    return max(counts) / sum(counts) if sum(counts) else None


def _stem(state: StudyState, subject: str) -> list[str]:
    """The entities of a subject's scores file: sub, ses (one named session), task (one)."""
    recs = [r for r in state.recordings if r.subject == subject]
    names = [parse_name(r.path.name) for r in recs]
    sessions = {n.session for n in names if n is not None and n.session}
    tasks = {n.task for n in names if n is not None and n.task}
    parts = [f"sub-{_label(subject)}"]
    if len(sessions) == 1 and all(names):
        parts.append(f"ses-{_label(sessions.pop())}")
    return parts + ([f"task-{_label(tasks.pop())}"] if len(tasks) == 1 else [])


def crossval_files(state: StudyState, folder: Path) -> dict[Path, str]:
    """Every cross-validation file of the study (path -> text); none without a cross_validate."""
    results = list(state.crossval.values())
    if not results:
        return {}
    out: dict[Path, str] = {}
    subjects = sorted({r["subject"] for cv in results for r in cv["records"]})
    for subject in subjects:
        parts = _stem(state, subject)
        folders = [p for p in parts if not p.startswith("task-")]
        path = folder.joinpath(*folders, "eeg", "_".join([*parts, SCORES]) + ".tsv")
        rows = [
            [cv["protocol"], r["pipeline"], r["session"], r["fold"], r["score"], cv["scoring"],
             r["n_train"], r["n_test"], r.get("balanced_accuracy"), r.get("kappa"),
             r.get("not_scored")]
            for cv in results for r in cv["records"] if r["subject"] == subject
        ]  # fmt: skip
        out[path] = _tsv(list(SCORE_COLUMNS), rows)
        out[path.with_suffix(".json")] = _json(_subject_sidecar(results, subject))
    stats = [
        [cv["protocol"], s["pipeline"], s["mean"], s["sd"], len(s["per_subject"]), s["chance"],
         s["p_value"], s["permutations"], cv["scoring"], (s.get("balanced_accuracy") or [None])[0],
         (s.get("kappa") or [None])[0], _majority(cv)]
        for cv in results for s in cv["summaries"]
    ]  # fmt: skip
    out[folder / f"{STATS}.tsv"] = _tsv(list(STATS_COLUMNS), stats)
    out[folder / f"{STATS}.json"] = _json(_group_sidecar(results))
    return out


def _subject_sidecar(results: list[dict[str, Any]], subject: str) -> dict[str, Any]:
    return {
        "Description": "Cross-validation scores of this subject's folds, computed by brainchat's "
        "cross_validate (MOABB's protocols); the group statistics are in desc-crossval_stats.tsv",
        **{k: {"Description": v} for k, v in SCORE_COLUMNS.items()},
        "CrossValidations": [
            {
                **_config(cv),
                "SubjectScore": {
                    s["pipeline"]: s["per_subject"].get(subject) for s in cv["summaries"]
                },
                "ChanceLevel": {s["pipeline"]: s["chance"] for s in cv["summaries"]},
                "PValue": {s["pipeline"]: s["p_value"] for s in cv["summaries"]},
                "SubjectPValue": {
                    s["pipeline"]: s.get("per_subject_p", {}).get(subject) for s in cv["summaries"]
                },
            }
            for cv in results
        ],
    }


def _group_sidecar(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "Description": "Group-level cross-validation statistics per protocol and pipeline, "
        "and paired Wilcoxon signed-rank tests between pipelines across subjects",
        **{k: {"Description": v} for k, v in STATS_COLUMNS.items()},
        "CrossValidations": [
            {
                **_config(cv),
                "Subjects": list(cv["subjects"]),
                "WilcoxonSignedRank": [
                    {
                        "A": t["a"],
                        "B": t["b"],
                        "Subjects": t["n"],
                        "W": t["statistic"],
                        "PValue": t["p_value"],
                        "Note": t["note"],
                    }
                    for t in cv["tests"]
                ],  # fmt: skip
                "Notes": list(cv["notes"]),
            }
            for cv in results
        ],
    }


def is_crossval_file(name: str) -> bool:
    """Whether a file name is one of the files this module writes."""
    return name.endswith((f"{SCORES}.tsv", f"{SCORES}.json")) or name in (
        f"{STATS}.tsv",
        f"{STATS}.json",
    )
