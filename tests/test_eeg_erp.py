"""The erp_analysis tool (#39): averages per condition, difference waves, peaks and mean
amplitudes in a window, checked against plain MNE (EpochsArray.average, Evoked.get_peak,
combine_evoked) on the same epochs, and against an ERP planted in real FIF recordings.

The oracle: a triangular 8 µV deflection peaking 300 ms after each left_hand cue, largest at Pz,
on the synthetic 22-channel background scaled to a fifth (2 µV): at full scale the 1/f
background of 40 trials moves the peak by up to 5 samples, at a fifth the peak stayed within
one sample at Pz for ten seeds out of ten (the difference wave too).
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path
from typing import Any

import mne
import numpy as np
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from pydantic import ValidationError

from brainchat.eeg.analysis import erp
from brainchat.eeg.io.synthetic import CHANNELS, make_recording, write_raw
from brainchat.eeg.tools.analysis_kit import analysis_data
from brainchat.eeg.tools.erp_tool import ErpArgs
from test_export import Harness, exports, run_script

FILES = ["sub-01_ses-01_task-mi_eeg.fif", "sub-01_ses-02_task-mi_eeg.fif"]
PLANTED = {"Pz": 1.0, "CPz": 0.8, "P1": 0.7, "P2": 0.7, "Cz": 0.6, "POz": 0.6}
LATENCY_S, HALF_WIDTH_S, AMPLITUDE_V = 0.3, 0.1, 8e-6
DIFF = "left_hand \u2212 right_hand"
ARGS = {"differences": [["left_hand", "right_hand"]], "window": [0.1, 0.6],
        "polarity": "positive", "plot": "compare"}  # fmt: skip


def planted_recording(session: int) -> mne.io.RawArray:
    """A synthetic recording (background at a fifth) with the ERP added after left_hand cues."""
    raw = make_recording(1, session, trials=40, seed=0)
    data = raw.get_data() * 0.2
    sfreq = raw.info["sfreq"]
    tt = np.arange(-0.5, 0.5, 1 / sfreq)
    bump = AMPLITUDE_V * np.clip(1 - np.abs(tt) / HALF_WIDTH_S, 0, None)
    for onset, label in zip(raw.annotations.onset, raw.annotations.description, strict=True):
        if label == "left_hand":
            start = int(round((onset + LATENCY_S) * sfreq)) - len(tt) // 2
            for ch, w in PLANTED.items():
                data[CHANNELS.index(ch), start : start + len(tt)] += w * bump
    return mne.io.RawArray(data, raw.info, verbose="error").set_annotations(raw.annotations)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-erp")
    for session, name in enumerate(FILES, start=1):
        write_raw(planted_recording(session), root / name)
    return root


async def _epoched(data_dir: Path) -> Harness:
    h = Harness(None, data_dir)
    await h.call("load_data", {"files": FILES})
    await h.call("epoch_data", {"tmin": -0.2, "tmax": 0.8, "baseline": [-0.2, 0]})
    return h


@pytest.fixture(scope="module")
def study(data_dir: Path) -> dict[str, Any]:
    """The ERP through the real tool, called as the agent calls it (a ToolCall), then exported."""

    async def build() -> dict[str, Any]:
        h = await _epoched(data_dir)
        message = await h.invoke("erp_analysis", ARGS)
        images = h.images()
        entry = h.study.log[-1]
        await h.call("export_analysis")
        return {"message": message, "images": images, "entry": entry, "files": h.files(),
                "data": analysis_data(h.study.state)}  # fmt: skip

    return asyncio.run(build())


def result_of(study: dict[str, Any]) -> dict[str, Any]:
    return study["message"].artifact["structured"]


def rows_by(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["condition"], r["channel"]): r for r in result["rows"]}


def plain_mne(epochs: dict[str, Any]) -> dict[str, mne.Evoked]:
    out = {}
    for k, c in enumerate(epochs["classes"]):
        sel = epochs["y"] == k
        out[c] = mne.EpochsArray(epochs["X"][sel], epochs["info"], tmin=epochs["tmin"]).average()
    out[DIFF] = mne.combine_evoked([out["left_hand"], out["right_hand"]], weights=[1, -1])
    return out


@pytest.mark.parametrize("polarity", ["positive", "negative", "absolute"])
def test_the_numbers_are_mnes_averages_peaks_and_difference(
    study: dict[str, Any], polarity: str
) -> None:
    data = study["data"]
    result = erp.erp_analysis(data, **{**ARGS, "polarity": polarity})
    evokeds = plain_mne(data["epochs"])
    a, b = (t / 1e3 for t in result["window_ms"])
    assert (a, b) == (pytest.approx(0.1), pytest.approx(0.6))
    mode = {"positive": "pos", "negative": "neg", "absolute": "abs"}[polarity]
    rows = rows_by(result)
    assert len(rows) == 3 * len(CHANNELS)
    counts = {
        c: int((data["epochs"]["y"] == k).sum()) for k, c in enumerate(["left_hand", "right_hand"])
    }
    for name, ev in evokeds.items():
        mean = ev.copy().crop(a, b).data.mean(axis=1)
        for i, ch in enumerate(ev.ch_names):
            _, lat, amp = (
                ev.copy()
                .pick([ch])
                .get_peak(tmin=a, tmax=b, mode=mode, return_amplitude=True, strict=False)
            )
            row = rows[(name, ch)]
            assert row["peak_uv"] == amp * 1e6, (name, ch)
            assert row["latency_ms"] == lat * 1e3, (name, ch)
            assert row["mean_uv"] == pytest.approx(mean[i] * 1e6, rel=1e-9, abs=1e-12)
            n = counts[name] if name in counts else sum(counts.values())
            assert row["n_trials"] == n
    assert result["n_trials"] == counts


def test_a_planted_erp_is_found_at_its_channel_and_latency(study: dict[str, Any]) -> None:
    result = result_of(study)
    largest = {r["condition"]: r for r in result["largest"]}
    step = 1e3 / 250
    for wave in ("left_hand", DIFF):
        top = largest[wave]
        assert top["channel"] == "Pz", top
        assert abs(top["latency_ms"] - 300) <= step + 1e-9, top
        assert top["peak_uv"] == pytest.approx(8.0, abs=1.0)
        assert not top["edge"]
    rows = rows_by(result)
    assert abs(rows[("right_hand", "Pz")]["peak_uv"]) < 3.0  # the other class has none
    # the triangle's area over the 500 ms window: 8 µV x 0.1 s / 0.5 s = 1.6 µV at Pz
    assert rows[(DIFF, "Pz")]["mean_uv"] == pytest.approx(1.6, abs=0.5)
    assert abs(rows[(DIFF, "Fz")]["mean_uv"]) < 0.8
    assert result["plot_channels"][0] == "Pz"  # compare: the channel of largest effect
    text = study["message"].content
    assert re.search(r"\n  left_hand: Pz [78]\.\d\d µV at (296|300|304) ms, mean 1\.", text)
    assert re.search(rf"\n  {DIFF}: Pz [789]\.\d\d µV at (296|300|304) ms", text)
    assert "trials: left_hand 40, right_hand 40" in text
    assert "baseline-corrected: the pre-stimulus mean (-0.2 to 0 s) is 0 µV" in text


def test_a_peak_on_the_windows_edge_is_flagged(study: dict[str, Any]) -> None:
    result = erp.erp_analysis(study["data"], window=[0.1, 0.25], polarity="positive")
    pz = rows_by(result)[("left_hand", "Pz")]
    assert result["window_ms"] == [pytest.approx(100), pytest.approx(248)]  # samples inside
    assert pz["edge"] and pz["latency_ms"] == result["window_ms"][1]  # still rising there
    assert any("left_hand: the peak lies on the window's edge" in n and "Pz" in n
               for n in result["notes"])  # fmt: skip
    assert "Pz" in erp.text(result) and "*" in erp.text(result)


def test_the_baseline_is_stated(study: dict[str, Any]) -> None:
    epochs = study["data"]["epochs"]
    shifted = {**epochs, "X": epochs["X"] + 5e-6}
    result = erp.erp_analysis({"epochs": shifted}, channels=["Pz"])
    assert result["baseline"]["corrected"] is False
    assert result["baseline"]["max_abs_mean_uv"] == pytest.approx(5.0, abs=1e-6)
    assert "not baseline-corrected" in erp.text(result) and "5.00 µV" in erp.text(result)
    later = {**epochs, "X": epochs["X"][:, :, 50:], "tmin": 0.0}  # from 0 s: no pre-stimulus part
    result = erp.erp_analysis({"epochs": later}, window=[0.1, 0.6])
    assert result["baseline"]["corrected"] is None
    assert "no pre-stimulus interval" in erp.text(result)


async def test_what_the_user_can_fix_is_refused_clearly(data_dir: Path) -> None:
    h = await _epoched(data_dir)
    bad = [
        ({"window": [-0.5, 0.5]}, r"window \[-0.5, 0.5\] s is not inside the epochs \(-0.2 to 0.8 s\)"),
        ({"conditions": ["feet"]}, r"unknown condition 'feet': the epochs have left_hand, right_hand"),
        ({"differences": [["left_hand", "tongue"]]}, "unknown condition 'tongue'"),
        ({"channels": ["Pz", "Oz"]}, r"unknown channel 'Oz': the epochs have Fz, FC3"),
        ({"window": [0.3, 0.304]}, "holds 2 sample"),
    ]  # fmt: skip
    for args, message in bad:
        with pytest.raises(ToolException, match=message):
            await h.call("erp_analysis", args)
    assert not [e for e in h.study.log if e["op"] == "erp"]  # a refused call is not logged
    with pytest.raises(ValidationError, match="tmin < tmax"):
        ErpArgs(window=[0.6, 0.1])
    with pytest.raises(ValidationError, match="two different conditions"):
        ErpArgs(differences=[["left_hand", "left_hand"]])
    assert ErpArgs(differences=["left_hand", "right_hand"]).differences == [  # type: ignore[list-item]
        ["left_hand", "right_hand"]
    ]
    text = await h.call("erp_analysis", {"conditions": ["LEFT_HAND"], "channels": ["pz"]})
    assert "left_hand (n=40): Pz" in text  # names matched whatever their case


def _with_montage(data: dict[str, Any]) -> dict[str, Any]:
    info = data["epochs"]["info"].copy()
    info.set_montage("standard_1005", verbose="error")
    return {**data, "epochs": {**data["epochs"], "info": info}}


@pytest.mark.parametrize("kind", ["butterfly", "joint", "compare"])
def test_each_plot_is_a_png_with_and_without_a_montage(study: dict[str, Any], kind: str) -> None:
    for data, placed in ((study["data"], False), (_with_montage(study["data"]), True)):
        result = erp.erp_analysis(data, **{**ARGS, "plot": kind})
        png = erp.figure(data, result, **ARGS)
        assert png and png.startswith(b"\x89PNG"), (kind, placed)
        drawn = "butterfly" if kind == "joint" and not placed else kind
        assert result["plot"] == drawn
        fell_back = any("drawn as butterfly, not joint" in n for n in result["notes"])
        assert fell_back == (kind == "joint" and not placed)
    given = erp.erp_analysis(study["data"], plot="compare", channels=["Cz", "Fz"])
    assert given["plot_channels"] == ["Cz", "Fz"] and given["channels"] == ["Cz", "Fz"]


def test_the_tool_returns_text_structured_content_and_a_figure(study: dict[str, Any]) -> None:
    message = study["message"]
    assert isinstance(message, ToolMessage) and message.tool_call_id == "1"
    result = result_of(study)
    assert len(result["rows"]) == 66 and set(result["rows"][0]) == {
        "condition", "channel", "peak_uv", "latency_ms", "mean_uv", "n_trials", "edge"
    }  # fmt: skip
    text = message.content
    assert len(text) < 4000
    for row in result["rows"]:  # every figure of the table is in the text the model reads
        cell = f"{row['channel']} {row['peak_uv']:.2f}@{row['latency_ms']:.0f}"
        assert cell in text, cell
        assert f"({row['mean_uv']:.2f})" in text
    assert "image: ERP shown to the user" in text
    [image] = study["images"]
    assert image.png.startswith(b"\x89PNG")
    entry = study["entry"]
    assert entry["op"] == "erp" and entry["result"] == result
    assert entry["params"] == {"conditions": None, "channels": None, **ARGS,
                               "window": [0.1, 0.6]}  # fmt: skip


def test_a_long_table_is_cut_in_the_text_to_the_largest_peaks(study: dict[str, Any]) -> None:
    result = erp.erp_analysis(study["data"], **ARGS)
    many = {**result, "rows": result["rows"] * 3}  # 198 rows
    text = erp.text(many)
    assert len(text) < 4000
    assert re.search(r"\(\d+ of 198 rows: the largest peaks of each wave", text)


def test_the_report_shows_the_erp_table(study: dict[str, Any]) -> None:
    report = [f for f in study["files"] if f.suffix == ".html"][0]
    page = html.unescape(report.read_text())
    assert "<h2>Analyses</h2>" in page and "<h3>ERP (" in page
    assert "<th>peak_uv</th><th>latency_ms</th><th>mean_uv</th>" in page
    pz = rows_by(result_of(study))[(DIFF, "Pz")]
    assert f"<td>{DIFF}</td><td>Pz</td><td>{pz['peak_uv']:.3f}</td>" in page
    assert "baseline-corrected" in page  # the notes


@pytest.mark.slow  # reruns the exported script in a process of its own
def test_the_script_recomputes_the_same_numbers(study: dict[str, Any], tmp_path: Path) -> None:
    script = [f for f in study["files"] if f.suffix == ".py"][0]
    assert script in exports(script.parent.parent)
    out = run_script(script, tmp_path)
    [rerun] = [a for a in out["analyses"] if a["op"] == "erp"]
    assert rerun["params"] == study["entry"]["params"]
    assert rerun["result"]["rows"] == result_of(study)["rows"]
    assert rerun["result"]["notes"] == result_of(study)["notes"]
