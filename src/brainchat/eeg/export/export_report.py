"""The study as one self-contained HTML report: recordings, steps, figures, metrics, settings.

Figures are drawn again from the study (the same plot functions the tools use) and embedded as
base64 PNG, so the file opens anywhere, offline, on its own. Every value is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import json
import math
import platform
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from brainchat.eeg.core.leakage import leakage_notes
from brainchat.eeg.core.state import StudyState
from brainchat.eeg.export.export_script import step_label
from brainchat.eeg.io.loading import class_counts
from brainchat.eeg.study.replay import Entry

PACKAGES = {"brainchat": "brainchat", "mne": "mne", "torch": "torch", "numpy": "numpy",
            "sklearn": "scikit-learn", "matplotlib": "matplotlib"}  # fmt: skip
STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;
padding:.3em .6em;text-align:left;font-size:.92em}th{background:#f3f3f3}figure{display:inline-block;
margin:.5em 1em .5em 0;vertical-align:top}figure img{max-width:100%}figcaption{font-size:.9em;
color:#555}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.85em}code{font-size:.92em}"""


@dataclass(frozen=True)
class Figure:
    title: str
    png: bytes


def versions() -> dict[str, str]:
    """Python and the versions of the libraries the analysis ran on (none imported for this)."""
    out = {"python": platform.python_version()}
    for name, dist in PACKAGES.items():
        try:
            out[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def figures(state: StudyState, metrics: dict[str, dict[str, Any]]) -> list[Figure]:
    """The study's plots, drawn again: spectrum, class averages, and per model its confusion
    matrix and training curves."""
    import numpy as np

    from brainchat.eeg.preprocessing import plots

    out: list[Figure] = []
    if state.raws:
        fmax = min(45.0, state.raws[0].info["sfreq"] / 2 - 1)
        title = f"PSD per channel group (1-{fmax:g} Hz)"
        out.append(Figure(title, plots.psd_by_group(list(state.raws), 1.0, fmax)))
    if state.epochs is not None:
        e = state.epochs
        names = list(e.info.ch_names)
        chosen = [c for c in ("C3", "Cz", "C4") if c in names] or names[:3]
        times = e.tmin + np.arange(e.X.shape[2]) / e.info["sfreq"]
        png = plots.epochs_average(e.X, e.y, e.classes, times, names, chosen)
        out.append(Figure(f"epochs average per class ({', '.join(chosen)})", png))
    if state.crossval:
        from brainchat.eeg.protocols.report import subject_plot
        from brainchat.eeg.protocols.result_json import from_json

        for protocol, cv in state.crossval.items():
            out.append(Figure(f"{protocol}: score per subject", subject_plot(from_json(cv))))
    for name, res in metrics.items():
        title = f"{name} confusion matrix"
        out.append(Figure(title, plots.confusion(res["confusion"], state.eps.classes, title)))
        history = state.models[name].history
        if len(history.get("acc", [])) > 1:
            title = f"{name} training curves"
            out.append(Figure(title, plots.training_curves(history, title)))
    return out


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return _e(value)


def _table(head: list[str], rows: list[list[Any]], cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    top = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_num(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table{attr}><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>"


def _recordings(state: StudyState) -> str:
    rows = []
    for rec, raw in zip(state.recordings, state.raws, strict=True):
        events = ", ".join(f"{k} {v}" for k, v in class_counts(raw).items()) or "none"
        sfreq = raw.info["sfreq"]
        rows.append([rec.name, rec.subject, rec.session, rec.fmt.upper(), len(raw.ch_names),
                     f"{sfreq:g} Hz", f"{raw.n_times / sfreq:.1f} s", events, rec.damage or ""])  # fmt: skip
    head = ["file", "subject", "session", "format", "channels", "rate", "duration", "events",
            "damage"]  # fmt: skip
    note = "<p>Channels, rate and duration are after the preprocessing below.</p>"
    return "<h2>Recordings</h2>" + note + _table(head, rows, "recordings")


def _steps(log: list[Entry]) -> str:
    rows = []
    for i, entry in enumerate(log, 1):
        params = {k: v for k, v in entry.items() if k not in ("op", "file", "name")}
        if entry["op"] == "step":
            params = dict(entry["step"]["params"])
        elif entry["op"] in ("train", "crossval"):
            params = dict(entry["config"])
        rows.append([i, step_label(entry), entry["op"], json.dumps(params)])
    return "<h2>Steps</h2>" + _table(["#", "step", "operation", "parameters"], rows, "steps")


def _epochs(state: StudyState) -> str:
    if state.epochs is None:
        return ""
    e = state.epochs
    counts = ", ".join(f"{k} {v}" for k, v in e.counts().items())
    text = (
        f"<p>{len(e.y)} epochs ({_e(counts)}), {e.X.shape[1]} channels × {e.X.shape[2]} samples "
        f"at {e.info['sfreq']:g} Hz; {e.dropped} rejected.</p>"
    )
    if state.split is not None:
        s = state.split
        text += (
            f"<p>Split by {_e(s.by)} (seed {s.seed}): train {len(s.train)}, validation "
            f"{len(s.val)}, test {len(s.test)}.</p>"
        )
    return "<h2>Epochs and split</h2>" + text + _trials(state)


TRIALS_SHOWN = 5000  # rows of the every-trial table (the BIDS derivatives list them all)


def _trials(state: StudyState) -> str:
    """Where each epoch came from (recording, onset, events.tsv row) and each rejected trial
    with why, folded: a scored epoch is traced back to the event it was cut around."""
    t = getattr(state.eps, "trials", None)
    if t is None:
        return ""
    names = [r.path.name for r in state.recordings]
    rows = [
        [names[t.recording[i]], f"{t.onset[i]:.3f}", int(t.sample[i]),
         int(t.row[i]) or "n/a", state.eps.classes[t.label[i]],
         int(t.epoch[i]) if t.epoch[i] >= 0 else "rejected", t.reason(i)]
        for i in range(min(len(t.epoch), TRIALS_SHOWN))
    ]  # fmt: skip
    rejected = [r for r in rows if r[5] == "rejected"]
    head = ["recording", "onset (s)", "sample", "events.tsv row", "class", "epoch", "why rejected"]
    more = f" (first {TRIALS_SHOWN} of {len(t.epoch)})" if len(t.epoch) > TRIALS_SHOWN else ""
    text = f"<details><summary>every trial, kept or rejected{more}</summary>"
    text += _table(head, rows, "trials") + "</details>"
    if rejected:
        text = (
            f"<details><summary>{len(rejected)} rejected trial(s) and why</summary>"
            + _table(head, rejected, "rejected")
            + "</details>"
            + text
        )
    return text


def _metrics(state: StudyState, metrics: dict[str, dict[str, Any]]) -> str:
    if not metrics:
        return "<h2>Metrics</h2><p>No model was trained.</p>"
    rows, per_class, confusions = [], [], []
    classes = state.eps.classes
    for name, res in metrics.items():
        model = state.models[name]
        cfg = {k: v for k, v in model.config.items() if k != "model"}
        rows.append([name, model.kind, res["n_test"], res["accuracy"], res["balanced_accuracy"],
                     res["kappa"], res["roc_auc"], model.device, f"{model.seconds:.1f} s",
                     json.dumps(cfg)])  # fmt: skip
        for c, m in res["per_class"].items():
            per_class.append([name, c, m["precision"], m["recall"], m["f1"], m["support"]])
        head = ["true \\ predicted", *classes]
        cm = [[c, *row] for c, row in zip(classes, res["confusion"], strict=True)]
        confusions.append(f"<h3>{_e(name)}</h3>" + _table(head, cm, "confusion"))
    head = ["model", "kind", "test epochs", "accuracy", "balanced accuracy", "kappa", "ROC AUC",
            "device", "training time", "hyper-parameters"]  # fmt: skip
    notes = "".join(f"<p>Note: {_e(n)}</p>" for n in leakage_notes(state.history, "test"))
    return (
        "<h2>Metrics (test set)</h2>"
        + _table(head, rows, "metrics")
        + notes
        + _table(["model", "class", "precision", "recall", "F1", "support"], per_class)
        + "<h2>Confusion matrices</h2><p>Rows: true class; columns: predicted class.</p>"
        + "".join(confusions)
    )


def _cv(value: Any) -> str:
    """A cross-validation figure (None: not computed) as the tables show it."""
    return "n/a" if value is None else _num(value)


def _scores(per_subject: dict[str, float | None]) -> str:
    return ", ".join(f"{k} {_cv(v)}" for k, v in per_subject.items())


def crossval_section(results: dict[str, dict[str, Any]]) -> str:
    """Each cross-validation: per pipeline mean ± sd over subjects, permutation chance level
    and p-value, balanced accuracy and kappa where accuracy's chance is not 1/k, per-subject
    scores and p-values; the paired tests; the scores of every fold; the notes."""
    if not results:
        return ""
    return "<h2>Cross-validation</h2>" + "".join(
        _one_crossval(protocol, cv) for protocol, cv in results.items()
    )


def _one_crossval(protocol: str, cv: dict[str, Any]) -> str:
    from brainchat.eeg.protocols.report import chance_text, shows_balanced
    from brainchat.eeg.protocols.result_json import from_json

    res = from_json(cv)
    folds = f"{cv['folds']} folds per session" if protocol == "within_session" else "leave-one-out"
    parts = [
        f"<h3>{_e(protocol)}</h3><p>{_e(folds)}, seed {_e(cv['seed'])}, score "
        f"{_e(cv['scoring'])} ({_e(chance_text(res))}), {_e(cv['n_epochs'])} epochs of "
        f"{len(cv['subjects'])} subject(s), {_e(cv['permutations'])} label permutation(s) per "
        "fold.</p>"
    ]
    balanced = shows_balanced(res)
    rows = [
        [s["pipeline"], f"{_cv(s['mean'])} ± {_cv(s['sd'])}", _cv(s["chance"]),
         _cv(s["p_value"]), s["permutations"],
         *([_pair(s.get("balanced_accuracy")), _pair(s.get("kappa"))] if balanced else []),
         _scores(s["per_subject"]), _scores(s.get("per_subject_p") or {})]
        for s in cv["summaries"]
    ]  # fmt: skip
    head = ["pipeline", "mean ± sd over subjects", "permutation chance", "p", "permutations",
            *(["balanced accuracy (chance 1/k)", "Cohen's kappa (chance 0)"] if balanced else []),
            "per subject", "per-subject permutation p"]  # fmt: skip
    parts.append(_table(head, rows, "crossval"))
    tests = [[f"{t['a']} vs {t['b']}", t["n"], _cv(t["statistic"]), _cv(t["p_value"]),
              t["note"]] for t in cv["tests"]]  # fmt: skip
    if tests:
        head = ["Wilcoxon signed-rank", "subjects", "W", "p", "note"]
        parts.append(_table(head, tests, "paired"))
    folds_rows = [[r["pipeline"], r["subject"], r["session"], r["fold"], _cv(r["score"]),
                   _cv(r.get("balanced_accuracy")), _cv(r.get("kappa")), r["n_train"],
                   r["n_test"]] for r in cv["records"]]  # fmt: skip
    head = ["pipeline", "subject", "session", "fold", "score", "balanced accuracy", "kappa",
            "train", "test"]  # fmt: skip
    parts.append(
        "<details><summary>scores per fold</summary>"
        + _table(head, folds_rows, "folds")
        + "</details>"
    )
    parts += [f"<p>Note: {_e(n)}</p>" for n in cv["notes"]]
    return "".join(parts)


def _pair(values: list[float | None] | None) -> str:
    """A (mean, sd) pair as "mean ± sd" (n/a for a result kept before it was)."""
    mean, sd = values or (None, None)
    return f"{_cv(mean)} ± {_cv(sd)}"


def _figures(figs: list[Figure]) -> str:
    if not figs:
        return ""
    items = "".join(
        f'<figure><img alt="{_e(f.title)}" src="data:image/png;base64,'
        f'{base64.b64encode(f.png).decode("ascii")}"><figcaption>{_e(f.title)}</figcaption></figure>'
        for f in figs
    )
    return "<h2>Figures</h2>" + items


def _settings(settings: dict[str, Any]) -> str:
    if not settings:
        return "<h2>Model and agent settings</h2><p>Not recorded (exported outside a chat).</p>"
    models = settings.get("models") or {}
    rows = [[role, m.get("model"), m.get("provider"), m.get("server") or "provider default",
             m.get("temperature"), m.get("max_tokens")] for role, m in models.items()]  # fmt: skip
    text = "<h2>Model and agent settings</h2>"
    text += f"<p>Mode: {_e(settings.get('mode', 'unknown'))}. API keys are never written here.</p>"
    text += _table(["role", "model", "provider", "server", "temperature", "max tokens"], rows)
    limits = settings.get("limits") or {}
    return text + _table(["agent setting", "value"], [[k, v] for k, v in limits.items()])


def build_report(
    state: StudyState,
    log: list[Entry],
    metrics: dict[str, dict[str, Any]],
    figs: list[Figure],
    settings: dict[str, Any],
    *,
    when: str,
    script_name: str,
    script: str,
) -> str:
    """The whole report as one HTML document."""
    from brainchat.eeg.export.report_analyses import analyses_section

    soft = versions()
    parts = [
        f"<h1>brainchat analysis</h1><p>Exported {_e(when)} by brainchat {_e(soft['brainchat'])}."
        f" The script <code>{_e(script_name)}</code> redoes these steps without brainchat.</p>",
        _recordings(state) if state.raws else "",
        _steps(log),
        _epochs(state),
        _metrics(state, metrics),
        crossval_section(state.crossval),
        analyses_section(log, state),
        _figures(figs),
        _settings(settings),
        "<h2>Software</h2>" + _table(["package", "version"], [[k, v] for k, v in soft.items()]),
        f"<h2>Script</h2><details><summary>{_e(script_name)}</summary><pre>{_e(script)}</pre>"
        "</details>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>brainchat analysis {_e(when)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(p for p in parts if p)
        + "</body></html>\n"
    )
