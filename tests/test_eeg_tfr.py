"""The time_frequency tool (#39): ERD/ERS per condition, channel and band, checked against plain
MNE (tfr_array_morlet / tfr_array_multitaper + mne.baseline.rescale) on the same epochs, and
against the synthetic set's planted ERD.

The oracle: the synthetic recordings desynchronise the mu and beta rhythms over the hemisphere
opposite the imagined hand from 0.3 s after the cue to 4 s (eeg/io/synthetic.py); with an effect
of 0.5 (the rhythm's amplitude halved) and 40 trials per class, right-hand imagery's strongest mu
ERD was at C3 and left-hand's at C4 for five seeds out of five (-50 to -70 %).
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

import mne
import numpy as np
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from pydantic import ValidationError

from brainchat.eeg.analysis import tfr
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.tools.analysis_kit import analysis_data
from brainchat.eeg.tools.tfr_tool import TimeFrequencyArgs
from brainchat.tools.errors import ToolError
from test_export import Harness, run_script

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
EPOCHS = {"tmin": -1.0, "tmax": 3.0}
LEFT = {"C3", "C1", "C5", "FC3", "CP3"}  # the left sensorimotor source's channels
RIGHT = {"C4", "C2", "C6", "FC4", "CP4"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-tfr")
    write_demo_set(root, subjects=1, sessions=2, trials=40, effect_size=0.5, seed=2)
    return root


async def _loaded(data_dir: Path, epochs: dict[str, Any]) -> Harness:
    h = Harness(None, data_dir)
    await h.call("load_data", {"files": FILES})
    await h.call("resample_data", {"sfreq": 125})
    await h.call("epoch_data", epochs)
    return h


@pytest.fixture(scope="module")
def study(data_dir: Path) -> dict[str, Any]:
    """time_frequency through the real tool, called as the agent calls it, then exported."""

    async def build() -> dict[str, Any]:
        h = await _loaded(data_dir, EPOCHS)
        message = await h.invoke("time_frequency", {})
        images = h.images()
        await h.call("export_analysis")
        return {"message": message, "images": images, "log": list(h.study.log),
                "files": h.files(), "data": analysis_data(h.study.state)}  # fmt: skip

    return asyncio.run(build())


def result_of(study: dict[str, Any]) -> dict[str, Any]:
    return study["message"].artifact["structured"]


def plain_change(ep: dict[str, Any], k: int, freqs: Any, baseline: list, mode: str,
                 method: str = "morlet", decim: int = 2) -> Any:  # fmt: skip
    """Plain MNE: trial power averaged per condition, rescaled against the baseline."""
    X = ep["X"][ep["y"] == k]
    if method == "morlet":
        power = mne.time_frequency.tfr_array_morlet(
            X, ep["sfreq"], freqs, n_cycles=freqs / 2, decim=decim, output="power"
        )
    else:
        power = mne.time_frequency.tfr_array_multitaper(
            X, ep["sfreq"], freqs, n_cycles=freqs / 2, decim=decim, output="power"
        )
    times = ep["tmin"] + np.arange(X.shape[2])[::decim] / ep["sfreq"]
    change = mne.baseline.rescale(power.mean(axis=0), times, tuple(baseline), mode=mode)
    return change * (100 if mode == "percent" else 10), times


def check_rows(result: dict[str, Any], ep: dict[str, Any], method: str, mode: str) -> None:
    key = "change_percent" if mode == "percent" else "change_db"
    f0, f1, step = result["freqs_hz"]
    freqs = np.arange(f0, f1 + step / 2, step)
    t0, t1 = result["window_s"]
    rows = {(r["condition"], r["channel"], r["band"]): r for r in result["rows"]}
    assert len(rows) == len(result["rows"]) == 2 * 22 * 2
    for k, condition in enumerate(ep["classes"]):
        change, times = plain_change(ep, k, freqs, result["baseline_s"], mode, method)
        tsel = (times >= t0 - 1e-9) & (times <= t1 + 1e-9)
        for name, (lo, hi) in (("mu", (8, 13)), ("8-12 Hz", (8, 12))):
            fsel = (freqs >= lo) & (freqs <= hi)
            want = change[:, fsel][:, :, tsel].mean(axis=(1, 2))
            for i, ch in enumerate(ep["info"]["ch_names"]):
                got = rows[(condition, ch, name)][key]
                assert got == pytest.approx(want[i], rel=1e-9, abs=1e-12), (condition, ch, name)


@pytest.mark.parametrize(("method", "mode"), [("morlet", "percent"), ("multitaper", "logratio")])
def test_the_numbers_are_mnes_power_rescaled(study: dict[str, Any], method: str, mode: str) -> None:
    data = study["data"]
    args = {"method": method, "mode": mode, "bands": ["mu", [8, 12]], "decim": 2}
    result = tfr.time_frequency(data, **args)
    assert result["baseline_s"] == [-0.75, 0.0]  # the start, clear of half a 0.5 s wavelet
    assert result["window_s"] == [0.5, 2.75]
    assert result["unit"] == ("%" if mode == "percent" else "dB")
    check_rows(result, data["epochs"], method, mode)


def test_the_imagined_hands_mu_erd_is_contralateral(study: dict[str, Any]) -> None:
    result = result_of(study)
    strongest = {
        (r["condition"], r["band"]): r for r in tfr._tfr_strongest(result["rows"], "percent")
    }
    assert strongest[("right_hand", "mu")]["channel"] == "C3"
    assert strongest[("left_hand", "mu")]["channel"] == "C4"
    rows = {(r["condition"], r["channel"], r["band"]): r for r in result["rows"]}
    for hand, near, far in (("right_hand", "C3", "C4"), ("left_hand", "C4", "C3")):
        assert rows[(hand, near, "mu")]["change_percent"] < -30
        assert rows[(hand, near, "mu")]["erd_ers"] == "ERD"
        assert (
            rows[(hand, near, "mu")]["change_percent"]
            < rows[(hand, far, "mu")]["change_percent"] - 15
        )
        beta = strongest[(hand, "beta")]["channel"]
        assert beta in (LEFT if hand == "right_hand" else RIGHT)
    assert rows[("right_hand", "C3", "mu")]["window_s"] == [0.5, 2.75]


def test_the_tool_returns_text_structured_content_a_figure_and_a_log_entry(
    study: dict[str, Any],
) -> None:
    message = study["message"]
    assert isinstance(message, ToolMessage)
    result = result_of(study)
    text = message.content
    c3 = next(r for r in tfr._tfr_strongest(result["rows"], "percent")
              if r["condition"] == "right_hand" and r["band"] == "mu")  # fmt: skip
    assert f"right_hand mu (8-13 Hz): C3 {c3['change_percent']:+.1f} % (ERD)" in text
    assert "trials: left_hand 40, right_hand 40" in text
    assert "negative = ERD" in text and "n_cycles freqs/2" in text
    assert f"right_hand mu: C3 {c3['change_percent']:+.1f}, " in text  # every channel's number
    assert len(text) < 4500
    assert [i.title for i in study["images"]] == ["time-frequency"]
    assert study["images"][0].png.startswith(b"\x89PNG")
    [entry] = [e for e in study["log"] if e["op"] == "tfr"]
    assert entry["result"] == result
    assert entry["params"]["bands"] is None and entry["params"]["mode"] == "percent"


def test_the_script_recomputes_the_same_numbers_and_the_report_shows_them(
    study: dict[str, Any], tmp_path: Path
) -> None:
    script, report = study["files"]
    out = run_script(script, tmp_path)
    [rerun] = [a for a in out["analyses"] if a["op"] == "tfr"]
    mine = result_of(study)
    assert [r["channel"] for r in rerun["result"]["rows"]] == [r["channel"] for r in mine["rows"]]
    for a, b in zip(rerun["result"]["rows"], mine["rows"], strict=True):
        assert a["change_percent"] == pytest.approx(b["change_percent"], rel=1e-9, abs=1e-12)
    page = html.unescape(report.read_text())
    assert "<h2>Analyses</h2>" in page and "<th>change_percent</th>" in page
    row = next(r for r in mine["rows"] if r["condition"] == "right_hand" and r["channel"] == "C3")
    assert (
        f"<td>C3</td><td>mu</td><td>8.0, 13.0</td><td>0.5, 2.75</td><td>{row['change_percent']:.3f}</td>"
        in page
    )
    assert mine["summary"] in page


async def test_epochs_without_a_pre_stimulus_part_get_the_call_that_re_epochs(
    data_dir: Path,
) -> None:
    h = await _loaded(data_dir, {"tmin": 0.5, "tmax": 2.5})  # the app's default epochs
    with pytest.raises(
        ToolError, match="Re-epoch with one, e.g. epoch_data.tmin=-1.0, tmax=3."
    ) as caught:
        await h.call("time_frequency", {})
    assert "pre-stimulus" in str(caught.value)
    assert caught.value.next_call == {
        "name": "epoch_data",
        "arguments": {"tmin": -1.0, "tmax": 3.0},
    }
    assert not [e for e in h.study.log if e["op"] == "tfr"]  # a refused call is not logged


def test_what_the_user_can_fix_is_refused_clearly(study: dict[str, Any]) -> None:
    data = study["data"]
    bad = [
        ({"baseline": [-1.5, -0.5]}, r"baseline \[-1.5, -0.5\] s is not inside the epochs \(-1 to 3 s\)"),
        ({"window": [2.0, 3.5]}, r"window \[2, 3.5\] s is not inside the epochs"),
        ({"bands": [[50, 70]]}, r"band 50-70 Hz reaches above the Nyquist frequency of the epochs \(62.5 Hz\)"),
        ({"bands": ["kappa"]}, "unknown band 'kappa': use one of delta, theta"),
        ({"bands": ["beta"], "freqs": [8, 12]}, "band beta is outside freqs 8-12 Hz"),
        ({"channels": ["C3", "Oz"]}, "unknown channel.s. Oz; the epochs have Fz, FC3"),
        ({"bands": [[1, 4]], "n_cycles": 10}, "lasts 10.00 s, longer than the 4.00 s epochs"),
    ]  # fmt: skip
    for args, message in bad:
        with pytest.raises(ToolException, match=message):
            tfr.time_frequency(data, **args)
    with pytest.raises(ValidationError, match="t0 < t1"):
        TimeFrequencyArgs(window=[2.0, 1.0])
    with pytest.raises(ValidationError):
        TimeFrequencyArgs(bands=[[8.0]])


def test_edge_effects_are_noted_and_stop_ends_early(study: dict[str, Any]) -> None:
    import threading

    data = study["data"]
    result = tfr.time_frequency(data, baseline=[-1.0, 0.0], window=[0.5, 3.0])
    edges = [n for n in result["notes"] if "within half a wavelet" in n]
    assert len(edges) == 2 and "baseline -1-0 s" in edges[0] and "window 0.5-3 s" in edges[1]
    assert not [n for n in tfr.time_frequency(data, bands=["mu"])["notes"] if "half a wavelet" in n]
    stop = threading.Event()
    stop.set()
    assert tfr.time_frequency(data, stop=stop) == {"rows": [], "notes": ["stopped"]}
