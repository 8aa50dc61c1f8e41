"""A cross-validation's result as a compact table for the model, and a per-subject score plot."""

from __future__ import annotations

import numpy as np

from brainchat.eeg.core.holdout import protocol_note
from brainchat.eeg.protocols.crossval import CVResult

SCORING = {"roc_auc": "ROC AUC", "accuracy": "accuracy"}
SUBJECTS_SHOWN = 12  # per-subject columns in the text (the plot shows them all)


def _f(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.{digits}f}"


def _p(v: float | None) -> str:
    return "n/a" if v is None else (f"{v:.3f}" if v >= 0.001 else f"{v:.1e}")


def table(res: CVResult) -> str:
    """The lines the model reads: protocol, scoring, per-pipeline mean ± sd, chance and p,
    per-subject scores, paired tests, notes (left-out groups, leakage)."""
    shown = list(res.subjects[:SUBJECTS_SHOWN])
    balanced = shows_balanced(res)
    lines = [_heading(res), _columns(res, shown, balanced)]
    for s in res.summaries:
        perm = (
            # each figure carries its own label: a header naming two quantities over one
            # cell reads, once copied into an answer, as if the first figure were the p-value
            f"chance {_f(s.chance)}, p={_p(s.p_value)} ({s.permutations} perms)"
            if s.permutations
            else "not run (permutations=0)"
        )
        per = " ".join(_f(s.per_subject.get(k), 2) for k in shown)
        more_cells = (
            f" | {_f(s.balanced[0])} ± {_f(s.balanced[1])} | {_f(s.kappa[0])} ± {_f(s.kappa[1])}"
            if balanced
            else ""
        )
        lines.append(f"{s.pipeline} | {_f(s.mean)} ± {_f(s.sd)} | {perm}{more_cells} | {per}")
    lines += per_subject_p_lines(res, shown)
    if res.sessions <= 24:
        for s in res.summaries:
            sess = ", ".join(f"{a}/{b} {_f(v, 2)}" for (a, b), v in sorted(s.per_session.items()))
            lines.append(f"{s.pipeline} per subject/session: {sess}")
    for t in res.tests:
        stat = f"W={_f(t.statistic, 1)}, p={_p(t.p_value)}" if t.p_value is not None else "not run"
        note = f" ({t.note})" if t.note else ""
        lines.append(f"Wilcoxon signed-rank {t.a} vs {t.b} over {t.n} subjects: {stat}{note}")
    if len(res.summaries) == 1:
        # said, not left out: an answer model told to state "the paired test" otherwise makes
        # up a W and a p for a run of one pipeline
        lines.append("paired test: none (one pipeline; a Wilcoxon test compares two pipelines)")
    lines += [f"note: {n}" for n in res.notes]
    if held_note := protocol_note(res.config.protocol):
        lines.append(f"note: {held_note}")
    return "\n".join(lines)


def _heading(res: CVResult) -> str:
    """The table's first line: protocol, folds, seed, what was scored, the score and its chance."""
    cfg = res.config
    unit = "folds per session" if cfg.protocol == "within_session" else "folds"
    held = {
        "cross_session": "leave-one-out: each session held out in turn",
        "cross_subject": "leave-one-out: each subject held out in turn",
    }
    folds = f"{cfg.folds} {unit}" if cfg.protocol == "within_session" else held[cfg.protocol]
    return (
        f"cross_validate {cfg.protocol} ({folds}, seed {cfg.seed}): {res.n_epochs} epochs, "
        f"{len(res.subjects)} subject(s), {res.sessions} subject-session group(s); score "
        f"{SCORING.get(res.scoring, res.scoring)} ({chance_text(res)})"
    )


def _columns(res: CVResult, shown: list[str], balanced: bool) -> str:
    """The columns' header. The score's name heads its figures too: an answer that copies the
    columns without the first line otherwise reports bare numbers whose measure it never names."""
    hidden = len(res.subjects) - len(shown)
    more = f" (+{hidden} more in the plot)" if hidden > 0 else ""
    extra = " | balanced accuracy (chance 1/k) | Cohen's kappa (chance 0)" if balanced else ""
    score = SCORING.get(res.scoring, res.scoring)
    return (
        f"pipeline | {score} mean ± sd over subjects | permutation test{extra} | {score} per "
        f"subject {' '.join(shown)}{more}"
    )


def per_subject_p_lines(res: CVResult, shown: list[str]) -> list[str]:
    """Each subject's own permutation p-value, per pipeline (with two or more subjects)."""
    return [
        f"{s.pipeline} per-subject permutation test: "
        + ", ".join(f"{k} p={_p(s.per_subject_p.get(k))}" for k in shown)
        for s in res.summaries
        if s.per_subject_p and len(res.subjects) > 1
    ]


def chance_text(res: CVResult) -> str:
    """The chance level of the score, honestly: ROC AUC's is 0.5 at any class balance;
    accuracy's is 1/k only for balanced classes, and always guessing the majority class
    scores its share."""
    if res.scoring == "roc_auc":
        return "chance 0.5 at any class balance"
    k = max(1, res.n_classes)
    text = f"chance {1 / k:.2f} = 1/{k} classes"
    if res.class_counts and sum(res.class_counts):
        majority = max(res.class_counts) / sum(res.class_counts)
        text += f"; always guessing the majority class scores {majority:.2f}"
    return text


def shows_balanced(res: CVResult) -> bool:
    """Balanced accuracy and kappa are shown beside the score for more than two classes or
    classes of unequal size (where accuracy's chance is not 1/k)."""
    counts = [c for c in res.class_counts if c]
    return res.n_classes > 2 or len(set(counts)) > 1


def subject_plot(res: CVResult) -> bytes:
    """Each subject's score per pipeline (points joined per pipeline), permutation chance dashed."""
    from matplotlib.figure import Figure

    from brainchat.eeg.preprocessing.plots import _png

    subjects = list(res.subjects)
    fig = Figure(figsize=(max(5.0, 0.5 * len(subjects) + 3), 3.8))
    ax = fig.add_subplot()
    x = np.arange(len(subjects))
    width = 0.8 / max(1, len(res.summaries))
    for i, s in enumerate(res.summaries):
        ys = [s.per_subject.get(k, np.nan) for k in subjects]
        line = ax.plot(
            x + (i - (len(res.summaries) - 1) / 2) * width,
            ys,
            "o",
            label=f"{s.pipeline} ({_f(s.mean, 2)})",
        )
        if s.chance is not None:
            ax.axhline(s.chance, ls="--", lw=0.8, color=line[0].get_color())
    ax.set_xticks(x, subjects, fontsize=8, rotation=45 if len(subjects) > 12 else 0)
    ax.set_xlabel("subject")
    ax.set_ylabel(SCORING.get(res.scoring, res.scoring))
    ax.set_title(f"{res.config.protocol}: score per subject (dashed: permutation chance)")
    ax.legend(fontsize=8)
    return _png(fig)
