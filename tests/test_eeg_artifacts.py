"""Artifacts (#39): find_artifacts finds planted bad channels and segments (a flat channel, a
channel with strong high-frequency noise, a 2 s burst of 500 µV) and only them; ica_find_artifacts
names the component of planted blinks against an EOG channel and says so plainly when there is no
EOG/ECG channel; mark_bad_channels and annotate_bad_segments (destructive) change the data exactly
as MNE's interpolate_bads / drop_channels / BAD_ annotations do; a replayed log rebuilds the same
data, and the exported script redoes the steps and gets the same numbers."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

import mne
import numpy as np
import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.eeg.preprocessing.preprocessing import montage_name
from brainchat.tools.registry import flags_of
from test_export import Harness, run_script

ORACLE = "sub-01_ses-01_task-mi_eeg.fif"  # flat Fz, noisy C4, a burst on FC1/FCz/FC2
BLINKS = "sub-02_ses-01_task-mi_eeg.fif"  # blinks in Fp1/Fp2/Fz..., an EOG channel
NAMED = "sub-03_ses-01_task-mi_eeg.fif"  # the same, its EOG channel typed EEG (found by name)
BURST = ["FC1", "FCz", "FC2"]
SFREQ = 250.0
FIRST = 250  # the oracle's first sample


def _burst_start(raw: mne.io.BaseRaw) -> int:
    """A whole second inside the third trial's 0.5-2.5 s epoch (so that epoch overlaps it)."""
    return int(np.floor(raw.annotations.onset[2] + 1.0))


def _oracle(path: Path) -> dict[str, Any]:
    raw = make_recording(subject=1, trials=12, seed=2)
    data, idx = raw.get_data(), {c: i for i, c in enumerate(raw.ch_names)}
    rng = np.random.default_rng(0)
    data[idx["Fz"]] = 0.05e-6 * rng.standard_normal(data.shape[1])  # flat: a loose contact
    spec = np.fft.rfft(rng.standard_normal(data.shape[1]))
    spec[np.fft.rfftfreq(data.shape[1], 1 / SFREQ) < 40] = 0  # 40-125 Hz noise (EMG, mains)
    noise = np.fft.irfft(spec, n=data.shape[1])
    data[idx["C4"]] += 15e-6 * noise / noise.std()
    start = _burst_start(raw)
    t = np.arange(int(2 * SFREQ)) / SFREQ
    for ch in BURST:
        data[idx[ch], int(start * SFREQ) : int((start + 2) * SFREQ)] += 500e-6 * np.sin(
            2 * np.pi * 3 * t
        )
    # its first sample is not sample 0 (a recording cut from a longer one) and it has no
    # measurement date: annotation onsets count from the first sample's time
    out = mne.io.RawArray(data, raw.info, first_samp=FIRST, verbose="error")
    out.set_annotations(raw.annotations)
    write_raw(out, path)
    return {"start": start}


def _blinks(path: Path, named: Path) -> np.ndarray:
    """A recording with Fp1/Fp2, an EOG channel, and 200 µV blinks that spread over the frontal
    channels (and a copy whose EOG channel is typed EEG); returns the blink signal (volts)."""
    raw = make_recording(subject=2, trials=8, seed=4)
    n, rng = raw.n_times, np.random.default_rng(1)
    blink, t = np.zeros(n), np.arange(n) / SFREQ
    for at in np.cumsum(rng.uniform(2.0, 4.0, int(raw.times[-1] / 2))):
        if at < raw.times[-1] - 1:
            blink += 200e-6 * np.exp(-0.5 * ((t - at) / 0.08) ** 2)
    fp = 10e-6 * rng.standard_normal((2, n)).cumsum(axis=1) / np.sqrt(n)  # slow frontal drift
    data = np.vstack([raw.get_data(), fp + blink, blink * 1.2 + 5e-6 * rng.standard_normal(n)])
    weights = {"Fp1": 1.0, "Fp2": 1.0, "Fz": 0.6, "FC1": 0.3, "FCz": 0.3, "FC2": 0.3}
    names = [*raw.ch_names, "Fp1", "Fp2", "EOG"]
    for ch, w in weights.items():
        if ch not in ("Fp1", "Fp2"):
            data[names.index(ch)] += w * blink
    info = mne.create_info(names, SFREQ, ["eeg"] * (len(names) - 1) + ["eog"])
    out = mne.io.RawArray(data, info, verbose="error")
    out.set_annotations(raw.annotations)
    write_raw(out, path)
    out.set_channel_types({"EOG": "eeg"})
    write_raw(out, named)
    return blink


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("eeg-artifacts")


@pytest.fixture(scope="module")
def planted(data_dir: Path) -> dict[str, Any]:
    return {**_oracle(data_dir / ORACLE), "blink": _blinks(data_dir / BLINKS, data_dir / NAMED)}


async def _analysis(h: Harness, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool called as the agent calls it: its text and its structured result."""
    msg = await h.invoke(name, args)
    return str(msg.content), msg.artifact["structured"]


def _mne_raw(path: Path) -> mne.io.BaseRaw:
    return mne.io.read_raw_fif(path, preload=True, verbose="error")


@pytest.fixture(scope="module")
def cleaned(data_dir: Path, planted: dict[str, Any]) -> dict[str, Any]:
    """Scan, then remove what it found (C4 dropped, Fz interpolated, the burst annotated), scan
    again, epoch, export."""

    async def build() -> dict[str, Any]:
        h = Harness(None, data_dir)
        await h.call("load_data", {"files": [ORACLE]})
        out: dict[str, Any] = {"scan": await _analysis(h, "find_artifacts", {})}
        out["no_montage"] = await _fails(h, "mark_bad_channels", {"channels": ["Fz"]})
        nowhere = {"segments": [{"file": "nope.fif", "onset": 1.0, "duration": 1.0}]}
        out["no_file"] = await _fails(h, "annotate_bad_segments", nowhere)
        await h.call("set_montage", {"name": "standard_1005"})
        await h.call("mark_bad_channels", {"channels": ["C4"], "action": "drop"})
        await h.call("mark_bad_channels", {"channels": ["fz"]})  # from the channels left
        segments = out["scan"][1]["proposal"]["segments"]
        out["annotated"] = await h.call("annotate_bad_segments", {"segments": segments})
        out["raw"] = h.study.state.raws[0].copy()
        low = {"ptp_uv": 80.0, "noisy_z": 1.5}  # many rows: the data's fingerprint
        out["rescan"] = await _analysis(h, "find_artifacts", low)
        await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
        out["eps"], out["log"] = h.study.state.eps, list(h.study.log)
        await h.call("export_analysis")
        out["files"], out["tools"] = h.files(), h.tools
        return out

    return asyncio.run(build())


async def _fails(h: Harness, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(ToolException) as err:
        await h.call(name, args)
    return str(err.value)


def test_the_scan_finds_the_planted_channels_and_burst_and_nothing_else(
    cleaned: dict[str, Any], planted: dict[str, Any], data_dir: Path
) -> None:
    text, result = cleaned["scan"]
    rows = result["rows"]
    channels = {(r["kind"], r["channel"]) for r in rows if r["kind"].endswith("channel")}
    assert ("flat channel", "Fz") in channels and ("noisy channel", "C4") in channels
    assert {c for _, c in channels} == {"Fz", "C4"}  # the 20 clean channels are not flagged
    (span,) = [r for r in rows if r["kind"].endswith("segment")]
    assert span["kind"] == "high peak-to-peak segment" and span["recording"] == ORACLE
    assert abs(span["onset_s"] - planted["start"]) <= 1.0 and abs(span["duration_s"] - 2) <= 1.0
    assert span["channel"] == ", ".join(BURST)
    raw = _mne_raw(data_dir / ORACLE)  # the figures are plain numpy on the file's samples
    fz = next(r for r in rows if r["kind"] == "flat channel")
    assert fz["value"] == round(float(np.std(raw.get_data(picks=["Fz"])[0] * 1e6)), 4)
    a, b = int(span["onset_s"] * SFREQ), int((span["onset_s"] + span["duration_s"]) * SFREQ)
    burst = raw.get_data(picks=BURST, start=a, stop=b) * 1e6
    windows = burst.reshape(len(BURST), -1, int(SFREQ))
    assert span["value"] == round(float(np.ptp(windows, axis=2).max()), 4)
    assert 'mark_bad_channels(channels=["Fz", "C4"])' in text and "set_montage" in text
    onset = span["onset_s"]
    assert (
        f'annotate_bad_segments(segments=[{{"file": "{ORACLE}", "onset": {onset}, '
        f'"duration": {span["duration_s"]}}}])' in text
    )
    assert "nothing was removed" in text
    assert "Fz" in text and "C4" in text and f"{span['value']:.1f} µV" in text


def test_unfit_removals_say_what_to_do(cleaned: dict[str, Any]) -> None:
    assert "set_montage" in cleaned["no_montage"] and "action='drop'" in cleaned["no_montage"]
    assert "'nope.fif' is not loaded" in cleaned["no_file"] and ORACLE in cleaned["no_file"]


def test_removal_changes_the_data_as_mne_does(cleaned: dict[str, Any], data_dir: Path) -> None:
    ref = _mne_raw(data_dir / ORACLE)
    ref.set_montage(montage_name("standard_1005"), match_case=False, on_missing="ignore")
    before = ref.get_data(picks=["Fz"])
    ref.drop_channels(["C4"])
    ref.info["bads"] = ["Fz"]
    ref.interpolate_bads(reset_bads=True, verbose="error")
    got = cleaned["raw"]
    assert got.ch_names == ref.ch_names and "C4" not in got.ch_names
    assert np.array_equal(got.get_data(), ref.get_data())  # identical numbers
    assert not np.allclose(got.get_data(picks=["Fz"]), before)  # Fz was really replaced
    assert got.info["bads"] == []


def test_bad_segments_make_epoching_drop_the_overlapping_epochs(
    cleaned: dict[str, Any], planted: dict[str, Any], data_dir: Path
) -> None:
    got = cleaned["raw"]
    assert got.first_samp == FIRST and got.info["meas_date"] is None
    bad = [a for a in got.annotations if a["description"].startswith("BAD")]
    assert [(a["onset"] - got.first_time, a["duration"]) for a in bad] == [
        (float(planted["start"]), 2.0)
    ]
    raw = _mne_raw(data_dir / ORACLE)
    ev, ids = mne.events_from_annotations(raw, verbose="error")
    assert np.array_equal(ev, mne.events_from_annotations(got, verbose="error")[0])  # unmoved
    onsets = (ev[:, 0] - FIRST) / SFREQ
    hit = (onsets + 0.5 < planted["start"] + 2) & (onsets + 2.5 > planted["start"])
    assert hit.sum() >= 1
    eps = cleaned["eps"]
    assert len(eps.y) == len(ev) - int(hit.sum()) and eps.dropped == int(hit.sum())
    kept = eps.trials.sample[eps.trials.epoch >= 0]
    assert np.array_equal(kept, ev[~hit, 0])
    # MNE's default (reject_by_annotation=True) on the same span drops the same epochs (an
    # Annotations without orig_time counts from the first sample)
    raw.set_annotations(mne.Annotations([planted["start"]], [2.0], ["BAD_x"]))
    mne_epochs = mne.Epochs(raw, ev, ids, 0.5, 2.5, baseline=None, verbose="error")
    assert np.array_equal(mne_epochs.drop_bad().events[:, 0], kept)


def test_the_removal_tools_are_destructive_and_the_scans_read_only(
    cleaned: dict[str, Any],
) -> None:
    tools = cleaned["tools"]
    assert flags_of(tools["mark_bad_channels"]).destructive
    assert flags_of(tools["annotate_bad_segments"]).destructive
    assert flags_of(tools["find_artifacts"]).read_only
    assert flags_of(tools["ica_find_artifacts"]).read_only
    for name in ("mark_bad_channels", "annotate_bad_segments"):
        assert "find_artifacts" in tools[name].description


async def test_a_replayed_log_rebuilds_the_same_data(
    cleaned: dict[str, Any], data_dir: Path
) -> None:
    second = Harness(None, data_dir)
    second.study.pending = list(cleaned["log"])
    await second.call("get_study_state")
    assert np.array_equal(second.study.state.eps.X, cleaned["eps"].X)
    raw = second.study.state.raws[0]
    assert raw.ch_names == cleaned["raw"].ch_names
    assert np.array_equal(raw.get_data(), cleaned["raw"].get_data())
    assert list(raw.annotations.description) == list(cleaned["raw"].annotations.description)
    assert np.array_equal(raw.annotations.onset, cleaned["raw"].annotations.onset)


def test_the_script_redoes_the_removal_and_the_report_lists_it(
    cleaned: dict[str, Any], data_dir: Path
) -> None:
    script, report = cleaned["files"]
    out = run_script(script, data_dir)
    first, second = out["analyses"]
    assert first["result"]["rows"] == cleaned["scan"][1]["rows"]
    assert second["result"]["rows"] == cleaned["rescan"][1]["rows"]  # after the removal
    assert second["params"]["ptp_uv"] == 80.0
    rescan_text, rescan = cleaned["rescan"]
    assert "Fz" in {r["channel"] for r in rescan["rows"]}  # its z: the interpolated values
    assert len(rescan["rows"]) >= 3 and "C4" not in {r["channel"] for r in rescan["rows"]}
    assert not any(r["kind"] == "flat channel" for r in rescan["rows"])  # Fz was interpolated
    burst = cleaned["scan"][1]["rows"][-1]["onset_s"]
    assert not any(r["onset_s"] == burst for r in rescan["rows"])
    assert "bad segment(s) already annotated BAD" in rescan_text  # not proposed again
    assert out["epochs"]["n"] == len(cleaned["eps"].y)
    page = html.unescape(report.read_text())
    for label in ("drop bad C4", "interpolate bad fz", "bad segments: 1 span(s), 2.0 s"):
        assert label in page
    assert "flat channel" in page and "high peak-to-peak segment" in page


@pytest.fixture(scope="module")
def ica(data_dir: Path, planted: dict[str, Any]) -> dict[str, Any]:
    """ICA on the blink recording, matched against its EOG channel, exported; and ICA on the
    oracle recording (no EOG/ECG channel)."""

    async def build() -> dict[str, Any]:
        h = Harness(None, data_dir)
        await h.call("load_data", {"files": [BLINKS]})
        await h.call("ica_fit", {"n_components": 15, "seed": 0})
        out: dict[str, Any] = {"match": await _analysis(h, "ica_find_artifacts", {})}
        out["proxy"] = await _analysis(h, "ica_find_artifacts", {"eog_channels": ["Fp1"]})
        out["ica"], out["raw"] = h.study.state.ica, h.study.state.raws[0]
        named = Harness(None, data_dir)  # exported: the report's PSD figure fails on an EOG-typed
        await named.call("load_data", {"files": [NAMED]})  # channel (plots.psd_by_group)
        await named.call("ica_fit", {"n_components": 15, "seed": 0})
        out["named"] = await _analysis(named, "ica_find_artifacts", {})
        out["named_ica"], out["named_raw"] = named.study.state.ica, named.study.state.raws[0]
        out["named_proxy"] = await _analysis(named, "ica_find_artifacts", {"eog_channels": ["Fp1"]})
        await named.call("export_analysis")
        out["files"] = named.files()
        plain = Harness(None, data_dir)
        await plain.call("load_data", {"files": [ORACLE]})
        await plain.call("ica_fit", {"n_components": 8, "seed": 0})
        out["none"] = await _analysis(plain, "ica_find_artifacts", {})
        return out

    return asyncio.run(build())


def test_ica_names_the_blink_component(ica: dict[str, Any], planted: dict[str, Any]) -> None:
    text, result = ica["match"]
    sources = ica["ica"].get_sources(ica["raw"]).get_data()
    truth = [abs(np.corrcoef(s, planted["blink"])[0, 1]) for s in sources]
    blink = int(np.argmax(truth))
    assert max(truth) > 0.9
    eog = [r for r in result["rows"] if r["matched"] == "EOG"]
    assert [r["channel"] for r in eog] == ["EOG"] * 15
    assert eog[0]["component"] == blink and eog[0]["flagged"]  # highest score: the blinks
    assert result["proposal"]["exclude"][0] == blink
    found, scores = ica["ica"].find_bads_eog(ica["raw"], ch_name="EOG", verbose="error")
    assert {r["component"]: r["score"] for r in eog} == {
        k: round(float(s), 6) for k, s in enumerate(scores)
    }
    assert result["proposal"]["exclude"] == [int(k) for k in found]
    assert f"ica_apply(exclude={result['proposal']['exclude']})" in text
    assert f"component {blink} r={eog[0]['score']:.3f} (flagged)" in text


def test_a_frontal_channel_is_an_eog_proxy_only_when_named(ica: dict[str, Any]) -> None:
    text, result = ica["proxy"]
    assert {r["channel"] for r in result["rows"]} == {"Fp1"}
    assert "Fp1 is an EEG channel used as an EOG proxy" in text


def test_without_eog_or_ecg_channels_ica_says_so(ica: dict[str, Any]) -> None:
    text, result = ica["none"]
    assert result["rows"] == [] and result["proposal"]["exclude"] == []
    assert "no EOG or ECG channel" in text and "nothing was guessed" in text
    assert "ica_apply" not in text


def test_a_channel_named_eog_is_matched_too(ica: dict[str, Any], planted: dict[str, Any]) -> None:
    text, result = ica["named"]
    assert {r["channel"] for r in result["rows"]} == {"EOG"} and "proxy" not in text
    sources = ica["named_ica"].get_sources(ica["named_raw"]).get_data()
    truth = [abs(np.corrcoef(s, planted["blink"])[0, 1]) for s in sources]
    assert result["rows"][0]["component"] == int(np.argmax(truth)) and result["rows"][0]["flagged"]


def test_the_script_redoes_the_ica_match(ica: dict[str, Any], data_dir: Path) -> None:
    script, _ = ica["files"]
    out = run_script(script, data_dir)
    got = out["analyses"]
    want = [ica["named"][1], ica["named_proxy"][1]]
    for g, w in zip(got, want, strict=True):
        assert [r["component"] for r in g["result"]["rows"]] == [r["component"] for r in w["rows"]]
        np.testing.assert_allclose(
            [r["score"] for r in g["result"]["rows"]], [r["score"] for r in w["rows"]], atol=1e-9
        )
        assert g["result"]["proposal"] == w["proposal"]
