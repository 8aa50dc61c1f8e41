"""Bench: the analysis tools (band power, ERP, time-frequency) against plain MNE on the same data.

    .venv/bin/python bench/analyses.py [--subjects 2] [--trials 60] [--repeats 3]

Each tool runs through the Study as the agent calls it (the numbers, their text, the figure,
the log entry); plain MNE computes the same numbers the way its tutorials do and draws the
figure a researcher would (Spectrum.plot, Evoked.plot, AverageTFR.plot), rendered to PNG as the
tools render theirs. Prints the median
seconds of each, the ratio tool/MNE (target: at most 1.1) and the largest relative difference
between the tool's numbers and MNE's (target: identical, below 1e-9).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import mne  # noqa: E402
import numpy as np  # noqa: E402

BANDS = {"delta": (1, 4), "theta": (4, 8), "alpha": (8, 13), "beta": (13, 30), "gamma": (30, 45)}
ERP_WINDOW, TFR_WINDOW, BASELINE = (0.1, 0.5), (0.5, 2.5), (-1.0, 0.0)


DRAW = {"on": True}  # off: the numbers alone (the compute-only comparison)


def _drawn(fig: Any) -> bytes:
    """The figure rendered as the user sees it (a PNG, as the tools render theirs), closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def mne_band_power(raws: list[Any]) -> dict[tuple[str, str, str], float]:
    """Welch PSD (2 s Hamming windows, half overlap), integrated over each band, in µV²."""
    out = {}
    for i, raw in enumerate(raws):
        n = int(2 * raw.info["sfreq"])
        spectrum = raw.compute_psd(fmin=1, fmax=45, n_fft=n, n_per_seg=n, n_overlap=n // 2,
                                   picks="eeg", verbose="error")  # fmt: skip
        psd, freqs = spectrum.get_data(return_freqs=True)
        step = freqs[1] - freqs[0]
        for band, (lo, hi) in BANDS.items():
            power = psd[:, (freqs >= lo) & (freqs < hi)].sum(axis=1) * step * 1e12
            for ch, value in zip(spectrum.ch_names, power, strict=True):
                out[(str(i), ch, band)] = float(value)
        if DRAW["on"]:
            _drawn(spectrum.plot(show=False))
    return out


def mne_erp(epochs: mne.Epochs) -> dict[tuple[str, str, str], float]:
    """Each condition's average, its peaks (Evoked.get_peak's choice) and mean in the window."""
    out = {}
    for condition in epochs.event_id:
        evoked = epochs[condition].average()
        part = evoked.copy().crop(*ERP_WINDOW)
        data = part.data
        idx = np.argmax(np.abs(data), axis=1)
        for k, ch in enumerate(evoked.ch_names):
            out[(condition, ch, "peak")] = float(data[k, idx[k]] * 1e6)
            out[(condition, ch, "latency")] = float(part.times[idx[k]] * 1e3)
            out[(condition, ch, "mean")] = float(data[k].mean() * 1e6)
        if DRAW["on"]:
            _drawn(evoked.plot(show=False))
    return out


def mne_tfr(epochs: mne.Epochs) -> dict[tuple[str, str, str], float]:
    """Morlet power per condition (8-13 Hz, n_cycles f/2, decim 5), percent change from the
    baseline, averaged over the band and the window."""
    out = {}
    freqs = np.arange(8.0, 14.0)
    for condition in epochs.event_id:
        tfr = epochs[condition].compute_tfr("morlet", freqs, n_cycles=freqs / 2, decim=5,
                                            average=True, verbose="error")  # fmt: skip
        tfr.apply_baseline(BASELINE, mode="percent", verbose="error")
        sel = (tfr.times >= TFR_WINDOW[0] - 1e-9) & (tfr.times <= TFR_WINDOW[1] + 1e-9)
        change = tfr.data[:, :, sel].mean(axis=(1, 2)) * 100
        for ch, value in zip(tfr.ch_names, change, strict=True):
            out[(condition, ch, "mu")] = float(value)
        for fig in tfr.plot(picks=["C3", "Cz", "C4"], show=False) if DRAW["on"] else []:
            _drawn(fig)
    return out


def plain_epochs(raws: list[Any], tmin: float, tmax: float, baseline: Any) -> mne.Epochs:
    parts = []
    for raw in raws:
        events, ids = mne.events_from_annotations(raw, verbose="error")
        parts.append(mne.Epochs(raw, events, ids, tmin, tmax, baseline=baseline, preload=True,
                                verbose="error"))  # fmt: skip
    return mne.concatenate_epochs(parts, verbose="error")


def tool_numbers(op: str, rows: list[dict[str, Any]], names: list[str]) -> dict:
    out: dict[tuple[str, str, str], float] = {}
    for r in rows:
        if op == "band_power":
            out[(str(names.index(r["recording"])), r["channel"], r["band"])] = r["power_uv2"]
        elif op == "erp":
            for key, col in (("peak", "peak_uv"), ("latency", "latency_ms"), ("mean", "mean_uv")):
                out[(r["condition"], r["channel"], key)] = r[col]
        else:
            out[(r["condition"], r["channel"], r["band"])] = r["change_percent"]
    return out


def largest_difference(tool: dict, plain: dict) -> float:
    assert tool.keys() == plain.keys(), sorted(set(tool) ^ set(plain))[:5]
    return max(abs(tool[k] - plain[k]) / max(abs(plain[k]), 1e-12) for k in plain)


class Through:
    """The study of one session, its tools by name, epoched as each analysis needs."""

    def __init__(self, data_dir: Path, files: list[str]) -> None:
        from brainchat.eeg.study.study import Study
        from brainchat.eeg.tools.tools import build_eeg_tools

        self.study = Study(data_dir)
        self.tools = {t.name: t for t in build_eeg_tools(self.study)}
        self.files = files

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        call = {"name": name, "args": args, "id": "bench", "type": "tool_call"}
        return await self.tools[name].ainvoke(call)

    async def ready(self, epoched: tuple[float, float, Any] | None) -> None:
        await self.call("clear_study", {})
        await self.call("load_data", {"files": self.files})
        if epoched:
            tmin, tmax, baseline = epoched
            await self.call("epoch_data", {"tmin": tmin, "tmax": tmax, "baseline": baseline})


CASES = {  # analysis: (tool, its arguments, the epochs it needs: tmin, tmax, baseline)
    "band_power": ("band_power", {"source": "recordings"}, None),
    "erp": ("erp_analysis", {"window": list(ERP_WINDOW)}, (-0.2, 0.8, [-0.2, 0.0])),
    "tfr": ("time_frequency", {"bands": ["mu"], "baseline": list(BASELINE), "window": list(TFR_WINDOW)}, (-1.0, 3.0, None)),
}  # fmt: skip


def run_plain(op: str, paths: list[Path]) -> tuple[float, dict]:
    raws = [mne.io.read_raw_edf(p, preload=True, verbose="error") for p in paths]
    if op == "band_power":
        return _timed(mne_band_power, raws)
    tmin, tmax, baseline = CASES[op][2]
    epochs = plain_epochs(raws, tmin, tmax, tuple(baseline) if baseline else None)
    return _timed(mne_erp if op == "erp" else mne_tfr, epochs)


def _timed(fn: Any, arg: Any) -> tuple[float, dict]:
    start = time.perf_counter()
    numbers = fn(arg)
    return time.perf_counter() - start, numbers


async def run_entry(op: str, through: Through) -> float:
    """The analysis's own function alone (no figure, text or log), on the same study."""
    from brainchat.eeg.core.analyses import ANALYSES, analysis_data, module_of

    tool, args, epoched = CASES[op]
    await through.ready(epoched)
    data = analysis_data(through.study.state)
    start = time.perf_counter()
    getattr(module_of(op), ANALYSES[op].entry)(data, **args)
    return time.perf_counter() - start


async def run_tool(op: str, through: Through) -> tuple[float, dict]:
    tool, args, epoched = CASES[op]
    await through.ready(epoched)
    start = time.perf_counter()
    message = await through.call(tool, args)
    seconds = time.perf_counter() - start
    names = [r.name for r in through.study.state.recordings]
    return seconds, tool_numbers(op, message.artifact["structured"]["rows"], names)


def main() -> None:
    from brainchat.eeg.io.synthetic import write_demo_set

    parser = argparse.ArgumentParser()
    parser.add_argument("--subjects", type=int, default=2)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_demo_set(tmp, subjects=args.subjects, sessions=1, trials=args.trials)
        through = Through(Path(tmp), [p.name for p in paths])
        print(f"{len(paths)} recording(s), {args.trials} trials each, 22 ch @ 250 Hz; "
              f"median of {args.repeats} runs")  # fmt: skip
        for op in CASES:
            plain, tool, diff = [], [], 0.0
            for _ in range(args.repeats):  # alternated, so drift hits both alike
                seconds, numbers = run_plain(op, paths)
                plain.append(seconds)
                seconds, mine = asyncio.run(run_tool(op, through))
                tool.append(seconds)
                diff = max(diff, largest_difference(mine, numbers))
            entry, bare = [], []
            for _ in range(args.repeats):  # the numbers alone: no figure on either side
                entry.append(asyncio.run(run_entry(op, through)))
                DRAW["on"] = False
                bare.append(run_plain(op, paths)[0])
                DRAW["on"] = True
            a, b = statistics.median(tool), statistics.median(plain)
            c, d = statistics.median(entry), statistics.median(bare)
            print(f"{op:<11} tool {a:6.2f} s   plain MNE {b:6.2f} s   ratio {a / b:4.2f}   "
                  f"largest relative difference {diff:.1e}")  # fmt: skip
            print(f"{'':<11} numbers alone: {c:7.3f} s vs {d:7.3f} s   ratio {c / d:4.2f}")


if __name__ == "__main__":
    main()
