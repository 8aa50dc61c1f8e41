"""The exported script reruns a cross-validation (#24): a cross_validate step of the study is a
step of the script, which redoes it with MNE, pyriemann and scikit-learn (no brainchat) over the
same folds, seeds and permutations, prints the scores and statistics, and gets the study's scores;
the report shows the cross-validation's results.

Tolerance: CSP+LDA, tangent space + LR and MDM are deterministic given the same epochs, folds and
permuted labels, and must agree within 1e-9. A network reruns from the same seeds in the same
order and has agreed exactly (EEGNet, leave-one-subject-out: 0.61 and 0.52 in both) on one CPU,
thread count and torch build; across machines a float32 sum in another order may reorder a
borderline trial, so its test allows 1/n_test of each fold's score.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from test_export import Harness, imports, run_script

FILES = [f"sub-0{s}_ses-0{k}_task-mi_eeg.edf" for s in (1, 2) for k in (1, 2)]
DETERMINISTIC = ["csp_lda", "ts_lr", "mdm"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-cv-export")
    write_demo_set(root, subjects=2, sessions=2, trials=20, effect_size=0.15, seed=5)
    return root


async def _epoched(data_dir: Path) -> Harness:
    h = Harness(None, data_dir)
    await h.call("load_data", {"files": FILES})
    await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    await h.call("resample_data", {"sfreq": 125})  # half the samples: the folds fit faster
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    return h


@pytest.fixture(scope="module")
def exported(data_dir: Path) -> dict[str, Any]:
    """Two cross-validations through the real tool (within-session with three pipelines and
    permutations, leave-one-subject-out), then the export."""

    async def build() -> dict[str, Any]:
        h = await _epoched(data_dir)
        within = {"pipelines": DETERMINISTIC, "folds": 3, "permutations": 2, "seed": 4}
        texts = [await h.call("cross_validate", within)]
        loso = {"protocol": "cross_subject", "pipelines": ["csp_lda", "ts_lr"], "permutations": 2}
        texts.append(await h.call("cross_validate", loso))
        text = await h.call("export_analysis")
        return {"text": text, "files": h.files(), "cv": dict(h.study.state.crossval),
                "tool": texts, "log": list(h.study.log)}  # fmt: skip

    return asyncio.run(build())


def test_the_cross_validations_are_steps_of_the_script(exported: dict[str, Any]) -> None:
    script, report = exported["files"]
    text = script.read_text()
    assert "brainchat" not in imports(text)
    assert {"mne", "numpy", "sklearn"} <= imports(text)
    assert [e["op"] for e in exported["log"]][-2:] == ["crossval", "crossval"]
    for piece in ("cross_validate(epochs, protocol='within_session'", "folds=3",
                  "permutations=2", "seed=4", "pipelines=['csp_lda', 'ts_lr', 'mdm']",
                  "cross_validate(epochs, protocol='cross_subject'"):  # fmt: skip
        assert piece in text, piece
    assert "pyriemann" in exported["text"]  # the tool says what the script needs


def test_the_report_shows_the_cross_validation_results(exported: dict[str, Any]) -> None:
    page = html.unescape(exported["files"][1].read_text())
    assert "<h2>Cross-validation</h2>" in page
    within = exported["cv"]["within_session"]
    for s in within["summaries"]:
        assert f"<td>{s['pipeline']}</td><td>{s['mean']:.3f} ± {s['sd']:.3f}</td>" in page
        assert f"<td>{s['chance']:.3f}</td><td>{s['p_value']:.3f}</td>" in page
    assert "Wilcoxon signed-rank" in page and "cross_subject" in page
    assert "score roc_auc (chance 0.5 at any class balance)" in page  # the chance, stated
    subject, p = next(iter(within["summaries"][0]["per_subject_p"].items()))
    assert f"{subject} {p:.3f}" in page  # each subject's own permutation p
    assert 'alt="within_session: score per subject"' in page  # the per-subject plot


def _by_fold(cv: dict[str, Any]) -> dict[tuple[str, str, str, int], float]:
    return {
        (r["pipeline"], r["subject"], r["session"], r["fold"]): r["score"] for r in cv["records"]
    }


@pytest.mark.slow  # reruns the exported script in a process of its own
def test_the_script_reruns_the_cross_validations_to_the_same_scores(
    exported: dict[str, Any], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    out = run_script(exported["files"][0], tmp_path)
    for protocol, study in exported["cv"].items():
        rerun = out["crossval"][protocol]
        assert _by_fold(rerun).keys() == _by_fold(study).keys()
        assert len(set(_by_fold(study).values())) > 3  # scores that differ: a real comparison
        for key, score in _by_fold(study).items():
            assert _by_fold(rerun)[key] == pytest.approx(score, abs=1e-9), key
        for mine, theirs in zip(study["summaries"], rerun["summaries"], strict=True):
            assert mine["pipeline"] == theirs["pipeline"]
            for k in ("mean", "sd", "chance", "p_value"):
                assert theirs[k] == pytest.approx(mine[k], abs=1e-9), (protocol, k)
            assert theirs["per_subject"] == pytest.approx(mine["per_subject"], abs=1e-9)
            assert theirs["per_subject_p"] == pytest.approx(mine["per_subject_p"], abs=1e-9)
            for k in ("balanced_accuracy", "kappa"):
                assert theirs[k] == pytest.approx(mine[k], abs=1e-9), (protocol, k)
        assert rerun["class_counts"] == study["class_counts"]
        for mine, theirs in zip(study["tests"], rerun["tests"], strict=True):
            assert (theirs["a"], theirs["b"], theirs["n"]) == (mine["a"], mine["b"], mine["n"])
            assert theirs["p_value"] == pytest.approx(mine["p_value"], abs=1e-9)
    assert {"pyriemann", "scipy"} <= set(out["software"])


async def test_a_resumed_study_gets_its_cross_validations_back_without_refitting(
    exported: dict[str, Any], data_dir: Path
) -> None:
    """The log keeps each cross-validation's result: a replay puts it back as it was computed
    (no fold is refitted), and a later export reruns it again."""
    h = Harness(None, data_dir)
    h.study.pending = exported["log"]
    await h.study.restore()
    assert h.study.state.crossval == exported["cv"]
    assert "cross-validated: within_session roc_auc csp_lda" in h.study.summary()


def test_a_protocols_new_result_replaces_its_earlier_one_in_the_log() -> None:
    from brainchat.eeg.study.replay import compact

    def cv(protocol: str, seed: int) -> dict[str, Any]:
        return {"op": "crossval", "config": {"protocol": protocol, "seed": seed}, "result": {}}

    log = [{"op": "epoch"}, cv("within_session", 0), cv("cross_subject", 0)]
    log = compact(log, cv("within_session", 1))
    assert [(e["op"], e.get("config", {}).get("seed")) for e in log] == [
        ("epoch", None), ("crossval", 0), ("crossval", 1)
    ]  # fmt: skip
    assert log[1]["config"]["protocol"] == "cross_subject"
    assert [e["op"] for e in compact(log, {"op": "epoch"})] == ["epoch"]  # new epochs: gone


@pytest.mark.slow  # trains a network per fold, then reruns the script in a process of its own
async def test_a_cross_validated_network_reruns_from_the_same_seeds(
    data_dir: Path, tmp_path: Path
) -> None:
    h = await _epoched(data_dir)
    args = {"protocol": "cross_subject", "pipelines": ["eegnet"], "permutations": 1, "epochs": 2}
    await h.call("cross_validate", args)
    await h.call("export_analysis")
    study = h.study.state.crossval["cross_subject"]
    script = h.files()[0]
    assert "class EEGNet" in script.read_text() and "class NetworkClassifier" in script.read_text()
    rerun = await asyncio.to_thread(run_script, script, tmp_path)
    rerun = rerun["crossval"]["cross_subject"]
    print("eegnet per fold: study", _by_fold(study), "script", _by_fold(rerun))
    for key, score in _by_fold(study).items():
        [record] = [r for r in study["records"] if (r["subject"], r["session"]) == key[1:3]]
        assert abs(_by_fold(rerun)[key] - score) <= 1 / record["n_test"] + 1e-9, key
    [mine], [theirs] = study["summaries"], rerun["summaries"]
    assert theirs["chance"] == pytest.approx(mine["chance"], abs=0.1)
