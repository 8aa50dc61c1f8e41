"""PNG figures for the UI, drawn with matplotlib's object API (no pyplot, no GUI backend)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from brainchat.eeg.core.figures import figure_png

_GROUPS = {
    "Fp": "frontal",
    "AF": "frontal",
    "F": "frontal",
    "FC": "central",
    "C": "central",
    "CP": "central",
    "FT": "temporal",
    "T": "temporal",
    "TP": "temporal",
    "P": "parietal",
    "PO": "parietal-occipital",
    "O": "occipital",
    "I": "occipital",
}


def _png(fig: Figure) -> bytes:
    return figure_png(fig, dpi=90, bbox_inches="tight")  # with its SVG


def channel_group(name: str) -> str:
    prefix = re.match(r"[A-Za-z]+?(?=\d|z|Z|$)", name)
    key = prefix.group(0) if prefix else name
    for k in (key, key[:2], key[:1]):
        for g, label in _GROUPS.items():
            if g.lower() == k.lower():
                return label
    return "other"


def raw_traces(raw: Any, channels: list[str], start: float, duration: float) -> bytes:
    """Stacked traces of a few channels over a time window, in microvolts."""
    sfreq = raw.info["sfreq"]
    a, b = int(start * sfreq), int(min(raw.times[-1], start + duration) * sfreq)
    data = raw.get_data(picks=channels, start=a, stop=b) * 1e6
    times = np.arange(a, a + data.shape[1]) / sfreq
    spread = 4 * np.median(np.std(data, axis=1)) + 1e-9
    fig = Figure(figsize=(10, 0.35 * len(channels) + 1.5))
    ax = fig.add_subplot()
    for i, trace in enumerate(data):
        ax.plot(times, trace - trace.mean() - i * spread, lw=0.6, color="k")
    for onset, desc in zip(raw.annotations.onset, raw.annotations.description, strict=True):
        if start <= onset <= start + duration:
            ax.axvline(onset, color="tab:red", lw=0.8)
            ax.text(onset, spread, desc, fontsize=7, color="tab:red")
    ax.set_yticks(-np.arange(len(channels)) * spread, channels, fontsize=7)
    ax.set_xlabel("time (s)")
    ax.set_title(f"raw EEG, {start:g}-{start + duration:g} s (scale {spread:.0f} µV/row)")
    return _png(fig)


def psd_by_group(raws: list[Any], fmin: float, fmax: float) -> bytes:
    """Mean power spectral density (dB) per channel group, over all recordings."""
    psds = [r.compute_psd(fmin=fmin, fmax=fmax, verbose="error") for r in raws]
    freqs = psds[0].freqs
    data = np.mean([p.get_data() for p in psds], axis=0)  # (ch, f)
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    groups: dict[str, list[int]] = {}
    for i, ch in enumerate(psds[0].ch_names):  # the data channels the PSD has (no EOG, ECG)
        groups.setdefault(channel_group(ch), []).append(i)
    for label, idx in groups.items():
        ax.plot(freqs, 10 * np.log10(data[idx].mean(0) * 1e12), label=f"{label} ({len(idx)})")
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("PSD (dB re µV²/Hz)")
    ax.legend(fontsize=8)
    ax.set_title("power spectral density per channel group")
    return _png(fig)


def with_positions(info: Any) -> Any:
    """The info, given standard 10-05 positions if it has none (for topomaps)."""
    from brainchat.eeg.preprocessing.preprocessing import montage_name

    if info.get_montage() is not None:
        return info
    info = info.copy()
    info.set_montage(
        montage_name("standard_1005"), match_case=False, on_missing="ignore", verbose="error"
    )
    return info


def band_topomap(raws: list[Any], fmin: float, fmax: float) -> bytes:
    import mne

    psds = [r.compute_psd(fmin=fmin, fmax=fmax, verbose="error") for r in raws]
    power = np.mean([p.get_data().mean(axis=1) for p in psds], axis=0)
    fig = Figure(figsize=(4, 4))
    ax = fig.add_subplot()
    mne.viz.plot_topomap(
        10 * np.log10(power * 1e12), with_positions(raws[0].info), axes=ax, show=False, contours=4
    )
    ax.set_title(f"band power {fmin:g}-{fmax:g} Hz (dB)")
    return _png(fig)


def epochs_average(X: np.ndarray, y: np.ndarray, classes, times, ch_names, channels) -> bytes:
    """Average (evoked) and mean band power envelope per class for a few channels."""
    idx = [ch_names.index(c) for c in channels]
    fig = Figure(figsize=(4 * len(idx), 5))
    axes = fig.subplots(2, len(idx), squeeze=False)
    for j, c in enumerate(idx):
        for k, cls in enumerate(classes):
            sel = X[y == k, c] * 1e6
            axes[0, j].plot(times, sel.mean(0), label=cls, lw=0.8)
            axes[1, j].plot(times, (sel**2).mean(0), label=cls, lw=0.8)
        axes[0, j].set_title(ch_names[c])
        axes[1, j].set_xlabel("time (s)")
    axes[0, 0].set_ylabel("average (µV)")
    axes[1, 0].set_ylabel("mean power (µV²)")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("epochs average per class")
    return _png(fig)


def training_curves(history: dict[str, list[float]], title: str) -> bytes:
    fig = Figure(figsize=(8, 3.5))
    ax1, ax2 = fig.subplots(1, 2)
    for key, ax in (("loss", ax1), ("acc", ax2)):
        for prefix, label in (("", "train"), ("val_", "validation")):
            values = history.get(prefix + key) or []
            if values:
                ax.plot(
                    range(1, len(values) + 1),
                    values,
                    marker="." if len(values) < 30 else "",
                    label=label,
                )
        ax.set_xlabel("epoch")
        ax.set_title(key)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    return _png(fig)


def confusion(cm: list[list[int]], classes: tuple[str, ...], title: str) -> bytes:
    cm_arr = np.asarray(cm)
    fig = Figure(figsize=(4, 3.6))
    ax = fig.add_subplot()
    ax.imshow(cm_arr, cmap="Blues")
    for (i, j), v in np.ndenumerate(cm_arr):
        ax.text(
            j,
            i,
            str(v),
            ha="center",
            va="center",
            color="white" if v > cm_arr.max() / 2 else "black",
        )
    ax.set_xticks(range(len(classes)), classes, rotation=30, fontsize=8)
    ax.set_yticks(range(len(classes)), classes, fontsize=8)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title)
    return _png(fig)


def ica_components(ica: Any, info: Any, picks: list[int]) -> bytes:
    import mne

    maps = ica.get_components()
    cols = min(5, len(picks))
    rows = -(-len(picks) // cols)
    fig = Figure(figsize=(2.2 * cols, 2.3 * rows))
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    pos = with_positions(mne.pick_info(info, mne.pick_channels(info.ch_names, ica.ch_names)))
    for ax, k in zip(axes, picks, strict=False):
        mne.viz.plot_topomap(maps[:, k], pos, axes=ax, show=False, contours=0)
        ax.set_title(f"ICA{k:03d}", fontsize=8)
    for ax in axes[len(picks) :]:
        ax.set_axis_off()
    return _png(fig)
