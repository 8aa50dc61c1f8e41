"""Time-frequency power of the epochs per condition, as ERD/ERS against a baseline (MNE's Morlet
or multitaper power and `mne.baseline.rescale`), per channel and band in a window."""

from __future__ import annotations

from typing import Any, NoReturn

TFR_BANDS = {
    "delta": [1.0, 4.0],
    "theta": [4.0, 8.0],
    "alpha": [8.0, 13.0],
    "mu": [8.0, 13.0],
    "beta": [13.0, 30.0],
    "low_beta": [13.0, 20.0],
    "high_beta": [20.0, 30.0],
    "gamma": [30.0, 45.0],
}
TFR_UNITS = {"percent": "%", "logratio": "dB"}
TFR_BYTES = 2**26  # the power of one chunk of trials is held at a time (64 MB)


def _tfr_refuse(text: str, fix: tuple | None = None) -> NoReturn:
    """Stop with an error the user can fix: a ToolError (with its corrected call) in brainchat,
    a ValueError in the exported script, where a logged call has already passed every check."""
    import sys

    errors = sys.modules.get("brainchat.tools.errors")
    if errors is None:
        raise ValueError(text)
    raise errors.ToolError(text, None if fix is None else {"name": fix[0], "arguments": fix[1]})


def _tfr_bands(bands: list, nyquist: float) -> list[list]:
    """[name, fmin, fmax] of each band, named (TFR_BANDS) or given as [fmin, fmax] in Hz."""
    out = []
    for band in bands:
        if isinstance(band, str):
            if band.lower() not in TFR_BANDS:
                _tfr_refuse(
                    f"unknown band {band!r}: use one of {', '.join(TFR_BANDS)} or [fmin, fmax]"
                )
            name, (lo, hi) = band.lower(), TFR_BANDS[band.lower()]
        else:
            lo, hi = float(band[0]), float(band[1])
            name = f"{lo:g}-{hi:g} Hz"
        if not 0 < lo < hi:
            _tfr_refuse(f"band {name}: needs 0 < fmin < fmax, got {lo:g}-{hi:g} Hz")
        if hi > nyquist:
            shown = f"{name} ({lo:g}-{hi:g} Hz)" if isinstance(band, str) else name
            _tfr_refuse(
                f"band {shown} reaches above the Nyquist frequency of the epochs "
                f"({nyquist:g} Hz): ask for bands below {nyquist:g} Hz"
            )
        out.append([name, lo, hi])
    return out


def _tfr_freqs(fmin: float, fmax: float, fstep: float, nyquist: float) -> Any:
    """The frequencies of the map, fmin to fmax (inclusive) in steps of fstep."""
    import numpy as np

    if not 0 < fmin < fmax:
        _tfr_refuse(f"freqs: needs 0 < fmin < fmax, got {fmin:g}-{fmax:g} Hz")
    if fmax > nyquist:
        _tfr_refuse(f"freqs up to {fmax:g} Hz exceed the Nyquist frequency ({nyquist:g} Hz)")
    return np.arange(fmin, fmax + fstep / 2, fstep)


def _tfr_cycles(freqs: Any, n_cycles: float | None) -> Any:
    """Cycles per wavelet at each frequency: freqs/2 (a 0.5 s wavelet) unless a number is given."""
    import numpy as np

    return freqs / 2.0 if n_cycles is None else np.full(len(freqs), float(n_cycles))


def _tfr_edge(freqs: Any, cycles: Any) -> float:
    """Half the longest wavelet (n_cycles / f / 2, in s): how far edge effects reach."""
    return float(max(c / f / 2.0 for f, c in zip(freqs, cycles, strict=True)))


def _tfr_window(window: list | None, tmin: float, tmax: float, edge: float, what: str) -> list:
    """A [t0, t1] window checked against the epochs; None: after the cue, clear of the end."""
    if window is None:
        t1 = tmax - edge if tmax - edge > 0.5 else tmax
        return [0.5 if t1 > 0.5 else max(0.0, tmin), round(t1, 6)]
    t0, t1 = float(window[0]), float(window[1])
    if not (tmin - 1e-9 <= t0 < t1 <= tmax + 1e-9):
        _tfr_refuse(
            f"{what} [{t0:g}, {t1:g}] s is not inside the epochs ({tmin:g} to {tmax:g} s): "
            f"give t0 < t1 within {tmin:g}..{tmax:g}"
        )
    return [t0, t1]


def _tfr_chunks(X: Any, sfreq: float, freqs: Any, cycles: Any, cfg: dict, stop: Any) -> Any:
    """Per-trial power (trials, channels, freqs, times), a chunk of trials at a time."""
    import mne

    decim, n = int(cfg["decim"]), len(X)
    per_trial = X.shape[1] * len(freqs) * len(range(0, X.shape[2], decim)) * 8
    size = max(1, TFR_BYTES // per_trial)
    for start in range(0, n, size):
        if stop is not None and stop.is_set():
            return
        chunk = X[start : start + size]
        if cfg["method"] == "multitaper":
            yield mne.time_frequency.tfr_array_multitaper(
                chunk, sfreq, freqs, n_cycles=cycles, time_bandwidth=cfg["time_bandwidth"],
                decim=decim, output="power", verbose="error",
            )  # fmt: skip
        else:
            yield mne.time_frequency.tfr_array_morlet(
                chunk, sfreq, freqs, n_cycles=cycles, decim=decim, output="power", verbose="error"
            )


def _tfr_mean(X: Any, sfreq: float, freqs: Any, cycles: Any, cfg: dict, stop: Any) -> Any:
    """Power averaged over the trials (channels, freqs, times); None when stopped."""
    total: Any = None
    count = 0
    for power in _tfr_chunks(X, sfreq, freqs, cycles, cfg, stop):
        total = power.sum(axis=0) if total is None else total + power.sum(axis=0)
        count += len(power)
    return None if count < len(X) else total / count


def _tfr_change(power: Any, times: Any, baseline: list, mode: str) -> Any:
    """Power as change from the baseline: percent ((P - R) / R x 100) or dB (10 log10 P / R)."""
    import mne

    out = mne.baseline.rescale(power, times, tuple(baseline), mode=mode, verbose="error")
    return out * (100.0 if mode == "percent" else 10.0)


def _tfr_setup(ep: dict, p: dict) -> dict:
    """The checked parameters: frequencies, cycles, bands, baseline, window, channels, decim."""
    import numpy as np

    sfreq, nyquist = float(ep["sfreq"]), float(ep["sfreq"]) / 2.0
    tmin = float(ep["tmin"])
    tmax = tmin + (ep["X"].shape[2] - 1) / sfreq
    below: list = [b for b in ("mu", "beta") if TFR_BANDS[b][1] <= nyquist] or [[1.0, nyquist]]
    bands = _tfr_bands(p.get("bands") or below, nyquist)
    fr = p.get("freqs") or [min(b[1] for b in bands), max(b[2] for b in bands)]
    freqs = _tfr_freqs(float(fr[0]), float(fr[1]), float(p.get("fstep") or 1.0), nyquist)
    for name, lo, hi in bands:
        if not ((freqs >= lo) & (freqs <= hi)).any():
            _tfr_refuse(f"band {name} is outside freqs {fr[0]:g}-{fr[1]:g} Hz: widen freqs")
    cycles = _tfr_cycles(freqs, p.get("n_cycles"))
    edge = _tfr_edge(freqs, cycles)
    if 2.0 * edge > tmax - tmin:
        _tfr_refuse(
            f"the wavelet at {freqs[0]:g} Hz ({cycles[0]:g} cycles) lasts {2 * edge:.2f} s, "
            f"longer than the {tmax - tmin:.2f} s epochs: raise the lowest frequency or n_cycles"
        )
    baseline = p.get("baseline")
    if baseline is None:
        if tmin >= 0:
            _tfr_refuse(*_tfr_no_baseline(ep, tmin, tmax))
        baseline = [tmin + edge, 0.0] if tmin + edge <= -0.1 else [tmin, 0.0]
    baseline = _tfr_window(baseline, tmin, tmax, edge, "baseline")
    decim = int(p.get("decim") or max(1, int(sfreq // 50)))
    return {
        "sfreq": sfreq, "tmin": tmin, "tmax": tmax, "bands": bands, "freqs": freqs,
        "cycles": cycles, "edge": edge, "baseline": baseline, "decim": decim,
        "window": _tfr_window(p.get("window"), tmin, tmax, edge, "window"),
        "picks": _tfr_picks(list(ep["info"]["ch_names"]), p.get("channels")),
        "times": tmin + np.arange(0, ep["X"].shape[2], decim) / sfreq,
        "method": p.get("method") or "morlet", "mode": p.get("mode") or "percent",
        "time_bandwidth": float(p.get("time_bandwidth") or 4.0),
    }  # fmt: skip


def _tfr_picks(names: list, channels: list | None) -> list:
    """The indices of the channels asked for (any case); None: every channel."""
    lower = {c.lower(): i for i, c in enumerate(names)}
    unknown = [c for c in channels or [] if c.lower() not in lower]
    if unknown:
        _tfr_refuse(f"unknown channel(s) {', '.join(unknown)}; the epochs have {', '.join(names)}")
    return [lower[c.lower()] for c in channels] if channels else list(range(len(names)))


def _tfr_no_baseline(ep: dict, tmin: float, tmax: float) -> tuple[str, tuple]:
    """The refusal when the epochs start at or after the cue, with the call that re-epochs."""
    fixed = {"tmin": -1.0, "tmax": max(float(tmax), 3.0)}
    return (
        f"the epochs start at {tmin:g} s (at or after the cue), so no baseline inside them comes "
        "before the cue: ERD/ERS needs a pre-stimulus interval. Re-epoch with one, e.g. "
        f"epoch_data(tmin=-1.0, tmax={fixed['tmax']:g}), then run time_frequency again",
        ("epoch_data", fixed),
    )


def _tfr_notes(cfg: dict) -> list:
    """What the numbers mean, and where the window or baseline meets the wavelets' edge effects."""
    unit = TFR_UNITS[cfg["mode"]]
    cyc = "freqs/2 (0.5 s wavelets)" if cfg["n_cycles"] is None else f"{cfg['n_cycles']:g}"
    notes = [
        f"{cfg['method']} power per trial, averaged over the trials of each condition; "
        f"n_cycles {cyc}; decim {cfg['decim']} ({cfg['sfreq'] / cfg['decim']:g} Hz steps)",
        f"change from the baseline {cfg['baseline'][0]:g} to {cfg['baseline'][1]:g} s in "
        + ("percent ((P - R) / R x 100)" if unit == "%" else "dB (10 log10 P / R)")
        + ": negative = ERD (desynchronisation), positive = ERS (Pfurtscheller's convention)",
    ]
    for what in ("baseline", "window"):
        t0, t1 = cfg[what]
        if t0 - cfg["tmin"] < cfg["edge"] - 1e-9 or cfg["tmax"] - t1 < cfg["edge"] - 1e-9:
            notes.append(
                f"the {what} {t0:g}-{t1:g} s lies within half a wavelet ({cfg['edge']:.2f} s) "
                f"of the epoch edges ({cfg['tmin']:g}, {cfg['tmax']:g} s): edge effects bias it"
            )
    if cfg["baseline"][1] > 0:
        notes.append("the baseline is after the cue: the change is relative to the task")
    return notes


def _tfr_rows(change: Any, condition: str, cfg: dict, names: list) -> list:
    """One row per channel and band: the mean change over the band and the window."""
    t0, t1 = cfg["window"]
    tsel = (cfg["times"] >= t0 - 1e-9) & (cfg["times"] <= t1 + 1e-9)
    key = "change_percent" if cfg["mode"] == "percent" else "change_db"
    rows = []
    for name, lo, hi in cfg["bands"]:
        fsel = (cfg["freqs"] >= lo) & (cfg["freqs"] <= hi)
        values = change[:, fsel][:, :, tsel].mean(axis=(1, 2))
        for ch, value in zip(names, values, strict=True):
            rows.append({
                "condition": condition, "channel": ch, "band": name, "band_hz": [lo, hi],
                "window_s": [t0, t1], key: float(value), "erd_ers": "ERD" if value < 0 else "ERS",
            })  # fmt: skip
    return rows


def time_frequency(data: dict, *, stop: Any = None, **params: Any) -> dict:
    """ERD/ERS per condition, channel and band: time-frequency power against a baseline."""
    import numpy as np

    ep = data.get("epochs")
    if ep is None:
        _tfr_refuse("no epochs: call epoch_data first (with a pre-stimulus interval)")
    cfg = _tfr_setup(ep, params)
    cfg["n_cycles"] = params.get("n_cycles")
    names = [ep["info"]["ch_names"][i] for i in cfg["picks"]]
    y, rows, counts = np.asarray(ep["y"]), [], []
    for k, condition in enumerate(ep["classes"]):
        sel = np.flatnonzero(y == k)
        if len(sel) == 0:
            continue
        X = ep["X"][sel][:, cfg["picks"]]
        power = _tfr_mean(X, cfg["sfreq"], cfg["freqs"], cfg["cycles"], cfg, stop)
        if power is None:
            return {"rows": [], "notes": ["stopped"]}
        change = _tfr_change(power, cfg["times"], cfg["baseline"], cfg["mode"])
        rows += _tfr_rows(change, condition, cfg, names)
        counts.append({"condition": condition, "n_trials": int(len(sel))})
    f = cfg["freqs"]
    return {
        "method": cfg["method"], "mode": cfg["mode"], "unit": TFR_UNITS[cfg["mode"]],
        "freqs_hz": [float(f[0]), float(f[-1]), float(f[1] - f[0]) if len(f) > 1 else 0.0],
        "baseline_s": cfg["baseline"], "window_s": cfg["window"], "decim": cfg["decim"],
        "conditions": counts, "rows": rows, "summary": _tfr_summary(rows, cfg["mode"]),
        "notes": _tfr_notes(cfg),
    }  # fmt: skip


def _tfr_strongest(rows: list, mode: str) -> list:
    """Per condition and band, the row of the strongest ERD (the most negative change)."""
    key = "change_percent" if mode == "percent" else "change_db"
    best: dict = {}
    for r in rows:
        at = (r["condition"], r["band"])
        if at not in best or r[key] < best[at][key]:
            best[at] = r
    return list(best.values())


def _tfr_summary(rows: list, mode: str) -> str:
    """One sentence: the strongest ERD of each condition and band."""
    key, unit = ("change_percent", "%") if mode == "percent" else ("change_db", " dB")
    parts = [
        f"{r['condition']} {r['band']}: {r['channel']} {r[key]:.1f}{unit}"
        for r in _tfr_strongest(rows, mode)
    ]
    return "strongest ERD " + "; ".join(parts) if parts else "no rows"


EXPORTED = [
    "TFR_BANDS", "TFR_UNITS", "TFR_BYTES", "_tfr_refuse", "_tfr_bands", "_tfr_freqs", "_tfr_cycles",
    "_tfr_edge", "_tfr_window", "_tfr_chunks", "_tfr_mean", "_tfr_change", "_tfr_setup",
    "_tfr_picks", "_tfr_no_baseline", "_tfr_notes", "_tfr_rows", "time_frequency", "_tfr_strongest",
    "_tfr_summary",
]  # fmt: skip


def text(result: dict) -> str:
    """The ERD/ERS table as the model reads it: the strongest ERD per condition and band, then
    every channel's change per condition and band."""
    rows = result.get("rows") or []
    if not rows:
        return "time_frequency: no result (" + "; ".join(result.get("notes") or []) + ")"
    key = "change_percent" if result["mode"] == "percent" else "change_db"
    unit = " %" if result["mode"] == "percent" else " dB"
    f0, f1, step = result["freqs_hz"]
    trials = ", ".join(f"{c['condition']} {c['n_trials']}" for c in result["conditions"])
    lines = [
        f"time-frequency ({result['method']}, {f0:g}-{f1:g} Hz in {step:g} Hz steps; baseline "
        f"{result['baseline_s'][0]:g} to {result['baseline_s'][1]:g} s; window "
        f"{result['window_s'][0]:g} to {result['window_s'][1]:g} s; change in{unit}, "
        f"negative = ERD, positive = ERS); trials: {trials}",
        "strongest ERD per condition and band:",
    ]
    for r in _tfr_strongest(rows, result["mode"]):
        hz = "{:g}-{:g} Hz".format(*r["band_hz"])
        band = r["band"] if r["band"] == hz else f"{r['band']} ({hz})"
        lines.append(f"  {r['condition']} {band}: {r['channel']} "
                     f"{_tfr_num(r[key])}{unit} ({r['erd_ers']})")  # fmt: skip
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["condition"], r["band"]), []).append(r)
    width = max(3, 3400 // (10 * len(groups)))  # channels per line that keep the text short
    lines.append(f"change ({unit.strip()}) per condition and band, strongest ERD first:")
    for (condition, band), group in groups.items():
        group = sorted(group, key=lambda r: r[key])
        shown = ", ".join(f"{r['channel']} {_tfr_num(r[key])}" for r in group[:width])
        more = (
            f" (+{len(group) - width} more in the structured content)" if len(group) > width else ""
        )
        lines.append(f"  {condition} {band}: {shown}{more}")
    return "\n".join(lines + [f"note: {n}" for n in result.get("notes") or []])


def _tfr_num(value: float) -> str:
    """A change with its sign and one decimal (0.0 for a change that rounds to zero)."""
    return f"{round(value, 1) or 0.0:+.1f}"


def _tfr_shown(names: list, rows: list, mode: str) -> list:
    """The channels drawn: C3, Cz and C4 when present, else the three of largest change."""
    lower = [n.lower() for n in names]
    shown = [names[lower.index(c)] for c in ("c3", "cz", "c4") if c in lower]
    if shown:
        return shown
    key = "change_percent" if mode == "percent" else "change_db"
    ranked = sorted(rows, key=lambda r: -abs(r[key]))
    return list(dict.fromkeys(r["channel"] for r in ranked))[:3]


def figure(data: dict, result: dict, **params: Any) -> bytes | None:
    """TFR maps (change from the baseline) of a few channels per condition."""
    import numpy as np
    from matplotlib.figure import Figure

    ep, rows = data.get("epochs"), result.get("rows") or []
    if ep is None or not rows:
        return None
    cfg = _tfr_setup(ep, params)
    names = list(ep["info"]["ch_names"])
    shown = _tfr_shown([names[i] for i in cfg["picks"]], rows, cfg["mode"])
    picks = [names.index(c) for c in shown]
    conditions = [c["condition"] for c in result["conditions"]]
    y, maps = np.asarray(ep["y"]), []
    for condition in conditions:
        X = ep["X"][y == list(ep["classes"]).index(condition)][:, picks]
        power = _tfr_mean(X, cfg["sfreq"], cfg["freqs"], cfg["cycles"], cfg, None)
        maps.append(_tfr_change(power, cfg["times"], cfg["baseline"], cfg["mode"]))
    lim = float(np.percentile(np.abs(maps), 99)) or 1.0
    fig = Figure(figsize=(3.4 * len(picks) + 1, 2.6 * len(conditions) + 0.6))
    axes = fig.subplots(len(conditions), len(picks), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.86, bottom=0.14, top=0.86, wspace=0.25, hspace=0.5)
    t, f = cfg["times"], cfg["freqs"]
    for i, condition in enumerate(conditions):
        for j, ch in enumerate(shown):
            ax = axes[i, j]
            im = ax.imshow(maps[i][j], aspect="auto", origin="lower", cmap="RdBu_r",
                           extent=(t[0], t[-1], f[0], f[-1]), vmin=-lim, vmax=lim)  # fmt: skip
            for x in (0.0, *result["window_s"]):
                ax.axvline(x, color="k", lw=0.8, ls="-" if x == 0.0 else ":")
            ax.set_title(f"{condition} {ch}", fontsize=9)
            ax.set_xlabel("time (s)" if i == len(conditions) - 1 else "")
            ax.set_ylabel("frequency (Hz)" if j == 0 else "")
    # a fixed layout: matplotlib's constrained one took longer than the power itself
    fig.colorbar(
        im, cax=fig.add_axes((0.89, 0.16, 0.015, 0.68)), label=f"change ({result['unit']})"
    )
    fig.suptitle(f"{result['method']} power vs baseline {cfg['baseline'][0]:g}-"
                 f"{cfg['baseline'][1]:g} s (blue: ERD)")  # fmt: skip
    return _tfr_png(fig)


def _tfr_png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes."""
    from brainchat.eeg.core.figures import figure_png

    return figure_png(fig, dpi=100)  # with its SVG
