"""The ERP figures (butterfly, joint, compare) as PNG bytes, drawn with matplotlib's object API."""

from __future__ import annotations

from typing import Any

from brainchat.eeg.core.figures import figure_png

MAX_WAVES = 6  # waves drawn in one figure (the table has them all)


def _png(fig: Any) -> bytes:
    return figure_png(fig, dpi=100, bbox_inches="tight")  # with its SVG


def _frame(ax: Any, result: dict[str, Any]) -> None:
    """The window shaded, the event and zero marked."""
    a, b = result["window_ms"]
    ax.axvspan(a, b, color="tab:orange", alpha=0.12, lw=0)
    ax.axvline(0, color="k", lw=0.6)
    ax.axhline(0, color="k", lw=0.4)
    ax.set_ylabel("µV")


def _traces(ax: Any, evoked: Any, result: dict[str, Any], wave: str) -> None:
    """Every channel's average of one wave, its largest peak marked."""
    picks = [evoked.ch_names.index(ch) for ch in result["channels"]]
    ms = evoked.times * 1e3
    ax.plot(ms, evoked.data[picks].T * 1e6, lw=0.6, alpha=0.7)
    _frame(ax, result)
    top = next(r for r in result["largest"] if r["condition"] == wave)
    ax.plot([top["latency_ms"]], [top["peak_uv"]], "o", color="tab:red", ms=5)
    ax.annotate(
        f"{top['channel']} {top['peak_uv']:.2f} µV @ {top['latency_ms']:.0f} ms",
        (top["latency_ms"], top["peak_uv"]), xytext=(5, 5), textcoords="offset points",
        fontsize=8, color="tab:red",
    )  # fmt: skip
    ax.set_title(f"{wave} (n={top['n_trials']})", fontsize=9)


def butterfly(evokeds: dict[str, Any], result: dict[str, Any]) -> bytes:
    from matplotlib.figure import Figure

    waves = result["waves"][:MAX_WAVES]
    fig = Figure(figsize=(8, 2.3 * len(waves) + 0.8), layout="constrained")
    axes = fig.subplots(len(waves), 1, sharex=True, squeeze=False)[:, 0]
    for ax, wave in zip(axes, waves, strict=True):
        _traces(ax, evokeds[wave], result, wave)
    axes[-1].set_xlabel("time (ms)")
    fig.suptitle(f"ERP butterfly, {len(result['channels'])} channels (window shaded)")
    return _png(fig)


def joint(evokeds: dict[str, Any], result: dict[str, Any], placed: list[str]) -> bytes:
    """Butterfly of each wave beside its topomap (the `placed` channels, those with a position)
    at the latency of its largest peak."""
    import mne
    import numpy as np
    from matplotlib.figure import Figure

    waves = result["waves"][:MAX_WAVES]
    fig = Figure(figsize=(10, 2.6 * len(waves) + 0.8), layout="constrained")
    axes = fig.subplots(len(waves), 2, squeeze=False, gridspec_kw={"width_ratios": [3, 1]})
    for (left, right), wave in zip(axes, waves, strict=True):
        ev = evokeds[wave]
        _traces(left, ev, result, wave)
        top = next(r for r in result["largest"] if r["condition"] == wave)
        at = int(np.argmin(np.abs(ev.times * 1e3 - top["latency_ms"])))
        idx = [ev.ch_names.index(ch) for ch in placed]
        mne.viz.plot_topomap(
            ev.data[idx, at] * 1e6, mne.pick_info(ev.info, idx), axes=right, show=False,
            contours=4,
        )  # fmt: skip
        right.set_title(f"{top['latency_ms']:.0f} ms (µV)", fontsize=9)
    axes[-1, 0].set_xlabel("time (ms)")
    fig.suptitle("ERP joint: butterfly and topomap at each wave's largest peak")
    return _png(fig)


def compare(evokeds: dict[str, Any], result: dict[str, Any]) -> bytes:
    """The conditions (solid) and difference waves (dashed) overlaid at a few channels."""
    from matplotlib.figure import Figure

    chans = result.get("plot_channels") or result["channels"][:3]
    cols = min(len(chans), 3)
    rows = (len(chans) + cols - 1) // cols
    fig = Figure(figsize=(4.2 * cols, 3.0 * rows + 0.6))
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True).ravel()
    diffs = set(result["waves"]) - set(result["conditions"])
    for ax, ch in zip(axes, chans, strict=False):
        for wave in result["waves"][: MAX_WAVES + 2]:
            ev = evokeds[wave]
            style = "--" if wave in diffs else "-"
            trace = ev.data[ev.ch_names.index(ch)] * 1e6
            ax.plot(ev.times * 1e3, trace, style, lw=1.0, label=wave)
        _frame(ax, result)
        ax.set_title(ch, fontsize=9)
        ax.set_xlabel("time (ms)")
    for ax in axes[len(chans) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7)
    fig.suptitle("ERP by condition (window shaded; dashed: difference waves)")
    return _png(fig)


def erp_figure(evokeds: dict[str, Any], result: dict[str, Any], placed: list[str]) -> bytes:
    """The plot the result names, of the averages (mne.Evoked by wave name)."""
    if result["plot"] == "compare":
        return compare(evokeds, result)
    if result["plot"] == "joint":
        return joint(evokeds, result, placed)
    return butterfly(evokeds, result)
