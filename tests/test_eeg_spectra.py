"""band_power (#39): band power per channel and band, absolute (µV², the PSD integrated over the
band) and relative, and the peak frequency, per recording or per condition, through the real
tool on real files; its numbers are MNE's own (Welch and multitaper, recomputed here with plain
MNE), a planted 10 Hz alpha is found where it was planted, and the exported script recomputes
the same numbers while the report shows the table."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

import mne
import numpy as np
import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.analysis import spectra
from brainchat.eeg.io.synthetic import write_demo_set, write_raw
from test_export import Harness, run_script

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
ORACLE = "oracle_alpha_eeg.fif"
ORACLE_CHANNELS = ["Fp1", "Fp2", "F3", "F4", "C3", "C4", "P3", "P4", "O1", "O2", "Fz", "Cz", "Pz"]
DEFAULT = [("delta", 1, 4), ("theta", 4, 8), ("alpha", 8, 13), ("beta", 13, 30), ("gamma", 30, 45)]
WELCH = {"n_fft": 500, "n_per_seg": 500, "n_overlap": 250}  # 2 s windows, half overlapping


def _oracle_recording(path: Path) -> None:
    """60 s of 1/f² background on 13 channels, a strong 10 Hz alpha planted at O1 (weaker at
    O2), standard 10-20 positions."""
    sfreq, n = 250.0, 60 * 250
    rng = np.random.default_rng(7)
    spec = np.fft.rfft(rng.standard_normal((len(ORACLE_CHANNELS), n)), axis=1)
    f = np.fft.rfftfreq(n, 1 / sfreq)
    f[0] = f[1]
    data = np.fft.irfft(spec / f, n=n, axis=1)
    data *= 10.0 / data.std(axis=1, keepdims=True)
    t = np.arange(n) / sfreq
    data[ORACLE_CHANNELS.index("O1")] += 20.0 * np.sin(2 * np.pi * 10.0 * t)
    data[ORACLE_CHANNELS.index("O2")] += 5.0 * np.sin(2 * np.pi * 10.0 * t)
    raw = mne.io.RawArray(data * 1e-6, mne.create_info(ORACLE_CHANNELS, sfreq, "eeg"))
    builtin = mne.channels.get_builtin_montages()
    raw.set_montage("colin27_1020" if "colin27_1020" in builtin else "standard_1020")
    write_raw(raw, path)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-spectra")
    write_demo_set(root, subjects=1, sessions=2, trials=20, effect_size=0.7, seed=3)
    _oracle_recording(root / ORACLE)
    return root


async def _band_power(h: Harness, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool called as the agent calls it: a ToolMessage with its text and artifact."""
    msg = await h.invoke("band_power", args)
    return str(msg.content), msg.artifact["structured"]


@pytest.fixture(scope="module")
def study(data_dir: Path) -> dict[str, Any]:
    """One study through the real tools: band power on the recordings (Welch, multitaper), then
    on the epochs, then the export."""

    async def build() -> dict[str, Any]:
        h = Harness(None, data_dir)
        await h.call("load_data", {"files": FILES})
        out = {"welch": await _band_power(h, {})}
        out["multitaper"] = await _band_power(h, {"method": "multitaper", "channels": ["c3", "C4"]})
        await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
        out["epochs"] = await _band_power(
            h, {"bands": ["mu", {"name": "b", "fmin": 18, "fmax": 26}]}
        )
        out["log"] = list(h.study.log)
        await h.call("export_analysis")
        out["files"] = h.files()
        return out

    return asyncio.run(build())


def _mne_power(psd: np.ndarray, freqs: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Band power in µV² from a PSD in V²/Hz: the bins lo <= f < hi summed times the bin width."""
    return psd[..., (freqs >= lo) & (freqs < hi)].sum(axis=-1) * (freqs[1] - freqs[0]) * 1e12


def _row(result: dict[str, Any], unit: str, channel: str, band: str) -> dict[str, Any]:
    key = result["unit"]
    (row,) = [
        r for r in result["rows"] if (r[key], r["channel"], r["band"]) == (unit, channel, band)
    ]
    return row


def test_welch_band_power_is_mnes_welch_per_recording(study: dict, data_dir: Path) -> None:
    _, result = study["welch"]
    assert result["unit"] == "recording" and result["units"] == FILES
    assert [(b["name"], b["fmin"], b["fmax"]) for b in result["bands"]] == DEFAULT
    assert result["spectral"] == {"method": "welch", "window": "hamming", "window_s": 2.0,
                                  "resolution_hz": 0.5, **WELCH}  # fmt: skip
    for name in FILES:
        raw = mne.io.read_raw_edf(data_dir / name, preload=True, verbose="error")
        spec = raw.compute_psd(
            method="welch", fmin=1, fmax=45, picks="eeg", verbose="error", **WELCH
        )
        psd, freqs = spec.get_data(), spec.freqs
        total = _mne_power(psd, freqs, 1, 45)
        peak_bins = (freqs >= 7) & (freqs <= 13)
        for band, lo, hi in DEFAULT:
            power = _mne_power(psd, freqs, lo, hi)
            for i, ch in enumerate(raw.ch_names):
                row = _row(result, name, ch, band)
                assert (row["fmin"], row["fmax"]) == (lo, hi)
                assert row["power_uv2"] == pytest.approx(power[i], rel=1e-9)
                assert row["relative"] == pytest.approx(power[i] / total[i], rel=1e-9)
                k = int(np.argmax(psd[i, peak_bins]))
                edge = k in (0, int(peak_bins.sum()) - 1)
                assert row["peak_hz"] == (None if edge else pytest.approx(freqs[peak_bins][k]))
    assert len(result["rows"]) == 2 * 22 * 5


def test_multitaper_band_power_is_mnes_multitaper(study: dict, data_dir: Path) -> None:
    text, result = study["multitaper"]
    sp = result["spectral"]
    raw = mne.io.read_raw_edf(data_dir / FILES[0], preload=True, verbose="error")
    # MNE's default bandwidth (half-bandwidth 4: 8 / duration), per recording as they differ
    assert sp["bandwidth_hz"][FILES[0]] == pytest.approx(8 * raw.info["sfreq"] / raw.n_times)
    assert sp["n_tapers"] == 7 and f"{sp['n_tapers']} DPSS tapers" in text
    psd, freqs = mne.time_frequency.psd_array_multitaper(
        raw.get_data(picks=["C3", "C4"]), raw.info["sfreq"], fmin=1, fmax=45,
        normalization="full", verbose="error",
    )  # fmt: skip
    assert {r["channel"] for r in result["rows"]} == {"C3", "C4"}  # the subset, named in any case
    for band, lo, hi in DEFAULT:
        power = _mne_power(psd, freqs, lo, hi)
        for i, ch in enumerate(["C3", "C4"]):
            assert _row(result, FILES[0], ch, band)["power_uv2"] == pytest.approx(
                power[i], rel=1e-9
            )
    # the same µV² scale as Welch: both are densities in V²/Hz
    welch = _row(study["welch"][1], FILES[0], "C3", "alpha")["power_uv2"]
    assert _row(result, FILES[0], "C3", "alpha")["power_uv2"] == pytest.approx(welch, rel=0.2)


def test_relative_powers_sum_to_at_most_one_and_match(study: dict) -> None:
    _, result = study["welch"]
    for name in FILES:
        for ch in {r["channel"] for r in result["rows"]}:
            rows = [r for r in result["rows"] if (r["recording"], r["channel"]) == (name, ch)]
            rel = [r["relative"] for r in rows]
            assert 0 < min(rel) and sum(rel) <= 1 + 1e-12
            assert sum(rel) == pytest.approx(1.0, abs=1e-9)  # the default bands tile 1-45 Hz
            total = sum(r["power_uv2"] for r in rows)
            for r in rows:
                assert r["relative"] == pytest.approx(r["power_uv2"] / total, rel=1e-9)


def test_the_planted_alpha_is_found_at_its_channel_and_frequency(data_dir: Path) -> None:
    async def run() -> tuple[str, dict[str, Any], bytes | None]:
        h = Harness(None, data_dir)
        await h.call("load_data", {"files": [ORACLE]})
        text, result = await _band_power(h, {"bands": ["alpha", "beta"]})
        return text, result, h.events

    text, result, events = asyncio.run(run())
    alpha = [r for r in result["rows"] if r["band"] == "alpha"]
    top = max(alpha, key=lambda r: r["power_uv2"])
    assert top["channel"] == "O1" and top["peak_hz"] == pytest.approx(10.0, abs=0.5)
    assert sorted(alpha, key=lambda r: -r["power_uv2"])[1]["channel"] == "O2"
    assert f"alpha O1 {spectra._num(top['power_uv2'])} µV²" in text  # the headline
    # 1/f² alone: the maximum in 7-13 Hz is on the range's edge, no peak, and a note says so
    assert _row(result, ORACLE, "Fp1", "alpha")["peak_hz"] is None
    assert any("no peak in 7-13 Hz" in n and "Fp1" in n for n in result["notes"])
    assert "Fp1: alpha" in text and "peak none" in text
    assert any(getattr(e, "png", b"").startswith(b"\x89PNG") for e in events)  # the topomaps


def test_per_condition_from_the_epochs_is_the_mean_of_mnes_epoch_psds(
    study: dict, data_dir: Path
) -> None:
    text, result = study["epochs"]
    assert result["unit"] == "condition" and result["units"] == ["left_hand", "right_hand"]
    raws = [mne.io.read_raw_edf(data_dir / f, preload=True, verbose="error") for f in FILES]
    xs, ys = [], []
    for raw in raws:
        ev, ids = mne.events_from_annotations(raw, verbose="error")
        ep = mne.Epochs(raw, ev, ids, 0.5, 2.5, baseline=None, preload=True, verbose="error")
        xs.append(ep.get_data())
        ys += [{v: k for k, v in ids.items()}[e] for e in ep.events[:, 2]]
    X, y = np.concatenate(xs), np.array(ys)
    n = X.shape[-1]  # 501 samples: the 2 s window is cut to the epoch (500 samples)
    assert result["spectral"]["n_fft"] == min(500, n)
    for cond in ("left_hand", "right_hand"):
        psd, freqs = mne.time_frequency.psd_array_welch(
            X[y == cond], 250.0, fmin=1, fmax=45, n_fft=500, n_per_seg=500, n_overlap=250,
            verbose="error",
        )  # fmt: skip
        mean = psd.mean(axis=0)
        total = _mne_power(mean, freqs, 1, 45)
        for band, lo, hi in (("mu", 8, 13), ("b", 18, 26)):
            power = _mne_power(mean, freqs, lo, hi)
            for i, ch in enumerate(raws[0].ch_names):
                row = _row(result, cond, ch, band)
                assert row["power_uv2"] == pytest.approx(power[i], rel=1e-9)
                assert row["relative"] == pytest.approx(power[i] / total[i], rel=1e-9)
                assert row["n_epochs"] == int((y == cond).sum())
    # the synthetic set's ERD: right-hand imagery lowers mu over C3, left-hand over C4
    mu = {
        (c, ch): _row(result, c, ch, "mu")["power_uv2"]
        for c in result["units"]
        for ch in ("C3", "C4")
    }
    assert mu["right_hand", "C3"] < 0.7 * mu["left_hand", "C3"]
    assert mu["left_hand", "C4"] < 0.7 * mu["right_hand", "C4"]
    assert "[left_hand]" in text and "[right_hand]" in text and "left_hand: mu" in text


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"bands": [{"name": "high", "fmin": 100, "fmax": 200}]}, "Nyquist frequency (125 Hz"),
        ({"channels": ["C3", "Xyz"]}, "unknown channel(s) Xyz: the good EEG channels are Fz, FC3"),
        ({"bands": [{"name": "odd", "fmin": 12, "fmax": 8}]}, "fmin (12 Hz) must be >= 0 and <"),
        ({"bands": ["alpha", "sigma"]}, "unknown band 'sigma': name one of delta 1-4 Hz"),
        ({"source": "epochs"}, "source 'epochs' needs epochs: call epoch_data first"),
        ({"peak_range": [9, 9.5]}, "peak_range 9-9.5 Hz holds fewer than 3 frequency bins"),
    ],
)
def test_bad_input_is_a_clear_tool_error(data_dir: Path, args: dict, said: str) -> None:
    async def run() -> str:
        h = Harness(None, data_dir)
        await h.call("load_data", {"files": FILES[:1]})
        with pytest.raises(ToolException) as err:
            await _band_power(h, args)
        text, _ = await _band_power(h, {"bands": ["alpha"]})  # the study carries on
        assert "largest power per band" in text
        assert [e["op"] for e in h.study.log].count("band_power") == 1  # the failure is not logged
        return str(err.value)

    assert said in asyncio.run(run())


def test_the_tool_returns_text_and_structured_content_and_logs_it(study: dict) -> None:
    text, result = study["welch"]
    assert set(result["rows"][0]) == {"recording", "channel", "band", "fmin", "fmax", "power_uv2",
                                      "relative", "peak_hz"}  # fmt: skip
    assert "µV²" in text and "resolution 0.5 Hz" in text and "n_fft 500" in text
    assert "relative power is its fraction of the power in 1-45 Hz" in text
    for name in FILES:  # the headline: per band the channel with the most power
        for band, _, _ in DEFAULT:
            rows = [r for r in result["rows"] if (r["recording"], r["band"]) == (name, band)]
            top = max(rows, key=lambda r: r["power_uv2"])
            assert f"{band} {top['channel']} {spectra._num(top['power_uv2'])} µV²" in text
    assert "more channel lines in the structured content" in text and len(text) < 4000
    assert "image: band power shown to the user" in text
    logged = [e for e in study["log"] if e["op"] == "band_power"]
    assert [e["result"] for e in logged] == [study[k][1] for k in ("welch", "multitaper", "epochs")]
    assert logged[1]["params"]["method"] == "multitaper"


def test_the_figure_is_a_topomap_with_positions_and_bars_without(data_dir: Path) -> None:
    with_pos = mne.io.read_raw_fif(data_dir / ORACLE, preload=True, verbose="error")
    without = mne.io.read_raw_edf(data_dir / FILES[0], preload=True, verbose="error")
    for raw, positions in ((with_pos, True), (without, False)):
        data = {"raws": [raw], "names": ["x"], "epochs": None, "ica": None}
        result = spectra.band_power(data, bands=["alpha"])
        assert spectra._has_positions(raw.info, raw.ch_names) is positions
        assert spectra.figure(data, result).startswith(b"\x89PNG")


def test_the_report_shows_the_band_power_table(study: dict) -> None:
    page = html.unescape(study["files"][1].read_text())
    assert "<h2>Analyses</h2>" in page and "band power (" in page
    row = _row(study["welch"][1], FILES[0], "C3", "alpha")
    assert "<th>power_uv2</th><th>relative</th><th>peak_hz</th>" in page
    assert f"<td>{row['power_uv2']:.3f}</td><td>{row['relative']:.3f}</td>" in page
    assert study["welch"][1]["summary"] in page


def test_the_exported_script_recomputes_the_same_numbers(study: dict, tmp_path: Path) -> None:
    out = run_script(study["files"][0], tmp_path)
    redone = [a for a in out["analyses"] if a["op"] == "band_power"]
    assert [a["params"] for a in redone] == [
        e["params"] for e in study["log"] if e["op"] == "band_power"
    ]
    for mine, theirs in zip(
        (study[k][1] for k in ("welch", "multitaper", "epochs")), redone, strict=True
    ):
        theirs = theirs["result"]
        assert len(theirs["rows"]) == len(mine["rows"]) > 0
        for a, b in zip(mine["rows"], theirs["rows"], strict=True):
            assert {k: v for k, v in a.items() if not isinstance(v, float)} == {
                k: v for k, v in b.items() if not isinstance(v, float)
            }
            for k in ("power_uv2", "relative", "peak_hz"):
                assert b[k] == pytest.approx(a[k], rel=1e-9)
        assert theirs["spectral"] == mine["spectral"]
