"""Compact text views of a study for the model: the per-turn summary and get_study_state."""

from __future__ import annotations

from typing import Any

from brainchat.eeg.core.holdout import split_brief, split_note
from brainchat.eeg.core.state import StudyState
from brainchat.eeg.io.loading import class_counts


def _files_line(state: StudyState) -> str:
    names = [r.name for r in state.recordings]
    shown = ", ".join(names[:4]) + (f" (+{len(names) - 4} more)" if len(names) > 4 else "")
    subjects = sorted({r.subject for r in state.recordings})
    return f"{len(names)} file(s) [{shown}], {len(subjects)} subject(s)"


def _model_text(state: StudyState, name: str) -> str:
    result = state.results.get(name)
    if result:  # the scores a follow-up question asks about, so that it needs no tool
        return (
            f"{name} test acc {result['accuracy']:.2f} (balanced "
            f"{result['balanced_accuracy']:.2f}, kappa {result['kappa']:.2f}, "
            f"{result['n_test']} test epochs)"
        )
    val: list[Any] = state.models[name].history.get("val_acc") or [None]
    return (
        f"{name} (val acc {val[-1]:.2f}, not evaluated)"
        if val[-1] is not None
        else f"{name} (not evaluated)"
    )


def _models_line(state: StudyState) -> str:
    parts = [_model_text(state, name) for name in state.models]
    line = "; models: " + ", ".join(parts) if parts else ""
    done = [_crossval_text(cv) for cv in state.crossval.values()]
    return line + ("; cross-validated: " + "; ".join(done) if done else "")


def _crossval_text(cv: dict[str, Any]) -> str:
    """One cross_validate result in a few words: its protocol and each pipeline's mean."""
    means = ", ".join(
        f"{s['pipeline']} {s['mean']:.2f}" if s["mean"] is not None else f"{s['pipeline']} n/a"
        for s in cv["summaries"]
    )
    return f"{cv['protocol']} {cv['scoring']} {means}"


def summary(state: StudyState) -> str:
    """One or two lines: stage, files, epochs per class, model results."""
    if state.stage == "empty":
        return "EEG study: empty (no data loaded)."
    raw = state.raws[0]
    line = (
        f"EEG study: stage={state.stage}; {_files_line(state)}; "
        f"{len(raw.ch_names)} ch @ {raw.info['sfreq']:g} Hz"
    )
    if state.history:
        line += "; preprocessing: " + ", ".join(s.label for s in state.history)
    if state.epochs is not None:
        counts = ", ".join(f"{k} {v}" for k, v in state.epochs.counts().items())
        line += f"\nepochs: {counts}"
        if state.split is not None:
            s = state.split
            line += f"; split by {s.by}: train {len(s.train)}/val {len(s.val)}/test {len(s.test)}"
            line += split_brief(state.epochs, s)
    return line + _models_line(state)


def describe(state: StudyState) -> str:
    """The detailed state for get_study_state."""
    if state.stage == "empty":
        return summary(state)
    lines = [f"stage: {state.stage}"]
    for rec, raw in zip(state.recordings, state.raws, strict=True):
        counts = ", ".join(f"{k} {v}" for k, v in class_counts(raw).items()) or "none"
        lines.append(
            f"- {rec.name}: subject {rec.subject}, session {rec.session}, "
            f"{len(raw.ch_names)} ch @ {raw.info['sfreq']:g} Hz, {raw.times[-1]:.0f} s, "
            f"events: {counts}" + (f" (damaged: {rec.damage})" if rec.damage else "")
        )
    lines.append("channels: " + ", ".join(state.raws[0].ch_names))
    hist = [s.label for s in state.history]
    lines.append("preprocessing: " + (", ".join(hist) if hist else "none (data as loaded)"))
    if state.ica is not None:
        lines.append(f"ICA fitted, not applied: {state.ica.n_components_} components")
    rest = summary(state).split("\n", 1)
    if len(rest) > 1:
        lines.append(rest[1])
    if state.split is not None and (held := split_note(state.eps, state.split)):
        lines.append(held)
    return "\n".join(lines)


def changes(before: StudyState, after: StudyState) -> str:
    """What one operation changed, in a few words: the new files, steps, epochs, models, results."""
    if after.stage == "empty":
        return "study cleared: nothing loaded"
    out: list[str] = []
    if [r.name for r in after.recordings] != [r.name for r in before.recordings]:
        out.append(f"loaded {_files_line(after)}")
    old = [s.label for s in before.history]
    new = [s.label for s in after.history]
    if new[: len(old)] == old and len(new) > len(old):
        out += [f"+ {label}" for label in new[len(old) :]]
    elif new != old:
        out.append("preprocessing now: " + (", ".join(new) or "none (data as loaded)"))
    if (after.ica is None) != (before.ica is None):
        out.append("ICA fitted" if after.ica is not None else "ICA applied or dropped")
    if after.epochs is not None and after.epochs is not before.epochs:
        counts = ", ".join(f"{k} {v}" for k, v in after.epochs.counts().items())
        out.append(f"epochs: {counts}")
    elif after.epochs is None and before.epochs is not None:
        out.append("epochs dropped")
    if after.split is not None and after.split is not before.split:
        s = after.split
        out.append(f"split by {s.by}: train {len(s.train)} / val {len(s.val)} / test {len(s.test)}")
    for name in [n for n in after.models if n not in before.models]:
        out.append("trained " + _model_text(after, name))
    for name, res in after.results.items():
        if before.results.get(name) is not res:
            out.append(f"{name} test accuracy {res['accuracy']:.2f}")
    for protocol, cv in after.crossval.items():
        if before.crossval.get(protocol) is not cv:
            out.append(f"cross-validated {_crossval_text(cv)}")
    return "; ".join(out) or f"stage {after.stage}"
