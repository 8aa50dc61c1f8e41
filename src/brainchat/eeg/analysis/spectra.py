"""Band power per channel and band (absolute µV² and relative), and the peak (alpha) frequency,
per recording or per condition, from MNE's Welch or multitaper PSD."""

from __future__ import annotations

from typing import Any

# mu: alpha's band over the sensorimotor cortex; gamma stops below 50 Hz line noise
SPECTRA_BANDS = {"delta": [1.0, 4.0], "theta": [4.0, 8.0], "alpha": [8.0, 13.0],
                 "mu": [8.0, 13.0], "beta": [13.0, 30.0], "gamma": [30.0, 45.0]}  # fmt: skip
SPECTRA_DEFAULT_BANDS = ["delta", "theta", "alpha", "beta", "gamma"]
SPECTRA_MAX_TAPER_BYTES = 2 * 1024**3  # what one multitaper call may hold of tapered spectra


def _spectra_fail(message: str) -> Exception:
    """A user-fixable error: a ToolException in brainchat, a ValueError in the exported script."""
    try:
        from langchain_core.tools import ToolException
    except ImportError:  # the exported script needs no langchain
        return ValueError(message)
    return ToolException(message)


def _spectra_bands(bands: Any, nyquist: float, notes: list) -> list:
    """The bands asked for as [name, fmin, fmax], checked against each other and Nyquist."""
    known = ", ".join(f"{k} {v[0]:g}-{v[1]:g} Hz" for k, v in SPECTRA_BANDS.items())
    out: list = []
    for band in bands if bands else SPECTRA_DEFAULT_BANDS:
        if isinstance(band, str):
            if band.strip().lower() not in SPECTRA_BANDS:
                raise _spectra_fail(
                    f"unknown band '{band}': name one of {known}, or give "
                    '{"name": ..., "fmin": ..., "fmax": ...} in Hz'
                )
            name = band.strip().lower()
            lo, hi = SPECTRA_BANDS[name]
        else:
            name, lo, hi = str(band["name"]), float(band["fmin"]), float(band["fmax"])
        if not 0 <= lo < hi:
            raise _spectra_fail(
                f"band '{name}': fmin ({lo:g} Hz) must be >= 0 and < fmax ({hi:g} Hz)"
            )
        if hi > nyquist:
            if not bands:  # a default band the sampling rate cannot hold is left out
                notes.append(f"{name} ({lo:g}-{hi:g} Hz) left out: above Nyquist ({nyquist:g} Hz)")
                continue
            raise _spectra_fail(
                f"band '{name}' ({lo:g}-{hi:g} Hz) reaches above the Nyquist frequency "
                f"({nyquist:g} Hz, half the sampling rate): give fmax <= {nyquist:g} Hz"
            )
        if name in [b[0] for b in out]:
            raise _spectra_fail(f"band '{name}' is named twice: give each band once")
        out.append([name, lo, hi])
    if not out:
        raise _spectra_fail(f"no band fits below the Nyquist frequency ({nyquist:g} Hz)")
    return out


def _spectra_channels(info: Any, channels: Any) -> list:
    """The good EEG channels of `info` (or the subset asked for, any case), in the data's order."""
    import mne

    good = [info.ch_names[i] for i in mne.pick_types(info, eeg=True, exclude="bads")]
    if not good:
        raise _spectra_fail("the data has no good EEG channel to compute band power on")
    if not channels:
        return good
    by_lower = {c.lower(): c for c in good}
    unknown = [c for c in channels if str(c).lower() not in by_lower]
    if unknown:
        raise _spectra_fail(
            f"unknown channel(s) {', '.join(map(str, unknown))}: the good EEG channels are "
            f"{', '.join(good)}"
        )
    wanted = {by_lower[str(c).lower()] for c in channels}
    return [c for c in good if c in wanted]


def _spectra_units(data: dict, source: str) -> tuple:
    """What to compute on: ("recording", [(name, raw)]) or ("condition", [(class, X)]), the info."""
    import numpy as np

    epochs = data.get("epochs")
    if source == "epochs" and epochs is None:
        raise _spectra_fail(
            "source 'epochs' needs epochs: call epoch_data first, or use source 'recordings'"
        )
    if epochs is not None and source != "recordings":
        y = np.asarray(epochs["y"])
        units = [(c, epochs["X"][y == i]) for i, c in enumerate(epochs["classes"])]
        return "condition", [u for u in units if len(u[1])], epochs["info"]
    if not data.get("raws"):
        raise _spectra_fail("no recordings loaded: call load_data first")
    return "recording", list(zip(data["names"], data["raws"], strict=True)), data["raws"][0].info


def _spectra_psd(x: Any, sfreq: float, picks: list, info: Any, fr: list, p: dict) -> tuple:
    """PSD (channels, freqs) in V²/Hz over fr=[fmin, fmax] of a Raw or of epochs (n, ch, t): a
    condition's PSD is the mean of its epochs' PSDs. Also the spectral parameters used."""
    import numpy as np
    from mne.time_frequency import dpss_windows, psd_array_multitaper, psd_array_welch

    is_raw = not isinstance(x, np.ndarray)
    n_times = x.n_times if is_raw else x.shape[-1]
    used: dict = {"method": p["method"]}
    if p["method"] == "welch":
        n = min(int(round(p["window_s"] * sfreq)), n_times)
        over = int(round(p["overlap"] * n))
        used.update(n_fft=n, n_per_seg=n, n_overlap=over, window="hamming")
        used.update(window_s=n / sfreq, resolution_hz=sfreq / n)
        kw: dict = {"n_fft": n, "n_per_seg": n, "n_overlap": over}
    else:
        bandwidth = p["bandwidth"] or 8.0 * sfreq / n_times  # MNE's default: half-bandwidth 4
        half = bandwidth * n_times / (2.0 * sfreq)
        if half < 0.5:
            raise _spectra_fail(
                f"multitaper bandwidth {bandwidth:g} Hz is below the data's resolution: give "
                f"at least {sfreq / n_times:.3g} Hz"
            )
        n_ep = 1 if is_raw else len(x)
        if 8.0 * int(2 * half) * n_ep * len(picks) * n_times > SPECTRA_MAX_TAPER_BYTES:
            raise _spectra_fail(
                f"multitaper bandwidth {bandwidth:g} Hz needs {int(2 * half)} tapers on "
                f"{n_times / sfreq:g} s of data, too much memory: give a smaller bandwidth, "
                "or use method 'welch'"
            )
        tapers = len(dpss_windows(n_times, half, int(2 * half), sym=False, low_bias=True)[1])
        used.update(bandwidth_hz=bandwidth, n_tapers=tapers, resolution_hz=sfreq / n_times)
        used.update(adaptive=False, low_bias=True, normalization="full")
        kw = {"bandwidth": bandwidth, "normalization": "full"}  # "full": V²/Hz, as Welch's
    if is_raw:
        spec = x.compute_psd(
            method=p["method"], fmin=fr[0], fmax=fr[1], picks=picks, verbose="error", **kw
        )
        return spec.get_data(), spec.freqs, used
    idx = [info.ch_names.index(c) for c in picks]
    array = psd_array_welch if p["method"] == "welch" else psd_array_multitaper
    psd, freqs = array(x[:, idx], sfreq, fmin=fr[0], fmax=fr[1], verbose="error", **kw)
    return psd.mean(axis=0), freqs, used


def _spectra_rows(unit: tuple, psd: Any, freqs: Any, picks: list, p: dict, notes: list) -> list:
    """One unit's rows: per channel and band, the power (µV²), relative power and peak (Hz)."""
    import numpy as np

    kind, label, n_epochs = unit
    df = float(freqs[1] - freqs[0])
    lo, hi = p["relative_range"]
    total = psd[:, (freqs >= lo) & (freqs < hi)].sum(axis=1) * df
    pk = (freqs >= p["peak_range"][0]) & (freqs <= p["peak_range"][1])
    if pk.sum() < 3:  # a peak needs a bin on either side
        raise _spectra_fail(
            f"peak_range {p['peak_range'][0]:g}-{p['peak_range'][1]:g} Hz holds fewer than 3 "
            f"frequency bins at a resolution of {df:.3g} Hz: widen it, or use a longer window_s"
        )
    argmax = np.argmax(psd[:, pk], axis=1)
    edge = [c for c, i in zip(picks, argmax, strict=True) if i in (0, int(pk.sum()) - 1)]
    if edge:
        notes.append(
            f"{label}: no peak in {p['peak_range'][0]:g}-{p['peak_range'][1]:g} Hz at "
            f"{', '.join(edge)} (the maximum sits on the range's edge): peak_hz is None"
        )
    rows = []
    for ci, ch in enumerate(picks):
        peak = None if ch in edge else float(freqs[pk][argmax[ci]])
        for name, fmin, fmax in p["bands"]:
            band = (freqs >= fmin) & (freqs < fmax)
            if not band.any():
                raise _spectra_fail(
                    f"band '{name}' ({fmin:g}-{fmax:g} Hz) holds no frequency bin at a "
                    f"resolution of {df:.3g} Hz: widen it, or use a longer window_s"
                )
            power = float(psd[ci, band].sum() * df * 1e12)
            row = {kind: label, "channel": ch, "band": name, "fmin": fmin, "fmax": fmax}
            share = float(power / (total[ci] * 1e12)) if total[ci] > 0 else None
            row.update(power_uv2=power, relative=share, peak_hz=peak)
            rows.append(row if n_epochs is None else {**row, "n_epochs": n_epochs})
    return rows


def _spectra_ranges(
    bands: list, relative_range: Any, peak_range: Any, nyq: float, notes: list
) -> tuple:
    """The relative range (clipped to Nyquist), the peak range, and the span the PSD must cover."""
    lo, hi = float(relative_range[0]), min(float(relative_range[1]), nyq)
    if not 0 <= lo < hi:
        raise _spectra_fail(
            f"relative_range {relative_range[0]:g}-{relative_range[1]:g} Hz is empty below "
            f"Nyquist ({nyq:g} Hz): give fmin < fmax <= {nyq:g}"
        )
    plo, phi = float(peak_range[0]), float(peak_range[1])
    if not 0 <= plo < phi <= nyq:
        raise _spectra_fail(
            f"peak_range {plo:g}-{phi:g} Hz: give 0 <= fmin < fmax <= {nyq:g} Hz (Nyquist)"
        )
    outside = [b[0] for b in bands if b[1] < lo or b[2] > hi]
    if outside:
        notes.append(
            f"{', '.join(outside)} reach(es) outside the relative range {lo:g}-{hi:g} Hz: "
            "their relative power counts power the total leaves out"
        )
    span = [min([lo, plo] + [b[1] for b in bands]), max([hi, phi] + [b[2] for b in bands])]
    return [lo, hi], [plo, phi], span


def band_power(data: dict, *, stop: Any = None, bands: Any = None, method: str = "welch",
               source: str = "auto", channels: Any = None, window_s: float = 2.0,
               overlap: float = 0.5, bandwidth: Any = None, relative_range: Any = (1.0, 45.0),
               peak_range: Any = (7.0, 13.0)) -> dict:  # fmt: skip
    """Band power per channel and band (and peak frequency), per recording or per condition."""
    if method not in ("welch", "multitaper") or source not in ("auto", "recordings", "epochs"):
        raise _spectra_fail("method is welch or multitaper; source is auto, recordings or epochs")
    kind, units, info = _spectra_units(data, source)
    sfreqs = [u[1].info["sfreq"] for u in units] if kind == "recording" else [info["sfreq"]]
    nyq = min(sfreqs) / 2.0
    notes: list = []
    chosen = _spectra_bands(bands, nyq, notes)
    rel, peak, span = _spectra_ranges(chosen, relative_range, peak_range, nyq, notes)
    p = {"method": method, "window_s": window_s, "overlap": overlap, "bandwidth": bandwidth}
    p.update(bands=chosen, relative_range=rel, peak_range=peak)
    rows: list = []
    used: list = []
    for label, x in units:
        if stop is not None and stop.is_set():
            break
        x_info = x.info if kind == "recording" else info
        picks = _spectra_channels(x_info, channels)
        psd, freqs, spectral = _spectra_psd(x, x_info["sfreq"], picks, x_info, span, p)
        used.append((label, spectral))
        n_ep = None if kind == "recording" else len(x)
        rows += _spectra_rows((kind, label, n_ep), psd, freqs, picks, p, notes)
    how = "Welch (Hamming windows)" if method == "welch" else "multitaper (DPSS tapers)"
    per = "per-epoch PSDs averaged per condition" if kind == "condition" else "per recording"
    summary = (
        f"Band power by {how}, {per}: absolute power in µV² is the PSD integrated over the band "
        f"(bins fmin <= f < fmax summed x the resolution); relative power is its fraction of the "
        f"power in {rel[0]:g}-{rel[1]:g} Hz; peak_hz is the PSD maximum in {peak[0]:g}-{peak[1]:g} Hz."
    )
    merged = {k: {u: sp[k] for u, sp in used} for k in (used[0][1] if used else {})}
    spectral = {k: next(iter(v.values())) if len(set(map(str, v.values()))) == 1 else v
                for k, v in merged.items()}  # fmt: skip  # one value, or one per unit
    bands_out = [{"name": b[0], "fmin": b[1], "fmax": b[2]} for b in chosen]
    return {"rows": rows, "summary": summary, "notes": notes, "unit": kind,
            "units": [u[0] for u in units], "bands": bands_out, "relative_range": rel,
            "peak_range": peak, "spectral": spectral}  # fmt: skip


EXPORTED = [
    "SPECTRA_BANDS", "SPECTRA_DEFAULT_BANDS", "SPECTRA_MAX_TAPER_BYTES", "_spectra_fail",
    "_spectra_bands", "_spectra_channels", "_spectra_units", "_spectra_psd", "_spectra_rows",
    "_spectra_ranges", "band_power",
]  # fmt: skip


def _num(v: float | None, rel: bool = False) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3f}" if rel else (f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}")


def _by_unit(result: dict) -> dict:
    """Rows grouped as {unit: {channel: [rows]}}, in the table's order."""
    out: dict = {}
    for r in result["rows"]:
        out.setdefault(r[result["unit"]], {}).setdefault(r["channel"], []).append(r)
    return out


def _headline(result: dict) -> list:
    """Per unit and band, the channel with the most power."""
    lines = [f"largest power per band ({result['unit']}: band channel µV² (relative)):"]
    for unit, chans in _by_unit(result).items():
        best = []
        for i, b in enumerate(result["bands"]):
            top = max((rows[i] for rows in chans.values()), key=lambda r: r["power_uv2"])
            best.append(f"{b['name']} {top['channel']} {_num(top['power_uv2'])} µV² "
                        f"({_num(top['relative'], True)})")  # fmt: skip
        lines.append(f"  {unit}: " + ", ".join(best))
    return lines


def _sp(v: Any, unit: str = "") -> str:
    """A spectral parameter: its value, or its value per unit where the units differ."""
    if isinstance(v, dict):
        return "; ".join(f"{_sp(x, unit)} ({k})" for k, x in v.items())
    return (f"{v:.3g}" if isinstance(v, float) else str(v)) + unit


def text(result: dict, budget: int = 3800) -> str:
    """The bands, the parameters, the headline and as much of the table as fits in `budget`."""
    sp = result["spectral"]
    bands = ", ".join(f"{b['name']} {b['fmin']:g}-{b['fmax']:g} Hz" for b in result["bands"])
    if sp["method"] == "welch":
        how = (f"Welch: n_fft {_sp(sp['n_fft'])} = {_sp(sp['window_s'], ' s')} Hamming window, "
               f"overlap {_sp(sp['n_overlap'])} samples")  # fmt: skip
    else:
        how = (f"multitaper: bandwidth {_sp(sp['bandwidth_hz'], ' Hz')}, "
               f"{_sp(sp['n_tapers'])} DPSS tapers")  # fmt: skip
    lines = [
        result["summary"],
        f"{how}, resolution {_sp(sp['resolution_hz'], ' Hz')}; bands: {bands}",
        *_headline(result),
        *result["notes"],
        "table (channel: band µV² (relative); peak Hz):",
    ]
    out = "\n".join(lines)
    chans = [(u, c, rows) for u, by in _by_unit(result).items() for c, rows in by.items()]
    if result["unit"] == "condition":  # a channel's conditions side by side, to compare them
        order = list(dict.fromkeys(c for _, c, _ in chans))
        chans = sorted(chans, key=lambda t: order.index(t[1]))
    unit = None
    for n, (u, c, rows) in enumerate(chans):
        cells = ", ".join(
            f"{r['band']} {_num(r['power_uv2'])} ({_num(r['relative'], True)})" for r in rows
        )
        peak = "none" if rows[0]["peak_hz"] is None else f"{rows[0]['peak_hz']:g} Hz"
        head = ("" if u == unit else f"\n[{u}]") + f"\n  {c}"
        head = f"\n  {c} [{u}]" if result["unit"] == "condition" else head
        line = f"{head}: {cells}; peak {peak}"
        if len(out) + len(line) > budget:
            out += f"\n... {len(chans) - n} more channel lines in the structured content"
            break
        out, unit = out + line, u
    return out


def _has_positions(info: Any, chans: list) -> bool:
    """Whether every channel shown has a real position (a montage), so a topomap can be drawn."""
    import numpy as np

    if info.get_montage() is None:
        return False
    locs = np.array([info["chs"][info.ch_names.index(c)]["loc"][:3] for c in chans])
    return bool(np.isfinite(locs).all() and (np.abs(locs).sum(axis=1) > 0).all())


def figure(data: dict, result: dict, **params: Any) -> bytes | None:
    """One topomap per band (per condition) of the absolute power; a bar chart per channel when
    the channels have no positions."""
    import numpy as np
    from matplotlib.figure import Figure

    grouped = _by_unit(result)
    if not grouped:
        return None
    chans = list(next(iter(grouped.values())))
    shown = [u for u in grouped if list(grouped[u]) == chans]
    if result["unit"] == "recording":  # the recordings' mean: one row
        power = np.mean(
            [[[r["power_uv2"] for r in grouped[u][c]] for c in chans] for u in shown], 0
        )
        rows, names = [power], [f"mean of {len(shown)} recording(s)"]
    else:
        rows = [np.array([[r["power_uv2"] for r in grouped[u][c]] for c in chans]) for u in shown]
        names = shown
    info = data["epochs"]["info"] if result["unit"] == "condition" else data["raws"][0].info
    bands = result["bands"]
    if _has_positions(info, chans):
        fig = _topomaps(info, chans, rows, names, bands)
    else:
        width = min(14, max(6, 0.1 * len(chans) * len(bands)))
        fig = Figure(figsize=(width, 2.6 * len(rows) + 0.6))
        for i, (power, name) in enumerate(zip(rows, names, strict=True)):
            ax = fig.add_subplot(len(rows), 1, i + 1)
            bar = 0.8 / len(bands)
            for j, b in enumerate(bands):
                ax.bar(np.arange(len(chans)) + j * bar, power[:, j], bar, label=b["name"])
            ax.set_xticks(np.arange(len(chans)) + 0.4 - bar / 2, chans, fontsize=7, rotation=90)
            ax.set_yscale("log")
            ax.set_ylabel("power (µV²)")
            ax.set_title(f"{name}: band power per channel (no channel positions)", fontsize=9)
        fig.axes[0].legend(fontsize=7, ncol=len(bands))
        fig.subplots_adjust(left=0.07, right=0.99, top=0.9, bottom=0.16, hspace=0.7)
    from brainchat.eeg.core.figures import figure_png

    return figure_png(fig, dpi=100)  # laid out by hand: a tight box draws it twice


def _topomaps(info: Any, chans: list, rows: list, names: list, bands: list) -> Any:
    """A grid of topomaps: a row per unit, a column per band, one colour scale per band."""
    import mne
    from matplotlib.figure import Figure

    sub = mne.pick_info(info, [info.ch_names.index(c) for c in chans])
    fig = Figure(figsize=(2.4 * len(bands), 2.4 * len(rows) + 0.4))
    for j, b in enumerate(bands):
        vmin = min(float(r[:, j].min()) for r in rows)
        vmax = max(float(r[:, j].max()) for r in rows)
        for i, power in enumerate(rows):
            ax = fig.add_subplot(len(rows), len(bands), i * len(bands) + j + 1)
            im, _ = mne.viz.plot_topomap(
                power[:, j], sub, axes=ax, show=False, contours=4, vlim=(vmin, vmax)
            )
            ax.set_title(f"{names[i]}\n{b['name']} {b['fmin']:g}-{b['fmax']:g} Hz", fontsize=8)
            fig.colorbar(im, ax=ax, shrink=0.6, label="µV²" if j == len(bands) - 1 else None)
    return fig
