"""The EEG workflow as data: its steps, which tool does each, what each needs, and their order.

This is the one place that knows that epochs come after loading and a split before training.
The agent reads it through the domain interface (eeg/guidance/__init__.py): which tools the
study's state allows, which step comes next for a request, which steps a request's record may
name. Tools still check their own preconditions and say what is missing; this table is what a
small model is guided by before it asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STAGES = ("empty", "loaded", "epoched", "split", "trained")


@dataclass(frozen=True)
class Step:
    """One step of the workflow a request can ask for, by its id in the request record."""

    id: str
    about: str  # what it means, for the model that writes the record (one line)
    tools: tuple[str, ...]  # the tools that do it, the usual one first
    needs: str = "empty"  # the stage its tools need
    report: bool = False  # it changes nothing in the study (it reports, lists or draws)
    replaces: tuple[str, ...] = ()  # steps it does itself (cross-validation: split, train, test)


STEPS: tuple[Step, ...] = (
    Step("list", "list the EEG files in the data folder", ("list_data_files",), report=True),
    Step(
        "fetch",
        "download a public data set by name (MOABB, OpenNeuro)",
        ("fetch_dataset",),
    ),
    Step("load", "load recordings (files, subjects, sessions)", ("load_data",)),
    Step(
        "inspect",
        "describe the study, what is loaded and done: channels, events, steps, models' scores, split",
        ("get_study_state",),
        report=True,
    ),  # fmt: skip
    Step(
        "preprocess",
        "band-pass/high-pass/low-pass, notch, resample, re-reference, select channels, montage",
        (
            "bandpass_filter",
            "notch_filter",
            "resample_data",
            "set_reference",
            "select_channels",
            "set_montage",
        ),
        needs="loaded",
    ),  # fmt: skip
    Step(
        "artifacts",
        "find or remove bad channels and segments; ICA: fit, match EOG/ECG, remove components",
        (
            "find_artifacts",
            "ica_fit",
            "ica_find_artifacts",
            "ica_components",
            "ica_apply",
            "mark_bad_channels",
            "annotate_bad_segments",
        ),
        needs="loaded",
    ),  # fmt: skip
    Step(
        "epoch",
        "cut epochs (trials) around the events; reject by amplitude",
        ("epoch_data",),
        needs="loaded",
    ),  # fmt: skip
    Step(
        "split",
        "split epochs into train/validation/test (by trial, session or subject)",
        ("split_dataset",),
        needs="epoched",
    ),  # fmt: skip
    Step(
        "train",
        "train a decoder (EEGNet, ShallowConvNet, SCCNet, CSP+LDA)",
        ("train_model",),
        needs="split",
    ),  # fmt: skip
    Step(
        "evaluate",
        "test-set accuracy and metrics of a trained decoder",
        ("evaluate_model",),
        needs="trained",
        report=True,
    ),  # fmt: skip
    Step(
        "cross_validate",
        "cross-validated decoding scores, chance level and p-values; comparing pipelines; "
        "whether classes are separable; generalising to new sessions or subjects",
        ("cross_validate",),
        needs="epoched",
        report=True,
        replaces=("split", "train", "evaluate"),
    ),
    Step(
        "spectra",
        "band power per channel and band, peak (alpha) frequency",
        ("band_power",),
        needs="loaded",
        report=True,
    ),
    Step(
        "erp",
        "ERPs: class averages, difference waves, peak amplitude and latency",
        ("erp_analysis",),
        needs="epoched",
        report=True,
    ),
    Step(
        "time_frequency",
        "time-frequency power, ERD/ERS per channel and band",
        ("time_frequency",),
        needs="epoched",
        report=True,
    ),
    Step(
        "statistics",
        "cluster permutation test between conditions",
        ("cluster_test",),
        needs="epoched",
        report=True,
    ),
    Step(
        "plot",
        "a figure: raw traces, spectrum (PSD), topomap, class averages",
        ("plot_raw", "plot_psd", "plot_topomap", "plot_epochs_average"),
        needs="loaded",
        report=True,
    ),  # fmt: skip
    Step(
        "export",
        "export a script and report, or BIDS derivatives",
        ("export_analysis", "save_bids_derivatives", "replace_bids_derivatives"),
        needs="loaded",
    ),  # fmt: skip
    Step(
        "clear",
        "discard the study or undo preprocessing",
        ("clear_study", "reset_preprocessing"),
        needs="loaded",
    ),  # fmt: skip
)
BY_ID = {s.id: s for s in STEPS}
STEP_OF = {tool: s for s in STEPS for tool in s.tools}
# the analyses a request asks for by name: pushed towards (with the stage they need) like the
# pipeline's steps, though they change nothing
ANALYSES = ("spectra", "erp", "time_frequency", "statistics")
PIPELINE = ("load", "preprocess", "artifacts", "epoch", "split", "train", "evaluate", "cross_validate")  # fmt: skip
# tools whose stage needs more than the step's (a plot of epochs needs epochs; ICA's components
# and removal need a fitted ICA)
TOOL_NEEDS = {
    "plot_epochs_average": "epoched",
    "ica_components": "ica",
    "ica_apply": "ica",
    "ica_find_artifacts": "ica",
}
# the pipeline step that brings the study to a stage (what a report step that needs it implies)
MAKES = {"loaded": "load", "epoched": "epoch", "split": "split", "trained": "train"}
LISTING = "list_data_files"


# the stage from which the study holds a step's result: a loaded study takes no second load
# (load_data asks for clear_study first); epochs hold their preprocessing (a filter applies to
# continuous data); epochs, a split and a trained model are there to be used
HELD = {
    "load": "loaded",
    "preprocess": "epoched",
    "artifacts": "epoched",
    "epoch": "epoched",
    "split": "split",
    "train": "trained",
}


def held(ids: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
    """The asked steps whose result the study already holds, where the request fixes no value
    for their tools (one that does asks for the step anew, and the tool says what it needs)."""
    return {
        i
        for i in ids
        if i in HELD and reached(facts, HELD[i]) and not set(BY_ID[i].tools) & set(fixed)
    }


def opening(ids: list[str], listing: bool, facts: dict[str, Any]) -> list[str]:
    """The reports brainchat runs before a small model's first round, the ones that take no
    argument and change nothing: with nothing loaded, the listing for a request that lists or
    loads recordings (so the model picks real names instead of guessing them); the study's
    state for a request that asks what it holds, or whose every step the study holds."""
    empty = str(facts.get("stage", "empty")) == "empty"
    # a step that needs data (a plot, an epoching) on an empty study needs a load first
    loads = any(s.id == "load" or s.needs != "empty" for s in chain(ids, facts))
    first = [LISTING] if empty and (listing or loads) else []
    # a request whose every step the study already holds asks about what it holds ("what is in
    # my study?" read as a load of a loaded study): its state is the answer's ground
    about = "inspect" in ids or (bool(ids) and held(ids, facts, {}) == set(ids))
    return first + (list(BY_ID["inspect"].tools[:1]) if about else [])


def closing(ids: list[str], facts: dict[str, Any], done: set[str]) -> list[str]:
    """The results brainchat computes itself when a small model stops short of them: the asked
    pipeline reports (a test-set evaluation, a cross-validation) that no call made, whose
    stage the study has reached; they change nothing, and their arguments are optional."""
    return [
        s.tools[0]
        for s in steps_of(ids)
        if s.report and s.id in PIPELINE and not set(s.tools) & done and reached(facts, s.needs)
    ]


def reached(facts: dict[str, Any], need: str) -> bool:
    """The study is at `need` or past it (`ica`: an ICA is fitted)."""
    if need == "ica":
        return bool(facts.get("ica"))
    have = str(facts.get("stage", "empty"))
    return have in STAGES and STAGES.index(have) >= STAGES.index(need)


def allowed(tools: list[str], facts: dict[str, Any]) -> list[str]:
    """The tools, of `tools`, whose step the study's state allows now (others are kept)."""
    out = []
    for name in tools:
        step = STEP_OF.get(name)
        need = TOOL_NEEDS.get(name, step.needs if step else "empty")
        if step is None or reached(facts, need):
            out.append(name)
    return out


def steps_of(ids: list[str]) -> list[Step]:
    """The known steps among `ids`, in workflow order (unknown ids dropped)."""
    order = [s.id for s in STEPS]
    return [BY_ID[i] for i in sorted(set(ids) & set(BY_ID), key=order.index)]


def first_that_replace(ordered: list[Step]) -> list[Step]:
    """`ordered` with each step that does others itself moved ahead of the first of them (a
    cross-validation before the split, training and test it does in its own folds): what it
    answers is pushed towards before steps it makes needless."""
    out = list(ordered)
    for step in ordered:
        firsts = [i for i, s in enumerate(out) if s.id in step.replaces]
        if firsts and out.index(step) > firsts[0]:
            out.remove(step)
            out.insert(firsts[0], step)
    return out


def prerequisite(step: Step, facts: dict[str, Any]) -> Step | None:
    """The pipeline step the study needs before `step` can run (None: it can run now)."""
    if reached(facts, step.needs):
        return None
    have = str(facts.get("stage", "empty"))
    after = {"empty": "load", "loaded": "epoch", "epoched": "split", "split": "train"}
    return BY_ID.get(after.get(have, ""))


def chain(ids: list[str], facts: dict[str, Any]) -> list[Step]:
    """The steps the asked ones need from the study's stage on: each asked step, and the
    pipeline steps between the stage and the furthest asked one (ICA and preprocessing only
    when asked; what an asked step does itself left out), in workflow order."""
    asked = steps_of(ids)
    own = {s.id for s in asked}
    stage = str(facts.get("stage", "empty"))
    start = {"empty": 0, "loaded": 1, "epoched": 4, "split": 5, "trained": 6}.get(stage, 0)
    implied = [MAKES[s.needs] for s in asked if s.id not in PIPELINE and s.needs in MAKES]
    furthest = max((PIPELINE.index(i) for i in [*own, *implied] if i in PIPELINE), default=-1)
    needed = own | set(PIPELINE[start : furthest + 1])
    needed -= {"artifacts", "preprocess"} - own
    for s in asked:
        needed -= set(s.replaces) - own
    return steps_of(sorted(needed))


def rounds_needed(ids: list[str], facts: dict[str, Any]) -> int:
    """Tool rounds the asked steps take one call a round, with the prerequisites they imply."""
    return len(chain(ids, facts))


def focus(ids: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
    """The tools a request needs now: its chain's (a step whose values the user fixed, by its
    tools that have them), the listing and the study's state, and a montage for a plot."""
    tools = {LISTING, *BY_ID["inspect"].tools}
    for step in chain(ids, facts):
        named = [t for t in step.tools if t in fixed]
        tools.update(named or step.tools)
        if step.id == "plot":
            tools.add("set_montage")  # a topomap needs electrode positions
    return tools
