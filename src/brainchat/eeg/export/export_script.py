"""The study's operation log as a standalone Python script: MNE-Python, NumPy, scikit-learn, PyTorch.

One code template per kind of log entry (`TEMPLATES`); the helpers the templates call are in
`export_helpers.py`, written out to mirror brainchat's own code (the honesty test runs the script
and compares its numbers with the study's). An entry with no template is refused, never skipped:
a script that silently leaves a step out would not redo the analysis.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.analyses import ANALYSES
from brainchat.eeg.export.script_bad_marks import bad_channels_code, bad_segments_code
from brainchat.eeg.study.replay import Entry, label

NETWORKS = {"eegnet": "EEGNet", "shallowconvnet": "ShallowConvNet", "sccnet": "SCCNet"}
HELPERS = Path(__file__).with_name("script_helpers.py")
TORCH_HELPERS = Path(__file__).with_name("script_helpers_torch.py")


def _section(path: Path, name: str) -> str:
    """The text of `path` from its "# === section: NAME" marker to its "# === end"."""
    text = path.read_text(encoding="utf-8")
    return text.split(f"# === section: {name}\n", 1)[1].split("# === end", 1)[0]


def csp_source() -> str:
    """brainchat's CSP (eeg/decoding/csp.py: rank-aware, batch-wise), as text for the script:
    the module from its first definition on, after the import its classes need."""
    from brainchat.eeg.decoding import csp

    text = inspect.getsource(csp)
    body = text[text.index("\nBATCH = ") + 1 :]
    return "from sklearn.base import BaseEstimator, TransformerMixin\n\n" + body


def helpers_source(torch_needed: bool) -> str:
    """The helper functions, as text: the CSP, the common section, and the torch one when
    needed."""
    common = csp_source() + "\n\n" + _section(HELPERS, "common")
    torch_part = _section(TORCH_HELPERS, "torch") if torch_needed else ""
    return (
        "# ---- helpers "
        + "-" * 78
        + "\n"
        + common.strip()
        + "\n"
        + ("\n\n" + torch_part.strip() + "\n" if torch_needed else "")
    )


@dataclass
class Context:
    """What the templates need besides the entry: the recordings' subject/session, the models."""

    recordings: list[dict[str, str]]  # file, subject, session, format (from the study)
    kinds: set[str] = field(default_factory=set)  # model kinds trained (which classes to inline)
    crossval: set[str] = field(default_factory=set)  # pipelines cross-validated
    # the leakage notes of the study's scores (core/leakage.py), per kind: "test", "crossval"
    notes: dict[str, list[str]] = field(default_factory=dict)
    analyses: set[str] = field(default_factory=set)  # analysis ops done (which code to copy)


Template = Callable[[Entry, Context], str]


def _py(value: Any) -> str:
    """A Python literal for a JSON-able value (None, bools, numbers, strings, lists, dicts)."""
    return repr(value)


def _text(text: Any) -> str:
    """`text` made safe inside a `#` comment or the header's docstring: a line break, a quote or a
    backslash from the data (a channel name, a file name) stays one visible character of text and
    can neither start a line of code, close the docstring nor make an invalid escape."""
    out = []
    for ch in str(text):
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:  # line breaks, other control and separator characters
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def _load(entry: Entry, ctx: Context) -> str:
    rows = ",\n".join(f"    {_py(r)}" for r in ctx.recordings)
    damaged = "".join(
        f"# note: brainchat found {_text(r['file'])} damaged ({_text(r['damage'])}); it loaded what was "
        "intact, and a plain MNE reader may refuse the file or read it otherwise\n"
        for r in ctx.recordings
        if r.get("damage")
    )
    return (
        f"{damaged}RECORDINGS = [\n{rows},\n]\n"
        "find_recordings(DATA_DIR, RECORDINGS)\n"
        "raws = [read_raw(DATA_DIR / r['file'], r['format']) for r in RECORDINGS]\n"
        "describe_recordings(raws)"
    )


def _bandpass(p: dict[str, Any]) -> str:
    return (
        "for raw in raws:\n"
        f"    raw.filter({_py(p['l_freq'])}, {_py(p['h_freq'])}, picks=data_picks(raw), "
        'verbose="error")'
    )


def _notch(p: dict[str, Any]) -> str:
    return (
        "for raw in raws:\n"
        f'    raw.notch_filter({_py(p["freqs"])}, picks=data_picks(raw), verbose="error")'
    )


def _resample(p: dict[str, Any]) -> str:
    return f'for raw in raws:\n    raw.resample({_py(p["sfreq"])}, verbose="error")'


def _reference(p: dict[str, Any]) -> str:
    ref = "'average'" if p["ref"] == "average" else f"canonical(raw, {_py(list(p['ref']))})"
    return f'for raw in raws:\n    raw.set_eeg_reference({ref}, verbose="error")'


def _select(p: dict[str, Any]) -> str:
    lines = ["for raw in raws:"]
    if p.get("keep"):
        lines.append(f"    raw.pick(canonical(raw, {_py(list(p['keep']))}))")
    if p.get("drop"):
        lines.append(f"    raw.drop_channels(canonical(raw, {_py(list(p['drop']))}))")
    return "\n".join(lines)


def _montage(p: dict[str, Any]) -> str:
    return (
        "for raw in raws:\n"
        f"    raw.set_montage(montage_name({_py(p['name'])}), match_case=False, "
        'on_missing="ignore", verbose="error")'
    )


STEPS: dict[str, Callable[[dict[str, Any]], str]] = {
    "bandpass": _bandpass,
    "notch": _notch,
    "resample": _resample,
    "reference": _reference,
    "select": _select,
    "montage": _montage,
    "bad_channels": bad_channels_code,  # export/script_bad_marks.py
    "bad_segments": bad_segments_code,
}


def _step(entry: Entry, ctx: Context) -> str:
    kind = entry["step"]["op"]
    if kind not in STEPS:
        raise ToolException(_refusal(entry, f"preprocessing step '{kind}'"))
    return STEPS[kind](dict(entry["step"]["params"]))


def _ica_fit(entry: Entry, ctx: Context) -> str:
    return (
        f"ica = fit_ica(raws, n_components={_py(entry['n_components'])}, "
        f"method={_py(entry['method'])}, seed={_py(entry['seed'])})"
    )


def _ica_apply(entry: Entry, ctx: Context) -> str:
    return (
        "for raw in raws:\n"
        f'    ica.apply(raw, exclude={_py(list(entry["exclude"]))}, verbose="error")'
    )


def _epoch(entry: Entry, ctx: Context) -> str:
    base = tuple(entry["baseline"]) if entry.get("baseline") is not None else None
    return (
        "epochs = make_epochs(\n"
        f"    raws, RECORDINGS, tmin={_py(entry['tmin'])}, tmax={_py(entry['tmax'])}, "
        f"events={_py(entry.get('events'))},\n"
        f"    baseline={_py(base)}, reject_uv={_py(entry.get('reject_uv'))}\n"
        ")\n"
        "MODELS.clear()  # new epochs: earlier split and models are gone\n"
        "RESULTS['epochs'] = epochs_summary(epochs)"
    )


def _split(entry: Entry, ctx: Context) -> str:
    return (
        f"split = make_split(epochs, by={_py(entry['by'])}, test_ratio={_py(entry['test_ratio'])}, "
        f"val_ratio={_py(entry['val_ratio'])}, seed={_py(entry['seed'])})\n"
        "MODELS.clear()  # a new split: earlier models are gone\n"
        "RESULTS['split'] = split_summary(epochs, split)"
    )


def _train(entry: Entry, ctx: Context) -> str:
    cfg = dict(entry["config"])
    kind = cfg.get("model")
    if kind != "csp_lda" and kind not in NETWORKS:
        raise ToolException(_refusal(entry, f"model '{kind}'"))
    ctx.kinds.add(str(kind))
    return f"train(epochs, split, {_py(cfg)})" + _notes(ctx, "test")


def _notes(ctx: Context, scores: str) -> str:
    """The lines that print the study's leakage notes of these scores (as its report has them)."""
    return "".join(f"\nnote({_py(n)})" for n in ctx.notes.get(scores, []))


def _crossval(entry: Entry, ctx: Context) -> str:
    from brainchat.eeg.export.script_crossval import NETWORKS as CV_NETWORKS
    from brainchat.eeg.export.script_crossval import crossval_call

    cfg = entry["config"]
    ctx.crossval |= set(cfg["pipelines"])
    ctx.kinds |= {p for p in cfg["pipelines"] if p in CV_NETWORKS}  # their classes are inlined
    return crossval_call(cfg) + _notes(ctx, "crossval")


def _analysis(entry: Entry, ctx: Context) -> str:
    from brainchat.eeg.export.script_analyses import analysis_call

    ctx.analyses.add(entry["op"])
    return analysis_call(entry)


TEMPLATES: dict[str, Template] = {
    "load": _load,
    "step": _step,
    "ica_fit": _ica_fit,
    "ica_apply": _ica_apply,
    "epoch": _epoch,
    "split": _split,
    "train": _train,
    "crossval": _crossval,
    **{op: _analysis for op in ANALYSES},
}


def step_label(entry: Entry) -> str:
    """A few words for one step of the exported pipeline."""
    if entry.get("op") == "train":
        cfg = entry["config"]
        if cfg.get("model") == "csp_lda":
            return "train csp_lda"
        return f"train {cfg.get('model')} ({cfg.get('epochs')} epochs, seed {cfg.get('seed')})"
    if entry.get("op") == "crossval":
        cfg = entry["config"]
        folds = f"{cfg['folds']} folds" if cfg["protocol"] == "within_session" else "leave-one-out"
        return f"{label(entry)}: {folds}, {cfg['permutations']} permutations, seed {cfg['seed']}"
    return label(entry)


def packages(log: list[Entry]) -> list[str]:
    """What the script imports besides MNE-Python and NumPy."""
    from brainchat.eeg.export.script_crossval import NETWORKS as CV_NETWORKS
    from brainchat.eeg.export.script_crossval import RIEMANN, needs

    cv = needs(log)
    trained = {e["config"].get("model") for e in log if e.get("op") == "train"}
    out = ["scikit-learn"]
    if cv or any(e.get("op") in ANALYSES for e in log):
        out.append("SciPy")
    if cv & set(RIEMANN):
        out.append("pyriemann")
    if (trained - {"csp_lda"}) or (cv & set(CV_NETWORKS)):
        out.append("PyTorch")
    return out


def _refusal(entry: Entry, what: str) -> str:
    return (
        f"cannot export the analysis: the study's step '{step_label(entry)}' ({what}) has no code "
        "template in the exporter, and a script without it would not redo the study. Nothing "
        "was written; undo that step (reset_preprocessing or clear_study) to export the rest"
    )


def _network_source(kinds: set[str]) -> str:
    """The network classes used, copied from brainchat.eeg.decoding.models (one architecture, no
    drift)."""
    from brainchat.eeg.decoding import models

    nets = [NETWORKS[k] for k in NETWORKS if k in kinds]
    if not nets:
        return ""
    parts = [inspect.getsource(models._flat_size)]
    if {"ShallowConvNet", "SCCNet"} & set(nets):
        parts += [inspect.getsource(models._Log), inspect.getsource(models._Square)]
    if "SCCNet" in nets:
        parts.append(inspect.getsource(models._SwapSpatial))
    parts += [inspect.getsource(getattr(models, n)) for n in nets]
    table = ", ".join(f"{k!r}: {NETWORKS[k]}" for k in NETWORKS if k in kinds)
    return "\n\n".join(parts) + f"\n\nNETWORK_CLASSES = {{{table}}}\n"


HEADER = '''#!/usr/bin/env python3
"""{title}

Redoes the brainchat study step by step with plain MNE-Python, NumPy, {packages}
(brainchat is not needed). Generated by brainchat {version} on {when} from the study's
operation log ({n} step(s)):
{steps}
Run:  python {name} [DATA_DIR]
DATA_DIR is the data folder the recordings' paths are relative to; by default the one this script
was exported into (it lies in DATA_DIR/exports/); give it when the script was downloaded.
Progress goes to stderr; the last line of stdout is one JSON object: recordings, epoch counts,
split sizes, test metrics per model, cross-validation scores and statistics (printed above it
as a table too), and each analysis's result (spectra, ERPs, time-frequency, cluster tests, artifact
scans), and the notes printed with them (a step fitted on all trials, named as a
leakage risk). Same files, same library versions and the same device
give the same epochs, CSP+LDA accuracy and cross-validation scores; a network's accuracy may differ slightly on another
machine, thread count or library version (floating-point order).
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

import mne
import numpy as np

DATA_DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
RESULTS: dict = {{}}
MODELS: dict = {{}}
'''


def build_script(
    log: list[Entry],
    recordings: list[dict[str, str]],
    *,
    version: str,
    when: str,
    name: str,
    notes: dict[str, list[str]] | None = None,
) -> str:
    """The script for `log` (`notes`: the study's leakage notes, core/leakage.py, per kind of
    score); a ToolException names the first entry that has no template."""
    ctx = Context(recordings, notes=notes or {})
    blocks = []
    for i, entry in enumerate(log, 1):
        template = TEMPLATES.get(entry.get("op", ""))
        if template is None:
            raise ToolException(_refusal(entry, f"operation '{entry.get('op')}'"))
        code = template(entry, ctx)
        params = {k: v for k, v in entry.items() if k not in ("op", "file", "result")}
        label, params_text = _text(step_label(entry)), _text(json.dumps(params))
        blocks.append(f"# -- step {i}: {label}\n# {params_text}\n{code}\n")
    steps = "\n".join(f"  {i}. {_text(step_label(e))}" for i, e in enumerate(log, 1))
    head = HEADER.format(
        title=_text(f"brainchat analysis export ({when})"),
        version=_text(version),
        when=_text(when),
        n=len(log),
        steps=steps,
        name=_text(name),
        packages=_text(", ".join(packages(log))),
    )
    torch_needed = bool(ctx.kinds - {"csp_lda"})
    body = "\n".join(blocks)
    crossval = ""
    if ctx.crossval:
        from brainchat.eeg.export.script_crossval import NETWORKS as CV_NETWORKS
        from brainchat.eeg.export.script_crossval import crossval_source

        crossval = crossval_source(bool(ctx.crossval & set(CV_NETWORKS)))
    from brainchat.eeg.export.script_analyses import analyses_source

    crossval += ("\n\n" if crossval else "") + analyses_source(ctx.analyses)
    tail = "\nRESULTS['software'] = versions()\nprint(json.dumps(RESULTS))\n"
    return "\n\n".join(
        [
            head.rstrip() + "\n",
            helpers_source(torch_needed),
            textwrap.dedent(_network_source(ctx.kinds)).strip() + "\n" if torch_needed else "",
            crossval,
            "# ---- the study's steps, in order " + "-" * 57 + "\n\n" + body + tail,
        ]
    ).replace("\n\n\n\n", "\n\n\n")
