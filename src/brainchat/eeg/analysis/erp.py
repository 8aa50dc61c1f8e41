"""Event-related potentials: the average per condition (class), difference waves, and each
channel's peak (µV, ms) and mean amplitude in a time window, computed with MNE's Evoked."""

from __future__ import annotations

from typing import Any

ERP_MINUS = "\u2212"  # the difference wave's name: "A − B"
ERP_POLARITY = {"positive": "pos", "negative": "neg", "absolute": "abs"}
ERP_COMPARE_CHANNELS = 3  # channels the compare plot shows when none are given
ERP_MAX_PLOTTED = 6  # at most this many channels in the compare plot
TEXT_ROWS = 66  # rows the text lists in full (22 channels x 3 waves); more: the largest


def _erp_refuse(message: str) -> None:
    """Stop with a message the user can act on: a ToolException in brainchat, else ValueError."""
    try:
        from langchain_core.tools import ToolException
    except ImportError:  # the exported script runs without langchain
        raise ValueError(message) from None
    raise ToolException(message)


def _erp_match(given: list[str] | None, allowed: list[str], what: str) -> list[str]:
    """`given` spelt as in `allowed` (case aside), in order, once each; unknown names refused."""
    if given is None:
        return list(allowed)
    folded = {a.lower(): a for a in allowed}
    out, unknown = [], []
    for name in given:
        found = name if name in allowed else folded.get(str(name).lower())
        if found is None:
            unknown.append(name)
        elif found not in out:
            out.append(found)
    if unknown:
        _erp_refuse(
            f"unknown {what} {', '.join(map(repr, unknown))}: the epochs have "
            f"{', '.join(allowed)}; give {what}s from these (or leave the argument out for all)"
        )
    return out


def _erp_window(times: Any, window: list[float] | None, sfreq: float) -> tuple[int, int]:
    """The first and last sample inside the window; refused when the window is not inside the
    epochs or holds fewer than three samples."""
    import math

    t0, t1 = float(times[0]), float(times[-1])
    if window is None:
        window = [max(t0, 0.0), t1] if t1 > 0 else [t0, t1]
    a, b = float(window[0]), float(window[1])
    half = 0.5 / sfreq
    if a >= b or a < t0 - half or b > t1 + half:
        _erp_refuse(
            f"window [{a:g}, {b:g}] s is not inside the epochs ({t0:g} to {t1:g} s): give "
            f"[tmin, tmax] in seconds with {t0:g} <= tmin < tmax <= {t1:g}, or epoch_data again "
            "with a longer interval"
        )
    # the samples inside [a, b], as Evoked.get_peak and crop take them (float error aside)
    i0 = min(max(math.ceil((a - t0) * sfreq - 1e-6), 0), len(times) - 1)
    i1 = min(max(math.floor((b - t0) * sfreq + 1e-6), 0), len(times) - 1)
    if i1 - i0 < 2:
        _erp_refuse(
            f"window [{a:g}, {b:g}] s holds {i1 - i0 + 1} sample(s) at {sfreq:g} Hz; a peak "
            "needs at least three: widen it"
        )
    return i0, i1


def erp_evokeds(epochs: dict[str, Any], names: list[str], pairs: list[list[str]]) -> dict:
    """The average (mne.Evoked) of each condition in `names` and in `pairs`, and each pair's
    difference wave (A − B, mne.combine_evoked with weights [1, -1])."""
    import mne
    import numpy as np

    classes = list(epochs["classes"])
    y = np.asarray(epochs["y"])
    out = {}
    for name in dict.fromkeys([*names, *(c for pair in pairs for c in pair)]):
        sel = y == classes.index(name)
        if not sel.any():
            _erp_refuse(f"condition {name!r} has no epochs (all rejected): leave it out")
        # the mean over trials, as Epochs.average computes it (without copying the trials)
        mean = epochs["X"][sel].mean(axis=0)
        out[name] = mne.EvokedArray(mean, epochs["info"], tmin=epochs["tmin"], nave=int(sel.sum()),
                                    comment=name, verbose="error")  # fmt: skip
    for a, b in pairs:
        out[f"{a} {ERP_MINUS} {b}"] = mne.combine_evoked([out[a], out[b]], weights=[1, -1])
    return out


def erp_peaks(data: Any, i0: int, i1: int, polarity: str) -> tuple[Any, Any]:
    """Per channel (rows of `data`), the sample index of the peak within samples i0..i1 and the
    signed amplitude there, as Evoked.get_peak(mode=...) finds it (first one on ties)."""
    import numpy as np

    part = data[:, i0 : i1 + 1]
    mode = ERP_POLARITY[polarity]
    score = np.abs(part) if mode == "abs" else part
    idx = (np.argmin(score, axis=1) if mode == "neg" else np.argmax(score, axis=1)) + i0
    return idx, data[np.arange(len(data)), idx]


def _erp_rows(evoked: Any, name: str, picks: list[str], span: tuple[int, int], pol: str, n: int):
    """One row per picked channel: peak, its latency, mean amplitude in the window, edge flag."""
    i0, i1 = span
    data = evoked.data[[evoked.ch_names.index(ch) for ch in picks]]
    idx, amp = erp_peaks(data, i0, i1, pol)
    mean = data[:, i0 : i1 + 1].mean(axis=1)
    return [
        {
            "condition": name,
            "channel": ch,
            "peak_uv": float(amp[k] * 1e6),
            "latency_ms": float(evoked.times[idx[k]] * 1e3),
            "mean_uv": float(mean[k] * 1e6),
            "n_trials": n,
            "edge": bool(idx[k] in (i0, i1)),
        }
        for k, ch in enumerate(picks)
    ]


def erp_baseline(evokeds: list[Any]) -> dict[str, Any]:
    """Whether the averages look baseline-corrected: the mean of the pre-stimulus part
    (tmin..0 s), largest over channels and conditions."""
    import numpy as np

    times = evokeds[0].times
    pre = times <= 0
    if times[0] >= 0 or pre.sum() < 2:
        return {
            "interval_s": None,
            "max_abs_mean_uv": None,
            "corrected": None,
            "text": f"no pre-stimulus interval (epochs start at {times[0]:g} s): amplitudes "
            "are relative to the recording's reference, not baseline-corrected",
        }
    worst = max(float(np.abs(ev.data[:, pre].mean(axis=1)).max()) * 1e6 for ev in evokeds)
    span = f"{times[0]:g} to 0 s"
    if worst < 1e-6:
        text = f"baseline-corrected: the pre-stimulus mean ({span}) is 0 µV at every channel"
    else:
        text = (
            f"not baseline-corrected over the pre-stimulus interval ({span}): its mean is up to "
            f"{worst:.2f} µV at a channel, and amplitudes include that offset; epoch_data with "
            f"baseline [{times[0]:g}, 0] corrects it"
        )
    return {"interval_s": [float(times[0]), 0.0], "max_abs_mean_uv": worst,
            "corrected": worst < 1e-6, "text": text}  # fmt: skip


def erp_positions(info: Any, picks: list[str]) -> list[str]:
    """The picked channels that have a position (a montage) for a topomap."""
    import numpy as np

    out = []
    for ch in picks:
        loc = info["chs"][info["ch_names"].index(ch)]["loc"][:3]
        if np.all(np.isfinite(loc)) and np.any(loc != 0):
            out.append(ch)
    return out


def erp_largest(rows: list[dict[str, Any]], polarity: str) -> dict[str, Any]:
    """The row with the largest peak of the polarity asked for."""
    sign = {"positive": 1, "negative": -1}.get(polarity)
    return max(rows, key=lambda r: r["peak_uv"] * sign if sign else abs(r["peak_uv"]))


def erp_effect_channels(rows: list[dict[str, Any]], names: list[str], diffs: list[str]) -> list:
    """The channels of largest effect: largest |peak| of the first difference wave, else the
    largest spread of mean amplitude across conditions, else the largest |peak|."""
    first = {}
    if diffs:
        first = {r["channel"]: abs(r["peak_uv"]) for r in rows if r["condition"] == diffs[0]}
    elif len(names) > 1:
        spread: dict[str, list[float]] = {}
        for r in rows:
            spread.setdefault(r["channel"], []).append(r["mean_uv"])
        first = {ch: max(v) - min(v) for ch, v in spread.items()}
    else:
        first = {r["channel"]: abs(r["peak_uv"]) for r in rows}
    return sorted(first, key=lambda ch: -first[ch])[:ERP_COMPARE_CHANNELS]


def _erp_notes(rows: list[dict[str, Any]], names: list[str], polarity: str) -> list[str]:
    notes = []
    for name in names:
        mine = [r for r in rows if r["condition"] == name]
        edge = [r["channel"] for r in mine if r["edge"]]
        if edge:
            notes.append(
                f"{name}: the peak lies on the window's edge at {len(edge)} of {len(mine)} "
                f"channel(s) ({', '.join(edge[:8])}{', ...' if len(edge) > 8 else ''}): not a "
                "true peak (the wave still rises there); widen the window or read mean_uv"
            )
        wrong = [r["channel"] for r in mine if polarity != "absolute" and (
            r["peak_uv"] < 0 if polarity == "positive" else r["peak_uv"] > 0)]  # fmt: skip
        if wrong:
            notes.append(
                f"{name}: no {polarity} value in the window at {', '.join(wrong[:8])}: the "
                "'peak' there is the value nearest zero"
            )
    return notes


def _erp_choose(epochs: dict[str, Any], conditions, differences, channels) -> tuple:
    """The conditions, difference pairs and channels asked for (checked), and trials per class."""
    import numpy as np

    classes = list(epochs["classes"])
    counts = {c: int((np.asarray(epochs["y"]) == i).sum()) for i, c in enumerate(classes)}
    if conditions is None:
        names = [c for c in classes if counts[c] > 0]
    else:
        names = _erp_match(conditions, classes, "condition")
    pairs = [_erp_match(list(p), classes, "condition") for p in differences or []]
    if any(len(p) != 2 for p in pairs):
        _erp_refuse("each difference is a pair of two different conditions [A, B] (A − B)")
    info = epochs["info"]
    every = list(info["ch_names"])
    eeg = [c for c, kind in zip(every, info.get_channel_types(), strict=True) if kind == "eeg"]
    picks = _erp_match(channels, every, "channel") if channels else (eeg or every)  # EOG if named
    return names, pairs, picks, counts


def erp_analysis(
    data: dict[str, Any],
    *,
    stop: Any = None,
    conditions: list[str] | None = None,
    differences: list[list[str]] | None = None,
    window: list[float] | None = None,
    polarity: str = "absolute",
    channels: list[str] | None = None,
    plot: str = "butterfly",
) -> dict[str, Any]:
    """ERPs per condition and difference wave: peak (µV), latency (ms) and mean amplitude (µV)
    per channel in the window, with the trial counts and whether a baseline was applied."""
    epochs = data["epochs"]
    names, pairs, picks, counts = _erp_choose(epochs, conditions, differences, channels)
    evokeds = erp_evokeds(epochs, names, pairs)
    times = next(iter(evokeds.values())).times
    i0, i1 = _erp_window(times, window, float(epochs["sfreq"]))
    waves = [(c, counts[c]) for c in names]
    waves += [(f"{a} {ERP_MINUS} {b}", counts[a] + counts[b]) for a, b in pairs]
    rows: list[dict[str, Any]] = []
    for name, n in waves:
        if stop is not None and stop.is_set():
            return {"rows": rows, "notes": ["stopped before every condition was measured"]}
        rows += _erp_rows(evokeds[name], name, picks, (i0, i1), polarity, n)
    averaged = list(dict.fromkeys([*names, *(c for p in pairs for c in p)]))
    baseline = erp_baseline([evokeds[c] for c in averaged])
    notes = [baseline["text"], *_erp_notes(rows, [w for w, _ in waves], polarity)]
    shown = plot
    if plot == "joint" and len(erp_positions(epochs["info"], picks)) < 3:
        shown = "butterfly"
        notes.append(
            "no channel positions (montage): drawn as butterfly, not joint; set_montage (e.g. "
            "standard_1005) before epoch_data gives the joint plot's topomaps"
        )
    largest = [erp_largest([r for r in rows if r["condition"] == w], polarity) for w, _ in waves]
    heads = [f"{r['condition']}: {r['channel']} {r['peak_uv']:.2f} µV at "
             f"{r['latency_ms']:.0f} ms" for r in largest]  # fmt: skip
    result = {
        "rows": rows,
        "summary": f"largest {polarity} peak in {times[i0] * 1e3:.0f} to {times[i1] * 1e3:.0f} "
        "ms: " + "; ".join(heads),
        "notes": notes,
        "conditions": names,
        "waves": [w for w, _ in waves],
        "pairs": pairs,
        "n_trials": {c: counts[c] for c in averaged},
        "window_ms": [float(times[i0] * 1e3), float(times[i1] * 1e3)],
        "polarity": polarity,
        "channels": picks,
        "baseline": baseline,
        "largest": largest,
        "plot": shown,
    }
    if shown == "compare":
        effect = erp_effect_channels(rows, names, [w for w, _ in waves[len(names) :]])
        result["plot_channels"] = picks[:ERP_MAX_PLOTTED] if channels else effect
    return result


def _erp_ms(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _erp_shown_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows the text lists: all of them, or the largest peaks of each wave when too many."""
    rows, waves = result["rows"], result.get("waves") or []
    if len(rows) <= TEXT_ROWS or not waves:
        return list(rows)
    each = max(TEXT_ROWS // len(waves), 3)
    sign = {"positive": 1, "negative": -1}.get(result["polarity"])
    out = []
    for wave in waves:
        mine = [r for r in rows if r["condition"] == wave]
        mine.sort(key=lambda r: -(r["peak_uv"] * sign if sign else abs(r["peak_uv"])))
        out += mine[:each]
    return out


def text(result: dict[str, Any]) -> str:
    """The ERPs as the model reads them: trials, window, baseline, each wave's largest peak,
    then every channel's peak (µV), latency (ms) and mean amplitude (µV)."""
    if not result.get("waves"):
        return "ERP: " + "; ".join(result.get("notes") or ["nothing measured"])
    a, b = result["window_ms"]
    counts = ", ".join(f"{c} {n}" for c, n in result["n_trials"].items())
    lines = [
        f"ERP ({result['polarity']} peaks, window {_erp_ms(a)} to {_erp_ms(b)} ms; "
        f"trials: {counts}; difference waves: A {ERP_MINUS} B, n = trials of both)",
        "largest peak per wave:",
    ]
    for r in result["largest"]:
        edge = " (on the window's edge)" if r["edge"] else ""
        lines.append(
            f"  {r['condition']}: {r['channel']} {r['peak_uv']:.2f} µV at "
            f"{_erp_ms(r['latency_ms'])} ms{edge}, mean {r['mean_uv']:.2f} µV"
        )
    lines += [f"note: {n}" for n in result.get("notes") or []]
    if result.get("plot_channels"):
        lines.append(f"compare plot channels: {', '.join(result['plot_channels'])}")
    shown = _erp_shown_rows(result)
    lines.append("channel: peak µV @ latency ms (mean µV in the window; * = peak on the edge)")
    for wave in result["waves"]:
        mine = [r for r in shown if r["condition"] == wave]
        cells = [
            f"{r['channel']} {r['peak_uv']:.2f}@{_erp_ms(r['latency_ms'])}"
            f"{'*' if r['edge'] else ''} ({r['mean_uv']:.2f})"
            for r in mine
        ]
        lines.append(f"{wave} (n={mine[0]['n_trials'] if mine else 0}): " + ", ".join(cells))
    if len(shown) < len(result["rows"]):
        lines.append(
            f"({len(shown)} of {len(result['rows'])} rows: the largest peaks of each wave; "
            "every row is in the structured content)"
        )
    return "\n".join(lines)


def figure(data: dict[str, Any], result: dict[str, Any], **params: Any) -> bytes | None:
    """The plot the result names (butterfly, joint or compare) as PNG bytes."""
    from brainchat.eeg.analysis.erp_plots import erp_figure

    if not result.get("waves"):
        return None
    epochs = data["epochs"]
    evokeds = erp_evokeds(epochs, result["conditions"], result["pairs"])
    return erp_figure(evokeds, result, erp_positions(epochs["info"], result["channels"]))


EXPORTED = [
    "ERP_MINUS", "ERP_POLARITY", "ERP_COMPARE_CHANNELS", "ERP_MAX_PLOTTED", "_erp_refuse",
    "_erp_match", "_erp_window", "erp_evokeds", "erp_peaks", "_erp_rows", "erp_baseline",
    "erp_positions", "erp_largest", "erp_effect_channels", "_erp_notes", "_erp_choose", "erp_analysis",
]  # fmt: skip
