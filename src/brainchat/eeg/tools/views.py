"""Read-only study operations that draw figures."""

from __future__ import annotations

import threading

from langchain_core.tools import ToolException

from brainchat.eeg.core.state import Op, StudyState
from brainchat.eeg.decoding.decoding import emit_image
from brainchat.eeg.preprocessing.preprocessing import _canonical, check_channels
from brainchat.tools.errors import ToolError, call


def _pick_raw(state: StudyState, file: str | None):
    if file is None:
        return state.raws[0]
    for rec, raw in zip(state.recordings, state.raws, strict=True):
        if file in (rec.name, rec.path.name):
            return raw
    raise ToolException(
        f"'{file}' is not loaded; loaded: {', '.join(r.name for r in state.recordings)}"
    )


def plot_raw_op(channels: list[str] | None, start: float, duration: float, file: str | None) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.preprocessing.plots import raw_traces

        state.require("loaded")
        raw = _pick_raw(state, file)
        if channels:
            check_channels((raw,), channels)
        names = _canonical(raw, channels) if channels else raw.ch_names[:20]
        if start >= raw.times[-1]:
            raise ToolException(
                f"start {start:g} s is past the end of the data ({raw.times[-1]:.0f} s)"
            )
        title = f"raw traces {start:g}-{start + duration:g} s"
        return state, emit_image(raw_traces(raw, names, start, duration), title)

    return op


def plot_psd_op(fmin: float, fmax: float, topomap: bool) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.preprocessing import plots

        state.require("loaded")
        nyquist = state.raws[0].info["sfreq"] / 2
        if fmax > nyquist:
            raise ToolException(f"fmax {fmax:g} Hz is above Nyquist ({nyquist:g} Hz)")
        if topomap:
            title = f"band-power topomap {fmin:g}-{fmax:g} Hz"
            return state, emit_image(plots.band_topomap(list(state.raws), fmin, fmax), title)
        title = f"PSD per channel group {fmin:g}-{fmax:g} Hz"
        return state, emit_image(plots.psd_by_group(list(state.raws), fmin, fmax), title)

    return op


def plot_epochs_op(channels: list[str] | None) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        import numpy as np

        from brainchat.eeg.preprocessing.plots import epochs_average

        state.require("epoched")
        e = state.eps
        names = list(e.info.ch_names)
        if channels:
            check_channels(state.raws, channels)
            chosen = _canonical(state.raws[0], channels)
        else:
            chosen = [c for c in ("C3", "Cz", "C4") if c in names] or names[:3]
        times = e.tmin + np.arange(e.X.shape[2]) / e.info["sfreq"]
        png = epochs_average(e.X, e.y, e.classes, times, names, chosen)
        return state, emit_image(png, f"epochs average per class ({', '.join(chosen)})")

    return op


def ica_components_op(components: list[int] | None) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.preprocessing.plots import ica_components

        if state.ica is None:
            raise ToolError("no ICA fitted: call ica_fit first", call("ica_fit"))
        n = state.ica.n_components_
        picks = components or list(range(min(n, 20)))
        bad = [k for k in picks if not 0 <= k < n]
        if bad:
            raise ToolException(f"component(s) {bad} out of range 0..{n - 1}")
        var = state.ica.pca_explained_variance_[:n] / state.ica.pca_explained_variance_.sum()
        desc = ", ".join(f"ICA{k:03d} {100 * var[k]:.1f}%" for k in picks)
        img = emit_image(ica_components(state.ica, state.raws[0].info, picks), "ICA components")
        return state, f"{n} components (approx. variance share): {desc}\n{img}"

    return op
