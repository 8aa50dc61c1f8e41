"""Cluster-based permutation tests between conditions (MNE's permutation_cluster_test) on the
trials' ERP amplitudes or time-frequency power, over channels x time (x frequency)."""

from __future__ import annotations

from typing import Any

from brainchat.eeg.analysis.tfr import (  # the script gets their source with this module's
    TFR_BANDS,  # noqa: F401  (read by _tfr_bands)
    TFR_BYTES,  # noqa: F401  (read by _tfr_chunks)
    _tfr_bands,
    _tfr_chunks,
    _tfr_cycles,
    _tfr_edge,
    _tfr_freqs,
    _tfr_picks,
    _tfr_png,
    _tfr_refuse,
    _tfr_window,
)

CLU_ALPHA = 0.05  # the cluster-forming threshold's p and the p a cluster is called significant at
CLU_MAX_ROWS = 200  # clusters listed (the most significant first); the rest are counted
CLU_MAP_COLUMNS = 200  # time columns of the statistic map kept for the figure
CLU_MAX_BYTES = 2 * 1024**3  # the trials as the test holds them (twice: MNE stacks the groups)


def _clu_conditions(ep: dict, asked: list | None) -> list:
    """The class indices of the conditions compared: two or more, each with two or more trials."""
    import numpy as np

    classes = list(ep["classes"])
    names = list(dict.fromkeys(asked or classes))
    unknown = [c for c in names if c not in classes]
    if unknown:
        _tfr_refuse(f"unknown condition(s) {', '.join(unknown)}; the epochs have {classes}")
    if len(names) < 2:
        _tfr_refuse(
            f"a test between conditions needs two or more; got {names} (the epochs have "
            f"{classes}): name two, or re-epoch with the events of two or more classes"
        )
    few = [c for c in names if (np.asarray(ep["y"]) == classes.index(c)).sum() < 2]
    if few:
        _tfr_refuse(f"condition(s) {', '.join(few)}: fewer than two trials, nothing to test")
    return [classes.index(c) for c in names]


def _clu_threshold(p: dict, stat: str, tail: int, sizes: list) -> float:
    """The cluster-forming threshold: the t or F of p < 0.05 unless a value is given."""
    from scipy import stats

    if p.get("threshold") is not None:
        value = abs(float(p["threshold"]))
    elif stat == "t":
        df = sum(sizes) - 2
        value = float(stats.t.ppf(1 - CLU_ALPHA / (2 if tail == 0 else 1), df))
    else:
        value = float(stats.f.ppf(1 - CLU_ALPHA, len(sizes) - 1, sum(sizes) - len(sizes)))
    return -value if tail == -1 else value


def _clu_setup(ep: dict, p: dict) -> dict:
    """The checked parameters: conditions, channels, window, frequencies, statistic, threshold."""
    import numpy as np

    sfreq, tmin = float(ep["sfreq"]), float(ep["tmin"])
    n_t = ep["X"].shape[2]
    tmax, tfr = tmin + (n_t - 1) / sfreq, p.get("measure") == "tfr"
    cfg: dict = {"measure": "tfr" if tfr else "erp", "sfreq": sfreq, "band": None, "edge": 0.0}
    cfg["conditions"] = _clu_conditions(ep, p.get("conditions"))
    cfg["picks"] = _tfr_picks(list(ep["info"]["ch_names"]), p.get("channels"))
    cfg["decim"] = int(p.get("decim") or max(1, int(sfreq // 50))) if tfr else 1
    if tfr:
        if p.get("band") is not None:
            cfg["band"] = _tfr_bands([p["band"]], sfreq / 2)[0]
            lo, hi = cfg["band"][1], cfg["band"][2]
        else:
            lo, hi = p.get("freqs") or [4.0, min(40.0, sfreq / 2)]
        cfg["freqs"] = _tfr_freqs(float(lo), float(hi), float(p.get("fstep") or 1.0), sfreq / 2)
        cfg["cycles"] = _tfr_cycles(cfg["freqs"], p.get("n_cycles"))
        cfg["edge"] = _tfr_edge(cfg["freqs"], cfg["cycles"])
        cfg["method"], cfg["time_bandwidth"] = "morlet", 4.0
    window = p.get("window")
    if window is None and 2 * cfg["edge"] < tmax - tmin:
        window = [round(tmin + cfg["edge"], 6), round(tmax - cfg["edge"], 6)]
    cfg["window"] = _tfr_window(window or [tmin, tmax], tmin, tmax, cfg["edge"], "window")
    times = tmin + np.arange(0, n_t, cfg["decim"]) / sfreq
    cfg["tsel"] = (times >= cfg["window"][0] - 1e-9) & (times <= cfg["window"][1] + 1e-9)
    if cfg["tsel"].sum() < 1:
        _tfr_refuse(f"window {cfg['window']} s holds no time point of the epochs")
    cfg["times"] = times[cfg["tsel"]]
    cfg["stat"] = "t" if len(cfg["conditions"]) == 2 else "F"
    tail = p.get("tail")
    cfg["tail"] = int(tail) if tail is not None else (0 if cfg["stat"] == "t" else 1)
    if cfg["stat"] == "F" and cfg["tail"] != 1:
        _tfr_refuse("an F-test over three or more conditions is one-tailed: use tail=1")
    y = np.asarray(ep["y"])
    sizes = [int((y == k).sum()) for k in cfg["conditions"]]
    cfg["given"] = p.get("threshold") is not None
    cfg["threshold"] = _clu_threshold(p, cfg["stat"], cfg["tail"], sizes)
    cfg["df"] = (
        [sum(sizes) - 2] if cfg["stat"] == "t" else [len(sizes) - 1, sum(sizes) - len(sizes)]
    )
    cfg["n_permutations"], cfg["seed"] = (
        int(p.get("n_permutations") or 1000),
        int(p.get("seed") or 0),
    )
    return cfg


def _clu_trials(ep: dict, k: int, cfg: dict, stop: Any) -> Any:
    """One condition's trials as MNE's test reads them: (trials, [freqs,] times, channels);
    ERP amplitudes in µV, or power in dB (10 log10 V²), over a band or per frequency."""
    import numpy as np

    X = ep["X"][np.asarray(ep["y"]) == k][:, cfg["picks"]]
    if cfg["measure"] == "erp":
        return np.ascontiguousarray((X[:, :, cfg["tsel"]] * 1e6).transpose(0, 2, 1))
    parts = []
    for power in _tfr_chunks(X, cfg["sfreq"], cfg["freqs"], cfg["cycles"], cfg, stop):
        power = power[..., cfg["tsel"]]
        if cfg["band"] is not None:
            power = power.mean(axis=2)  # (trials, channels, times)
        parts.append(10.0 * np.log10(power))
    if sum(len(x) for x in parts) < len(X):
        return None
    out = np.concatenate(parts)
    axes = (0, 2, 1) if out.ndim == 3 else (0, 2, 3, 1)
    return np.ascontiguousarray(out.transpose(axes))


def _clu_adjacency(info: Any, picks: list, lattice: tuple) -> tuple:
    """The adjacency over (freqs,) times and channels, and whether channels are neighbours by
    their positions (MNE's find_ch_adjacency) or not at all (no positions, or under 4)."""
    import mne
    import numpy as np
    from scipy import sparse

    sub = mne.pick_info(info, picks)
    locs = np.array([ch["loc"][:3] for ch in sub["chs"]])
    spatial = len(picks) >= 4 and bool(np.isfinite(locs).all() and (np.abs(locs).sum(1) > 0).all())
    if spatial:
        with mne.utils.use_log_level("error"):
            channels, _ = mne.channels.find_ch_adjacency(sub, "eeg")
    else:
        channels = sparse.csr_matrix((len(picks), len(picks)))
    return mne.stats.combine_adjacency(*lattice, channels), spatial


def _clu_need(ep: dict, cfg: dict) -> None:
    """Refuse a test whose trials (held twice) would not fit in CLU_MAX_BYTES."""
    import numpy as np

    n = int(np.isin(np.asarray(ep["y"]), cfg["conditions"]).sum())
    n_f = len(cfg["freqs"]) if cfg["measure"] == "tfr" and cfg["band"] is None else 1
    need = 2 * 8 * n * len(cfg["picks"]) * n_f * len(cfg["times"])
    if need > CLU_MAX_BYTES:
        _tfr_refuse(
            f"the test would hold {need / 1024**3:.1f} GiB of trials (at most "
            f"{CLU_MAX_BYTES / 1024**3:g}): give a band, fewer frequencies (freqs, fstep), "
            "a shorter window, fewer channels or a larger decim"
        )


def _clu_permute(Xs: list, cfg: dict, adjacency: Any, stop: Any) -> Any:
    """MNE's cluster permutation test (n permutations + the observed labelling); None: stopped."""
    import warnings

    import mne

    fun = mne.stats.ttest_ind_no_p if cfg["stat"] == "t" else mne.stats.f_oneway

    def stat(*groups: Any) -> Any:
        if stop is not None and stop.is_set():  # called once per permutation
            raise InterruptedError("stopped")
        return fun(*groups)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "No clusters found" is an answer, said in the text
        try:
            return mne.stats.permutation_cluster_test(
                Xs, threshold=cfg["threshold"], n_permutations=cfg["n_permutations"] + 1,
                tail=cfg["tail"], stat_fun=stat, adjacency=adjacency, out_type="mask",
                rng=cfg["seed"], verbose="error",
            )  # fmt: skip
        except InterruptedError:
            return None


def _clu_rows(T: Any, clusters: list, pvals: Any, cfg: dict, names: list) -> list:
    """One row per cluster: its channels, time (and frequency) span, statistic sum and p."""
    a, b = cfg["labels"][0], cfg["labels"][-1]
    rows = []
    for mask, p in zip(clusters, pvals, strict=True):
        chans = mask.reshape(-1, mask.shape[-1]).any(axis=0)
        tmask = mask.any(axis=-1).reshape(-1, len(cfg["times"])).any(axis=0)
        ts = cfg["times"][tmask]
        total = float(T[mask].sum())
        row: dict[str, Any] = {"cluster": 0, "channels": " ".join(n for n, c in zip(names, chans, strict=True) if c),
               "n_channels": int(chans.sum()), "t_start_ms": round(float(ts[0]) * 1000, 3),
               "t_end_ms": round(float(ts[-1]) * 1000, 3)}  # fmt: skip
        if cfg["measure"] == "tfr":
            fs = cfg["freqs"] if mask.ndim == 2 else cfg["freqs"][mask.any(axis=(1, 2))]
            row.update(f_low_hz=float(fs[0]), f_high_hz=float(fs[-1]))
        row.update(stat=cfg["stat"], stat_sum=total, p_value=float(p),
                   significant=bool(p < CLU_ALPHA))  # fmt: skip
        if cfg["stat"] == "t":
            row["direction"] = f"{a} > {b}" if total > 0 else f"{a} < {b}"
        rows.append(row)
    rows.sort(key=lambda r: (r["p_value"], -abs(r["stat_sum"])))
    for i, row in enumerate(rows, 1):
        row["cluster"] = i
    return rows


def _clu_map(T: Any, clusters: list, pvals: Any, cfg: dict, names: list) -> dict:
    """The statistic over channels x time (the largest |value| over frequencies) with the
    significant clusters as runs [channel, first column, last column], for the figure."""
    import numpy as np

    if T.ndim == 3:  # (freqs, times, channels): the frequency of largest |value| at each point
        T = np.take_along_axis(T, np.abs(T).argmax(axis=0)[None], axis=0)[0]
    step = -(-T.shape[0] // CLU_MAP_COLUMNS)
    starts = np.arange(0, T.shape[0], step)
    runs = []
    for mask, p in zip(clusters, pvals, strict=True):
        if p >= CLU_ALPHA:
            continue
        m = mask.reshape(-1, *mask.shape[-2:]).any(axis=0)
        m = np.add.reduceat(m.astype(int), starts, axis=0) > 0  # (columns, channels)
        found = []
        for ch in np.flatnonzero(m.any(axis=0)):
            cols = np.flatnonzero(m[:, ch])
            breaks = np.flatnonzero(np.diff(cols) > 1)
            for lo, hi in zip(np.r_[0, breaks + 1], np.r_[breaks, len(cols) - 1], strict=True):
                found.append([int(ch), int(cols[lo]), int(cols[hi])])
        runs.append(found)
    return {
        "channels": names, "times_ms": [round(float(t) * 1000, 3) for t in cfg["times"][::step]],
        "stat": [[round(float(v), 3) for v in T[::step, c]] for c in range(T.shape[1])],
        "clusters": runs,
    }  # fmt: skip


def cluster_test(data: dict, *, stop: Any = None, **params: Any) -> dict:
    """Cluster-based permutation test between conditions (Maris & Oostenveld 2007)."""
    ep = data.get("epochs")
    if ep is None:
        _tfr_refuse("no epochs: call epoch_data first")
    cfg = _clu_setup(ep, params)
    cfg["labels"] = [ep["classes"][k] for k in cfg["conditions"]]
    _clu_need(ep, cfg)
    names = [ep["info"]["ch_names"][i] for i in cfg["picks"]]
    Xs = []
    for k in cfg["conditions"]:
        Xs.append(_clu_trials(ep, k, cfg, stop))
        if Xs[-1] is None:
            return {"rows": [], "notes": ["stopped"]}
    adjacency, spatial = _clu_adjacency(ep["info"], cfg["picks"], Xs[0].shape[1:-1])
    done = _clu_permute(Xs, cfg, adjacency, stop)
    if done is None:
        return {"rows": [], "notes": ["stopped"]}
    T, clusters, pvals = done[0], list(done[1]), list(done[2])
    rows = _clu_rows(T, clusters, pvals, cfg, names)
    n_sig = sum(r["significant"] for r in rows)
    return {
        "measure": cfg["measure"], "band": cfg["band"], "stat": cfg["stat"], "tail": cfg["tail"],
        "threshold": cfg["threshold"], "df": cfg["df"], "window_s": cfg["window"],
        "n_permutations": cfg["n_permutations"], "seed": cfg["seed"],
        "p_floor": 1.0 / (cfg["n_permutations"] + 1), "spatial_adjacency": spatial,
        "conditions": [{"condition": c, "n_trials": len(x)} for c, x in zip(cfg["labels"], Xs, strict=True)],
        "n_clusters": len(rows), "n_significant": n_sig,
        "rows": rows[:CLU_MAX_ROWS], "summary": _clu_summary(rows, n_sig),
        "notes": _clu_notes(cfg, ep, spatial, len(rows)),
        "map": _clu_map(T, clusters, pvals, cfg, names),
    }  # fmt: skip


def _clu_summary(rows: list, n_sig: int) -> str:
    """One sentence: how many clusters are significant, and the strongest."""
    if not rows:
        return "no cluster formed above the threshold: no difference found between the conditions"
    r = rows[0]
    freq = f", {r['f_low_hz']:g}-{r['f_high_hz']:g} Hz" if "f_low_hz" in r else ""
    way = f" ({r['direction']})" if "direction" in r else ""
    return (
        f"{n_sig} of {len(rows)} clusters significant at p < {CLU_ALPHA:g} (cluster-level FWE); "
        f"strongest: {r['channels']}, {r['t_start_ms']:g}-{r['t_end_ms']:g} ms{freq}, "
        f"{r['stat']} sum {r['stat_sum']:.1f}, p = {r['p_value']:.4g}{way}"
    )


def _clu_notes(cfg: dict, ep: dict, spatial: bool, n: int) -> list:
    """The correction, the threshold, the neighbours, the measure and what the trials are."""
    n_perm, st = cfg["n_permutations"], cfg["stat"]
    side = {0: "two-tailed", 1: "upper tail", -1: "lower tail"}[cfg["tail"]]
    thr = f"|t| > {abs(cfg['threshold']):.3f}" if st == "t" and cfg["tail"] == 0 else (
        f"{st} {'<' if cfg['tail'] == -1 else '>'} {cfg['threshold']:.3f}")  # fmt: skip
    df = ", ".join(str(d) for d in cfg["df"])
    subjects, sessions = (len({str(v) for v in ep.get(k, [])} if ep.get(k) is not None else [])
                          for k in ("subjects", "sessions"))  # fmt: skip
    notes = [
        "correction: cluster-level family-wise error by permutation (Maris & Oostenveld 2007): "
        f"{n_perm} random label permutations (seed {cfg['seed']}) plus the observed labelling, "
        f"so the smallest possible p is 1/{n_perm + 1} = {1 / (n_perm + 1):.4g}",
        f"statistic: {'independent-samples t (first minus second condition)' if st == 't' else 'one-way F'}"
        f", {side}; cluster-forming threshold {thr} (df {df}), "
        + ("given" if cfg.get("given") else f"the {st} of p < {CLU_ALPHA:g}"),
        "neighbours: channels by their positions (MNE find_ch_adjacency, Delaunay), time points "
        "(and frequencies) next to each other" if spatial else
        "neighbours: no electrode positions (or fewer than 4 channels), so clusters form over "
        "time (and frequency) within each channel; the permutation maximum runs over every "
        "channel, so the correction covers channels and time. set_montage gives spatial clusters",
        f"trials are treated as independent observations, pooled over {subjects or 1} subject(s) "
        f"and {sessions or 1} session(s): this tests these trials, not a population; a group "
        "inference needs one average per subject (a second-level test)",
        "a significant cluster shows that the conditions differ; its exact channels and time "
        "span are not themselves tested (Sassenhagen & Draschkow 2019)",
    ]  # fmt: skip
    if cfg["measure"] == "tfr":
        f = cfg["freqs"]
        what = f"band {cfg['band'][0]} (mean power)" if cfg["band"] else "each frequency"
        notes.append(
            f"measure: per-trial Morlet power in dB (10 log10 V²), {f[0]:g}-{f[-1]:g} Hz, "
            f"{what}; n_cycles freqs/2 unless given; decim {cfg['decim']}; window "
            f"{cfg['window'][0]:g} to {cfg['window'][1]:g} s (default: clear of half a wavelet)"
        )
    else:
        notes.append(f"measure: trial amplitudes in µV at {cfg['sfreq']:g} Hz")
    if n > CLU_MAX_ROWS:
        notes.append(f"{n - CLU_MAX_ROWS} more clusters (the least significant) are not listed")
    return notes


EXPORTED = [
    "TFR_BANDS", "TFR_BYTES", "_tfr_refuse", "_tfr_bands", "_tfr_freqs", "_tfr_cycles", "_tfr_edge",
    "_tfr_window", "_tfr_chunks", "_tfr_picks", "CLU_ALPHA", "CLU_MAX_ROWS", "CLU_MAP_COLUMNS",
    "CLU_MAX_BYTES", "_clu_conditions", "_clu_threshold", "_clu_setup", "_clu_trials", "_clu_adjacency",
    "_clu_need", "_clu_permute", "_clu_rows", "_clu_map", "cluster_test", "_clu_summary", "_clu_notes",
]  # fmt: skip


def text(result: dict) -> str:
    """The clusters as the model reads them: the test, then one line per cluster (top 15)."""
    rows = result.get("rows") or []
    if "stat" not in result:
        return "cluster_test: no result (" + "; ".join(result.get("notes") or []) + ")"
    trials = " vs ".join(f"{c['condition']} ({c['n_trials']} trials)" for c in result["conditions"])
    lines = [
        f"cluster permutation test ({result['measure']}, {result['stat']}-test): {trials}; "
        f"window {result['window_s'][0]:g} to {result['window_s'][1]:g} s; "
        f"{result['n_permutations']} permutations (p >= {result['p_floor']:.4g})",
        result["summary"],
    ]
    for r in rows[:15]:
        freq = f", {r['f_low_hz']:g}-{r['f_high_hz']:g} Hz" if "f_low_hz" in r else ""
        way = f", {r['direction']}" if "direction" in r else ""
        lines.append(
            f"  #{r['cluster']} {'significant' if r['significant'] else 'n.s.'}: "
            f"{r['channels']}; {r['t_start_ms']:g}-{r['t_end_ms']:g} ms{freq}; "
            f"{r['stat']} sum {r['stat_sum']:.1f}; p = {r['p_value']:.4g}{way}"
        )
    more = result["n_clusters"] - 15
    lines += [f"  ({more} more clusters in the structured content)"] if more > 0 else []
    return "\n".join(lines + [f"note: {n}" for n in result.get("notes") or []])


def figure(data: dict, result: dict, **params: Any) -> bytes | None:
    """The statistic over channels x time, significant clusters outlined."""
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    m = result.get("map")
    if not m or not m["stat"]:
        return None
    stat, t = np.asarray(m["stat"]), np.asarray(m["times_ms"])
    dt = float(t[1] - t[0]) if len(t) > 1 else 1.0
    fig = Figure(figsize=(9, 0.22 * len(m["channels"]) + 2), layout="constrained")
    ax = fig.add_subplot()
    signed = result["stat"] == "t"
    lim = float(np.abs(stat).max()) or 1.0
    im = ax.imshow(stat, aspect="auto", origin="upper", cmap="RdBu_r" if signed else "viridis",
                   vmin=-lim if signed else 0, vmax=lim, interpolation="nearest",
                   extent=(t[0] - dt / 2, t[-1] + dt / 2, len(stat) - 0.5, -0.5))  # fmt: skip
    for runs in m["clusters"]:
        for ch, c0, c1 in runs:
            ax.add_patch(Rectangle((t[c0] - dt / 2, ch - 0.5), t[c1] - t[c0] + dt, 1.0,
                                   fill=False, ec="k", lw=1.2))  # fmt: skip
    ax.set_yticks(range(len(m["channels"])), m["channels"], fontsize=7)
    ax.set_xlabel("time (ms)")
    a = " - ".join(c["condition"] for c in result["conditions"])
    fig.colorbar(im, ax=ax, label=f"{result['stat']} ({a})" if signed else "F")
    over = f" (largest |{result['stat']}| over frequencies)" if result["measure"] == "tfr" else ""
    what = result["measure"] + (f" {result['band'][0]}" if result.get("band") else over)
    ax.set_title(f"{what}: {result['stat']} map, significant clusters outlined "
                 f"(p < {CLU_ALPHA:g})", fontsize=10)  # fmt: skip
    return _tfr_png(fig)
