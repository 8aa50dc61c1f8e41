"""The cluster_test tool (#39): cluster-based permutation tests between conditions, checked
against plain MNE (permutation_cluster_test with the same data, threshold, adjacency and seed)
and against the synthetic set's planted ERD.

The oracle: the synthetic recordings lower mu power over C3 during right-hand imagery and over
C4 during left-hand imagery, from 0.3 s after the cue (eeg/io/synthetic.py). With an effect of
0.5 and 40 trials per class, a mu-band test of left against right found a cluster at C3 (left >
right) and one at C4 (left < right), each from ~0.2-0.5 s to past 2 s at p = 1/(n+1), for five
seeds out of five. The ERP (no evoked response was planted) is the control.
"""

from __future__ import annotations

import asyncio
import html
import threading
from pathlib import Path
from typing import Any

import mne
import numpy as np
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from pydantic import ValidationError
from scipy import sparse, stats

from brainchat.eeg.analysis import clusters
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.tools.analysis_kit import analysis_data
from brainchat.eeg.tools.tfr_tool import ClusterTestArgs
from test_export import Harness, run_script

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
MU = {"measure": "tfr", "band": "mu", "n_permutations": 200, "seed": 1}
LEFT = {"C3", "C1", "C5", "FC3", "CP3"}  # the left sensorimotor source's channels
RIGHT = {"C4", "C2", "C6", "FC4", "CP4"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-clusters")
    write_demo_set(root, subjects=1, sessions=2, trials=40, effect_size=0.5, seed=2)
    return root


async def _epoched(data_dir: Path) -> Harness:
    h = Harness(None, data_dir)
    await h.call("load_data", {"files": FILES})
    await h.call("resample_data", {"sfreq": 125})
    await h.call("epoch_data", {"tmin": -1.0, "tmax": 3.0})
    return h


@pytest.fixture(scope="module")
def study(data_dir: Path) -> dict[str, Any]:
    """cluster_test through the real tool (the agent's ToolCall), then the export."""

    async def build() -> dict[str, Any]:
        h = await _epoched(data_dir)
        message = await h.invoke("cluster_test", MU)
        images = h.images()
        await h.call("export_analysis")
        return {"message": message, "images": images, "log": list(h.study.log),
                "files": h.files(), "data": analysis_data(h.study.state)}  # fmt: skip

    return asyncio.run(build())


def result_of(study: dict[str, Any]) -> dict[str, Any]:
    return study["message"].artifact["structured"]


def mne_trials(ep: dict[str, Any], k: int, measure: str) -> Any:
    """One condition's trials as the test expects them: (trials, times, channels)."""
    X = ep["X"][ep["y"] == k]
    if measure == "erp":
        return (X * 1e6).transpose(0, 2, 1)
    freqs = np.arange(8.0, 13.5, 1.0)
    power = mne.time_frequency.tfr_array_morlet(
        X, ep["sfreq"], freqs, n_cycles=freqs / 2, decim=2, output="power"
    )
    times = ep["tmin"] + np.arange(X.shape[2])[::2] / ep["sfreq"]
    keep = (times >= -0.75 - 1e-9) & (times <= 2.75 + 1e-9)  # clear of half a wavelet
    return (10 * np.log10(power.mean(axis=2)[..., keep])).transpose(0, 2, 1)


def plain_mne(Xs: list, n_permutations: int, seed: int, info: Any = None) -> list:
    """(p, statistic sum) of each cluster of MNE's own test, sorted."""
    n_ch, n = Xs[0].shape[2], [len(x) for x in Xs]
    if info is None:
        channels = sparse.csr_matrix((n_ch, n_ch))  # no positions: no spatial neighbours
    else:
        channels, _ = mne.channels.find_ch_adjacency(info, "eeg")
    adjacency = mne.stats.combine_adjacency(Xs[0].shape[1], channels)
    if len(Xs) == 2:
        fun, threshold = mne.stats.ttest_ind_no_p, stats.t.ppf(0.975, sum(n) - 2)
    else:
        fun, threshold = mne.stats.f_oneway, stats.f.ppf(0.95, len(n) - 1, sum(n) - len(n))
    T, found, pvals, _ = mne.stats.permutation_cluster_test(
        Xs, threshold=threshold, n_permutations=n_permutations + 1, tail=0 if len(Xs) == 2 else 1,
        stat_fun=fun, adjacency=adjacency, out_type="mask", rng=seed,
    )  # fmt: skip
    return sorted((float(p), float(T[m].sum())) for m, p in zip(found, pvals, strict=True))


def same_clusters(result: dict[str, Any], want: list) -> None:
    got = sorted((r["p_value"], r["stat_sum"]) for r in result["rows"])
    assert len(got) == len(want) == result["n_clusters"] > 3
    for (p, s), (wp, ws) in zip(got, want, strict=True):
        assert p == wp and s == pytest.approx(ws, rel=1e-9)


@pytest.mark.parametrize("measure", ["erp", "tfr"])
def test_the_clusters_are_mnes(study: dict[str, Any], measure: str) -> None:
    ep = study["data"]["epochs"]
    args = {"measure": measure, "n_permutations": 30, "seed": 3}
    result = clusters.cluster_test(
        study["data"], **args, **({"band": "mu"} if measure == "tfr" else {})
    )
    Xs = [mne_trials(ep, k, measure) for k in (0, 1)]
    same_clusters(result, plain_mne(Xs, 30, 3))
    assert result["threshold"] == pytest.approx(stats.t.ppf(0.975, 78), rel=1e-12)
    assert not result["spatial_adjacency"]
    assert all(r["n_channels"] == 1 for r in result["rows"])  # no positions: one channel each


def test_three_conditions_are_an_f_test_and_positions_make_neighbours(
    study: dict[str, Any],
) -> None:
    ep = study["data"]["epochs"]
    three = {**ep, "y": np.arange(len(ep["y"])) % 3, "classes": ["a", "b", "c"]}
    result = clusters.cluster_test({"epochs": three}, n_permutations=20, seed=2)
    assert result["stat"] == "F" and result["tail"] == 1 and "direction" not in result["rows"][0]
    same_clusters(result, plain_mne([mne_trials(three, k, "erp") for k in range(3)], 20, 2))
    with pytest.raises(ToolException, match="one-tailed: use tail=1"):
        clusters.cluster_test({"epochs": three}, tail=0)
    info = ep["info"].copy()
    info.set_montage("standard_1005", verbose="error")
    placed = {"epochs": {**ep, "info": info}}
    result = clusters.cluster_test(placed, measure="erp", n_permutations=20, seed=2)
    assert result["spatial_adjacency"] and any(r["n_channels"] > 1 for r in result["rows"])
    same_clusters(result, plain_mne([mne_trials(ep, k, "erp") for k in (0, 1)], 20, 2, info))
    assert "find_ch_adjacency" in " ".join(result["notes"])


def significant(result: dict[str, Any], channel: str) -> list[dict[str, Any]]:
    return [r for r in result["rows"] if r["significant"] and channel in r["channels"].split()]


def test_the_imagery_gives_clusters_at_c3_and_c4(study: dict[str, Any]) -> None:
    result = result_of(study)
    for channel, way in (("C3", "left_hand > right_hand"), ("C4", "left_hand < right_hand")):
        found = significant(result, channel)
        assert found, channel
        best = max(found, key=lambda r: abs(r["stat_sum"]))
        assert best["direction"] == way
        assert best["p_value"] == pytest.approx(1 / 201) and best["p_value"] < 0.05
        assert best["t_start_ms"] < 1000 and best["t_end_ms"] > 1500  # within the imagery
        assert (best["f_low_hz"], best["f_high_hz"]) == (8.0, 13.0)
    assert result["rows"][0]["channels"] in LEFT | RIGHT
    assert result["rows"][0]["significant"]  # significant ones first
    info = study["data"]["epochs"]["info"].copy()
    info.set_montage("standard_1005", verbose="error")
    placed = {"epochs": {**study["data"]["epochs"], "info": info}}
    spatial = clusters.cluster_test(placed, **MU)
    for channel, side in (("C3", LEFT), ("C4", RIGHT)):
        best = max(significant(spatial, channel), key=lambda r: r["n_channels"])
        assert best["n_channels"] > 1 and len(set(best["channels"].split()) & side) >= 3


def test_no_evoked_response_gives_no_significant_erp_cluster(study: dict[str, Any]) -> None:
    result = clusters.cluster_test(study["data"], measure="erp", n_permutations=100, seed=1)
    assert result["n_clusters"] > 0 and result["n_significant"] == 0


def test_the_tool_returns_text_structured_content_a_figure_and_a_log_entry(
    study: dict[str, Any],
) -> None:
    message = study["message"]
    assert isinstance(message, ToolMessage)
    result, text = result_of(study), message.content
    top = result["rows"][0]
    assert (
        f"#1 significant: {top['channels']}; {top['t_start_ms']:g}-{top['t_end_ms']:g} ms, 8-13 Hz;"
        in text
    )
    assert f"t sum {top['stat_sum']:.1f}; p = {top['p_value']:.4g}" in text
    assert "left_hand (40 trials) vs right_hand (40 trials)" in text
    assert "cluster-level family-wise error by permutation (Maris & Oostenveld 2007)" in text
    assert "smallest possible p is 1/201" in text and "seed 1" in text
    assert f"|t| > {stats.t.ppf(0.975, 78):.3f} (df 78), the t of p < 0.05" in text
    assert "trials are treated as independent observations" in text
    assert "clusters form over time (and frequency) within each channel" in text
    assert len(text) < 6000
    assert [i.title for i in study["images"]] == ["cluster test"]
    [entry] = [e for e in study["log"] if e["op"] == "cluster"]
    assert entry["result"] == result and entry["params"]["n_permutations"] == 200
    m = result["map"]
    assert len(m["stat"]) == 22 and len(m["clusters"]) == result["n_significant"]


def test_the_script_recomputes_the_same_clusters_and_the_report_shows_them(
    study: dict[str, Any], tmp_path: Path
) -> None:
    script, report = study["files"]
    out = run_script(script, tmp_path)
    [rerun] = [a["result"] for a in out["analyses"] if a["op"] == "cluster"]
    mine = result_of(study)
    assert len(rerun["rows"]) == len(mine["rows"])
    for a, b in zip(rerun["rows"], mine["rows"], strict=True):
        assert (a["channels"], a["t_start_ms"], a["p_value"]) == (
            b["channels"],
            b["t_start_ms"],
            b["p_value"],
        )
        assert a["stat_sum"] == pytest.approx(b["stat_sum"], rel=1e-9)
    page = html.unescape(report.read_text())
    assert "<th>stat_sum</th><th>p_value</th>" in page
    top = mine["rows"][0]
    assert f"<td>1</td><td>{top['channels']}</td><td>1</td>" in page
    assert "Maris &amp; Oostenveld" in report.read_text() and mine["summary"] in page


async def test_what_the_user_can_fix_is_refused_clearly(
    study: dict[str, Any], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = study["data"]
    bad = [
        ({"conditions": ["left_hand", "feet"]}, r"unknown condition\(s\) feet; the epochs have \['left_hand', 'right_hand'\]"),
        ({"measure": "tfr", "band": [50, 70]}, "reaches above the Nyquist frequency of the epochs .62.5 Hz."),
        ({"window": [-2.0, 1.0]}, r"window \[-2, 1\] s is not inside the epochs \(-1 to 3 s\)"),
        ({"channels": ["Oz"]}, "unknown channel.s. Oz"),
    ]  # fmt: skip
    for args, message in bad:
        with pytest.raises(ToolException, match=message):
            clusters.cluster_test(data, **args)
    ep = data["epochs"]
    one = {**ep, "X": ep["X"][ep["y"] == 0], "y": ep["y"][ep["y"] == 0], "classes": ["left_hand"]}
    with pytest.raises(ToolException, match="a test between conditions needs two or more"):
        clusters.cluster_test({"epochs": one})
    with monkeypatch.context() as m:
        m.setattr(
            clusters, "CLU_MAX_BYTES", 10 * 1024**2
        )  # the full map needs ~220 MiB here, the band 6
        with pytest.raises(
            ToolException, match=r"would hold 0.2 GiB of trials \(at most [\d.]+\): give a band"
        ):
            clusters.cluster_test(data, measure="tfr")
        assert clusters.cluster_test(data, measure="tfr", band="mu", n_permutations=1)["rows"]
    h = await _epoched(data_dir)
    with pytest.raises(ToolException, match="needs two or more; got \\['left_hand'\\]"):
        await h.call("cluster_test", {"conditions": ["left_hand", "left_hand"]})
    assert not [e for e in h.study.log if e["op"] == "cluster"]
    for args in ({"n_permutations": 0}, {"conditions": ["left_hand"]}, {"tail": 2}):
        with pytest.raises(ValidationError):
            ClusterTestArgs(**args)


class StopAfter:
    """A stop event that is set after `n` looks: the test must look while it permutes."""

    def __init__(self, n: int) -> None:
        self.looks, self.n = 0, n

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks > self.n


@pytest.mark.parametrize("measure", ["erp", "tfr"])
def test_stop_ends_the_test_early(study: dict[str, Any], measure: str) -> None:
    stop = threading.Event()
    stop.set()
    args = {"measure": measure, "n_permutations": 10_000}
    assert clusters.cluster_test(study["data"], stop=stop, **args) == {
        "rows": [],
        "notes": ["stopped"],
    }
    later = StopAfter(40)  # past the power's chunks and the observed statistic: mid-permutation
    assert clusters.cluster_test(study["data"], stop=later, **args)["notes"] == ["stopped"]
    assert later.looks == 41
