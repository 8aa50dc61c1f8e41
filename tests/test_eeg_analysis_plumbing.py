"""The analyses (#39) in the study's workflow: the steps they imply, their log entries (kept with
their results, replaced when asked again, dropped when the epochs they read are cut anew), the
study's summary naming them, and the answer check reading their words in English and Chinese."""

from __future__ import annotations

import threading
from pathlib import Path

from brainchat.eeg.core.analyses import ANALYSES
from brainchat.eeg.core.state import StudyState
from brainchat.eeg.guidance import EegDomain, steps
from brainchat.eeg.guidance.vocabulary import VOCABULARY
from brainchat.eeg.study.replay import apply, compact, label


def _ids(chain: list[steps.Step]) -> list[str]:
    return [s.id for s in chain]


def test_an_analysis_implies_the_stage_it_needs() -> None:
    assert _ids(steps.chain(["erp"], {"stage": "empty"})) == ["load", "epoch", "erp"]
    assert _ids(steps.chain(["statistics"], {"stage": "loaded"})) == ["epoch", "statistics"]
    assert _ids(steps.chain(["spectra"], {"stage": "empty"})) == ["load", "spectra"]
    assert _ids(steps.chain(["time_frequency"], {"stage": "epoched"})) == ["time_frequency"]


def test_the_next_call_goes_to_the_stage_then_to_the_analysis() -> None:
    domain = EegDomain()
    assert domain.next_call(["erp"], {"stage": "loaded"}, set(), {}) == "epoch_data"
    assert domain.next_call(["erp"], {"stage": "epoched"}, set(), {}) == "erp_analysis"
    assert domain.next_call(["erp"], {"stage": "epoched"}, {"erp_analysis"}, {}) is None
    fixed = {"band_power": {"bands": ["alpha"]}}
    assert domain.next_call(["spectra"], {"stage": "loaded"}, set(), fixed) == (
        'band_power with {"bands": ["alpha"]}'
    )


def test_every_analysis_tool_is_a_step_of_the_workflow() -> None:
    for spec in ANALYSES.values():
        assert spec.tool in steps.STEP_OF, spec.tool
        assert spec.tool in VOCABULARY.result_tools
    assert steps.allowed(["ica_find_artifacts"], {"stage": "loaded"}) == []
    assert steps.allowed(["ica_find_artifacts"], {"stage": "loaded", "ica": True}) == [
        "ica_find_artifacts"
    ]
    assert steps.allowed(["erp_analysis", "band_power"], {"stage": "loaded"}) == ["band_power"]


def _entry(op: str, **params: object) -> dict:
    return {"op": op, "params": params, "result": {"rows": [{"channel": "C3", "value": 1.0}]}}


def test_log_entries_of_analyses() -> None:
    load = {"op": "load", "files": ["a.edf"]}
    epoch = {"op": "epoch", "tmin": 0.5, "tmax": 2.5}
    log = compact([load], _entry("band_power", bands=["alpha"]))
    log = compact(log, _entry("band_power", bands=["alpha"]))  # asked again: the newer result
    assert [e["op"] for e in log] == ["load", "band_power"]
    log = compact(log, _entry("band_power", bands=["beta"]))  # other parameters: both kept
    log = compact(compact(log, epoch), _entry("erp", window=[0.2, 0.5]))
    assert [e["op"] for e in log] == ["load", "band_power", "band_power", "epoch", "erp"]
    log = compact(log, dict(epoch, tmin=0.0))  # new epochs: the ERP of the old ones is moot
    assert [e["op"] for e in log] == ["load", "band_power", "band_power", "epoch"]
    assert label(_entry("erp", window=[0.2, 0.5], channels=None)) == "ERP (window=[0.2, 0.5])"
    state = StudyState()
    assert apply(_entry("tfr"), state, Path("."), b"k", threading.Event()) is state


def test_the_answer_check_reads_the_analyses_in_english_and_chinese() -> None:
    said = {s.name: s.said for s in VOCABULARY.steps}
    assert said["ERP"].search("我计算了事件相关电位")
    assert said["ERP"].search("The ERPs were computed")
    assert said["time-frequency"].search("时频分析显示")
    assert said["cluster test"].search("基于簇的置换检验发现")
    assert said["cluster test"].search("A cluster-based permutation test found")
    assert said["band power"].search("各通道的频段功率")
    assert said["band power"].search("alpha power is highest at O1")
    shown = {s.name: s.shown for s in VOCABULARY.steps}
    assert shown["ERP"].search("EEG study: stage=epoched.\nanalyses done: band power, ERP.")
    assert not shown["ERP"].search("EEG study: stage=epoched.")


def test_an_analysis_result_shows_in_its_step_as_summary_table_and_notes() -> None:
    from brainchat.ui.structured_view import structured_block

    result = {
        "summary": "largest alpha power: O1",
        "rows": [{"channel": "O1", "power_uv2": 12.345678}, {"channel": "C3", "power_uv2": 1e-7}],
        "notes": ["Welch, 2 s windows"],
    }
    block = structured_block(result)
    assert block.startswith("largest alpha power: O1\n\n| channel | power_uv2 |")
    assert "| O1 | 12.35 |" in block and "| C3 | 1e-07 |" in block
    assert block.endswith("*Welch, 2 s windows*")


def test_the_spectrum_plot_of_a_recording_with_an_eog_channel() -> None:
    """compute_psd leaves the EOG channel out: the groups index the PSD's own channels (they
    indexed the recording's, an IndexError that also failed every export of such a study)."""
    import mne
    import numpy as np

    from brainchat.eeg.preprocessing.plots import psd_by_group

    info = mne.create_info(["C3", "Cz", "C4", "EOG"], 250.0, ["eeg", "eeg", "eeg", "eog"])
    raw = mne.io.RawArray(np.random.default_rng(0).standard_normal((4, 2500)) * 1e-5, info)
    assert psd_by_group([raw], 1.0, 40.0).startswith(b"\x89PNG")


async def test_the_report_redraws_an_analysis_figure_only_while_its_data_is_unchanged(
    tmp_path: Path,
) -> None:
    """band_power ran before a filter changed the recordings: its table is in the report, its
    figure is not redrawn (it would show other data); the ERP after the last change is."""
    from brainchat.eeg.io.synthetic import write_demo_set
    from test_export import Harness

    write_demo_set(tmp_path, subjects=1, sessions=1, trials=20)
    h = Harness(None, tmp_path)
    await h.call("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
    await h.call("band_power", {"bands": ["alpha"]})
    await h.call("bandpass_filter", {"l_freq": 1, "h_freq": 40})
    await h.call("epoch_data", {"tmin": -0.2, "tmax": 0.8, "baseline": [-0.2, 0]})
    await h.call("erp_analysis", {"window": [0.1, 0.5]})
    await h.call("export_analysis")
    (report,) = [f for f in h.files() if f.suffix == ".html"]
    page = report.read_text(encoding="utf-8")
    analyses = page[page.index("<h2>Analyses</h2>") :]
    band, erp = analyses.split("<h3>")[1:3]
    assert band.startswith("band power (bands=[&#x27;alpha&#x27;]")
    assert "<td>alpha</td>" in band and "Figure not redrawn" in band and "<img" not in band
    assert erp.startswith("ERP") and '<img alt="ERP' in erp and "Figure not redrawn" not in erp


def test_an_erp_measures_the_eeg_channels_unless_others_are_named() -> None:
    import mne
    import numpy as np

    from brainchat.eeg.analysis.erp import erp_analysis

    info = mne.create_info(["C3", "Cz", "C4", "EOG"], 250.0, ["eeg", "eeg", "eeg", "eog"])
    X = np.random.default_rng(0).standard_normal((10, 4, 250)) * 1e-6
    epochs = {"X": X, "y": np.arange(10) % 2, "classes": ["a", "b"], "info": info,
              "tmin": -0.2, "sfreq": 250.0}  # fmt: skip
    result = erp_analysis({"epochs": epochs}, window=[0.1, 0.5])
    assert {r["channel"] for r in result["rows"]} == {"C3", "Cz", "C4"}
    named = erp_analysis({"epochs": epochs}, window=[0.1, 0.5], channels=["eog", "Cz"])
    assert {r["channel"] for r in named["rows"]} == {"EOG", "Cz"}
    expected = X[np.arange(10) % 2 == 0, 3].mean(axis=0) * 1e6  # the trials' mean, in µV
    times = -0.2 + np.arange(250) / 250.0
    part = (times >= 0.1 - 1e-9) & (times <= 0.5 + 1e-9)
    row = next(r for r in named["rows"] if r["channel"] == "EOG" and r["condition"] == "a")
    assert abs(row["mean_uv"] - expected[part].mean()) < 1e-9
