"""A step fitted on all trials (ICA) is named as a leakage risk with every score after it (#38):
train_model's validation scores, evaluate_model's test scores, cross_validate's scores, the
exported report and the exported script; a study whose steps are all fixed transforms (filters,
resampling, a re-reference, a channel selection, a montage) gets no such note, nor does an ICA
that was fitted but never applied. Driven through the real tools on the synthetic EDFs."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path
from typing import Any

import pytest

from brainchat.eeg.core.state import STEP_KINDS, Step
from brainchat.eeg.export.export_script import build_script
from brainchat.eeg.guidance.answers import state_line
from brainchat.eeg.io.synthetic import write_demo_set
from test_export import Harness, run_script

FILES = [f"sub-01_ses-0{k}_task-mi_eeg.edf" for k in (1, 2)]
MARK = "leakage risk:"
ICA = "leakage risk: 'ICA minus [0]' was fitted on all trials (ICA learned its unmixing from the"
FIXED = [  # every kind of step that learns nothing from the data
    ("bandpass_filter", {"l_freq": 1, "h_freq": 30}),
    ("notch_filter", {"freqs": [50]}),
    ("resample_data", {"sfreq": 125}),
    ("set_reference", {"ref": "average"}),
    ("select_channels", {"drop": ["Fz"]}),
    ("set_montage", {"name": "standard_1005"}),
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-leakage")
    write_demo_set(root, subjects=1, sessions=2, trials=24, seed=1)
    return root


def _study(data_dir: Path, ica: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The fixed steps, then `ica`'s calls, then epochs, split, train, evaluate, cross-validate,
    export: each tool's text, the exported files and the log."""

    async def build() -> dict[str, Any]:
        h = Harness(None, data_dir)
        await h.call("load_data", {"files": FILES})
        for name, args in [*FIXED, *ica]:
            await h.call(name, args)
        await h.call("epoch_data", {})
        await h.call("split_dataset", {})
        texts = {"train_model": await h.call("train_model", {"model": "csp_lda"})}
        texts["evaluate_model"] = await h.call("evaluate_model", {})
        args = {"pipelines": ["csp_lda"], "folds": 3, "permutations": 0}
        texts["cross_validate"] = await h.call("cross_validate", args)
        await h.call("export_analysis")
        script, report = h.files()
        return {"texts": texts, "script": script.read_text(), "report": report.read_text(),
                "log": list(h.study.log), "history": h.study.state.history}  # fmt: skip

    return asyncio.run(build())


@pytest.fixture(scope="module")
def with_ica(data_dir: Path) -> dict[str, Any]:
    fit = ("ica_fit", {"n_components": 5})
    return _study(data_dir, [fit, ("ica_apply", {"exclude": [0]})])


@pytest.fixture(scope="module")
def without(data_dir: Path) -> dict[str, Any]:
    """Every fixed step, and an ICA fitted but not applied (it changed nothing in the data)."""
    return _study(data_dir, [("ica_fit", {"n_components": 5})])


def _section(page: str, title: str) -> str:
    """The report's section under <h2>`title`</h2>, unescaped, up to the next <h2>."""
    text = html.unescape(page)
    return text.split(f"<h2>{title}</h2>", 1)[1].split("<h2>", 1)[0]


def test_every_score_after_ica_names_it(with_ica: dict[str, Any]) -> None:
    texts = with_ica["texts"]
    assert f"note: {ICA} validation trials too) before split_dataset" in texts["train_model"]
    assert f"note: {ICA} test trials too) before split_dataset" in texts["evaluate_model"]
    assert "the test scores may be optimistic" in texts["evaluate_model"]
    assert f"note: {ICA} test folds too) before cross-validation" in texts["cross_validate"]
    # said with the scores, before the images the model is only told about
    lines = texts["evaluate_model"].splitlines()
    assert lines.index(next(x for x in lines if MARK in x)) < min(
        i for i, x in enumerate(lines) if x.startswith("image:")
    )


def test_the_report_says_what_the_tools_said(with_ica: dict[str, Any]) -> None:
    note = next(x for x in with_ica["texts"]["evaluate_model"].splitlines() if MARK in x)
    assert f"<p>Note: {note.removeprefix('note: ')}</p>" in _section(
        with_ica["report"], "Metrics (test set)"
    )
    cv = next(x for x in with_ica["texts"]["cross_validate"].splitlines() if MARK in x)
    assert f"<p>Note: {cv.removeprefix('note: ')}</p>" in _section(
        with_ica["report"], "Cross-validation"
    )


def test_the_script_prints_the_same_notes(with_ica: dict[str, Any]) -> None:
    script = with_ica["script"]
    for tool, call in (("evaluate_model", "train(epochs, split, "), ("cross_validate", "cross_validate(epochs, ")):  # fmt: skip
        note = next(x for x in with_ica["texts"][tool].splitlines() if MARK in x)
        after = script.split("\n" + call, 1)[1].split("\n# -- step", 1)[0]
        assert f"note({note.removeprefix('note: ')!r})" in after, tool


@pytest.mark.slow  # runs an exported script in a process of its own
def test_the_exported_script_prints_the_note_and_keeps_it(
    with_ica: dict[str, Any], data_dir: Path, tmp_path: Path
) -> None:
    from brainchat.eeg.core.leakage import leakage_notes

    log = [e for e in with_ica["log"] if e["op"] != "crossval"]  # the split, train, test path
    recordings = [{"file": f, "subject": "01", "session": f[11:13], "format": "edf"} for f in FILES]
    notes = {"test": leakage_notes(with_ica["history"], "test")}
    path = tmp_path / "analysis.py"
    path.write_text(build_script(log, recordings, version="t", when="now", name=path.name, notes=notes))  # fmt: skip
    out = run_script(path, tmp_path, str(data_dir))
    assert out["notes"] == notes["test"] and len(notes["test"]) == 1
    assert notes["test"][0].startswith(f"{ICA} test trials too)")


def test_no_note_without_a_step_fitted_on_all_trials(without: dict[str, Any]) -> None:
    assert [s.op for s in without["history"]] == [
        "bandpass", "notch", "resample", "reference", "select", "montage"
    ]  # fmt: skip
    for tool, text in without["texts"].items():
        # no step-fitted note; a split by trial's own note (eeg/core/holdout.py) names its
        # shared sessions as "a form of leakage" and is tested in tests/test_demo_followups.py
        assert MARK not in text and "fitted on all trials" not in text, tool
        assert "leakage risk" not in str(state_line(tool, text)), tool
    assert MARK not in html.unescape(without["report"])
    assert not re.search(r"^note\(", without["script"], re.MULTILINE)


def test_the_answer_model_is_asked_to_state_the_note(with_ica: dict[str, Any]) -> None:
    for tool, text in with_ica["texts"].items():
        line = state_line(tool, text)
        assert line is not None and "the leakage risk it names" in line, tool
    assert "the per-class scores" in str(state_line("evaluate_model", with_ica["texts"]["evaluate_model"]))  # fmt: skip


def test_every_kind_of_step_declares_what_it_learns() -> None:
    assert {k for k, fitted in STEP_KINDS.items() if fitted is not None} == {"ica"}
    with pytest.raises(ValueError, match="not declared in STEP_KINDS"):
        Step("zscore", {}, "z-score every channel")
