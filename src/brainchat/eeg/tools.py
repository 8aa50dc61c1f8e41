"""The EEG study as LangChain tools for the agent. mne/torch/matplotlib load on first use only."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from brainchat.agent.events import current_tool_call
from brainchat.eeg import schemas as s
from brainchat.eeg.study import Op, Step, Study, StudyState
from brainchat.tools.registry import set_flags

_READ_ONLY = {"read_only": True}
_DESTRUCTIVE = {"destructive": True}


async def _run(study: Study, op: Op, mutates_data: bool = False) -> str:
    """Run an op; unexpected library errors become a clear ToolException (the study is unchanged)."""
    try:
        return await study.run(op, mutates_data=mutates_data)
    except ToolException:
        raise
    except (ValueError, RuntimeError, TypeError, KeyError, OSError, MemoryError) as exc:
        name = current_tool_call()[1] or "the operation"
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise ToolException(f"{name} failed: {first}. The study is unchanged") from None


def _step(op: str, params: dict[str, Any], label: str) -> Callable[[], Op]:
    def make() -> Op:
        from brainchat.eeg.preprocessing import step_op

        return step_op(Step(op, params, label))

    return make


def _tool(fn: Callable[..., Awaitable[str]], name: str, description: str, schema: type,
          **flags: Any) -> BaseTool:  # fmt: skip
    tool = StructuredTool.from_function(coroutine=fn, name=name, description=description,
                                        args_schema=schema)  # fmt: skip
    return set_flags(tool, source="local", **flags)


def _data_tools(study: Study) -> list[BaseTool]:
    async def list_data_files(pattern: str = "*") -> str:
        from brainchat.eeg.views import list_files

        return list_files(study.data_dir, pattern)

    async def load_data(files: list[str]) -> str:
        from brainchat.eeg.preprocessing import load_op

        return await _run(study, load_op(study.data_dir, files))

    async def get_study_state() -> str:
        from brainchat.eeg.report import describe

        return describe(study.state)

    async def clear_study() -> str:
        return await _run(study, lambda state, stop: (StudyState(), "study cleared: nothing loaded"))

    return [
        _tool(list_data_files, "list_data_files", "List EEG files (EDF, BDF, GDF, FIF, EEGLAB .set, "
              "BrainVision .vhdr) in the data folder, with inferred subject/session.",
              s.ListFilesArgs, **_READ_ONLY),  # fmt: skip
        _tool(load_data, "load_data", "Load one or more EEG files (paths relative to the data "
              "folder) into the study. Load all files of a study in one call.", s.LoadArgs),
        _tool(get_study_state, "get_study_state", "Show the study: stage, files, channels, "
              "sampling rate, duration, events per class, preprocessing history, epochs, models.",
              s.NoArgs, **_READ_ONLY),  # fmt: skip
        _tool(clear_study, "clear_study", "Discard everything in the study (data, epochs, models).",
              s.NoArgs, **_DESTRUCTIVE),  # fmt: skip
    ]


def _preprocessing_tools(study: Study) -> list[BaseTool]:
    async def pre(make: Callable[[], Op]) -> str:
        return await _run(study, make(), mutates_data=True)

    async def bandpass_filter(l_freq: float | None = None, h_freq: float | None = None) -> str:
        label = f"band-pass {l_freq:g}-{h_freq:g} Hz" if l_freq and h_freq else (
            f"high-pass {l_freq:g} Hz" if l_freq else f"low-pass {h_freq:g} Hz")
        return await pre(_step("bandpass", {"l_freq": l_freq, "h_freq": h_freq}, label))

    async def notch_filter(freqs: list[float] = [50.0]) -> str:  # noqa: B006
        return await pre(_step("notch", {"freqs": freqs}, f"notch {'/'.join(f'{f:g}' for f in freqs)} Hz"))

    async def resample_data(sfreq: float) -> str:
        return await pre(_step("resample", {"sfreq": sfreq}, f"resample {sfreq:g} Hz"))

    async def set_reference(ref: Any = "average") -> str:
        label = "average reference" if ref == "average" else f"reference {'+'.join(ref)}"
        return await pre(_step("reference", {"ref": ref}, label))

    async def select_channels(keep: list[str] | None = None, drop: list[str] | None = None) -> str:
        label = f"keep {len(keep)} ch" if keep else f"drop {', '.join(drop or [])}"
        return await pre(_step("select", {"keep": keep, "drop": drop}, label))

    async def set_montage(name: str = "standard_1005") -> str:
        return await pre(_step("montage", {"name": name}, f"montage {name}"))

    async def reset_preprocessing() -> str:
        from brainchat.eeg.preprocessing import reset_op

        return await _run(study, reset_op)

    return [
        _tool(bandpass_filter, "bandpass_filter", "Band-pass (or high/low-pass) filter the loaded "
              "recordings, e.g. 8-30 Hz for motor imagery.", s.BandpassArgs),  # fmt: skip
        _tool(notch_filter, "notch_filter", "Remove line noise at the given frequencies.", s.NotchArgs),
        _tool(resample_data, "resample_data", "Resample the recordings to a new rate.", s.ResampleArgs),
        _tool(set_reference, "set_reference", "Re-reference the EEG (average or given channels).",
              s.ReferenceArgs),  # fmt: skip
        _tool(select_channels, "select_channels", "Keep or drop channels.", s.SelectChannelsArgs),
        _tool(set_montage, "set_montage", "Set standard electrode positions (needed for topomaps "
              "and ICA maps).", s.MontageArgs),  # fmt: skip
        _tool(reset_preprocessing, "reset_preprocessing", "Undo all preprocessing: back to the data "
              "as loaded (discards epochs, split and models).", s.NoArgs, **_DESTRUCTIVE),  # fmt: skip
    ]


def _ica_tools(study: Study) -> list[BaseTool]:
    async def ica_fit(n_components: int = 15, method: str = "fastica", seed: int = 0) -> str:
        from brainchat.eeg.decoding import ica_fit_op

        return await _run(study, ica_fit_op(n_components, method, seed))

    async def ica_components(components: list[int] | None = None) -> str:
        from brainchat.eeg.views import ica_components_op

        return await _run(study, ica_components_op(components))

    async def ica_apply(exclude: list[int]) -> str:
        from brainchat.eeg.decoding import ica_apply_step
        from brainchat.eeg.preprocessing import step_op

        def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
            new, text = step_op(ica_apply_step(state, exclude))(state, stop)
            return replace(new, ica=None), text

        return await _run(study, op, mutates_data=True)

    return [
        _tool(ica_fit, "ica_fit", "Fit ICA on the continuous data (high-pass >= 1 Hz first).",
              s.IcaFitArgs, long_running=True, timeout=1800),  # fmt: skip
        _tool(ica_components, "ica_components", "List and plot the fitted ICA components.",
              s.IcaComponentsArgs, **_READ_ONLY),  # fmt: skip
        _tool(ica_apply, "ica_apply", "Remove the given ICA components from the data.", s.IcaApplyArgs),
    ]


def _analysis_tools(study: Study) -> list[BaseTool]:
    async def epoch_data(tmin: float = 0.5, tmax: float = 2.5, events: list[str] | None = None,
                         baseline: Any = None, reject_uv: float | None = None) -> str:  # fmt: skip
        from brainchat.eeg.dataset import epoch_op

        base = tuple(baseline) if baseline is not None else None
        return await _run(study, epoch_op(tmin, tmax, events, base, reject_uv))

    async def split_dataset(by: str = "trial", test_ratio: float = 0.2, val_ratio: float = 0.2,
                            seed: int = 0) -> str:  # fmt: skip
        from brainchat.eeg.dataset import split_op

        return await _run(study, split_op(by, test_ratio, val_ratio, seed))

    async def train_model(**kwargs: Any) -> str:
        from brainchat.eeg.decoding import train_op
        from brainchat.eeg.training import TrainConfig

        return await _run(study, train_op(TrainConfig(**kwargs)))

    async def evaluate_model(model: str | None = None) -> str:
        from brainchat.eeg.decoding import evaluate_op

        return await _run(study, evaluate_op(model))

    return [
        _tool(epoch_data, "epoch_data", "Cut epochs around the class events (annotations).",
              s.EpochArgs),  # fmt: skip
        _tool(split_dataset, "split_dataset", "Split epochs into train/validation/test, by trial, "
              "session or subject.", s.SplitArgs),  # fmt: skip
        _tool(train_model, "train_model", "Train a decoder (EEGNet, ShallowConvNet, SCCNet or "
              "CSP+LDA) on the training set; shows progress each epoch; can be stopped.",
              s.TrainArgs, long_running=True, timeout=3600),  # fmt: skip
        _tool(evaluate_model, "evaluate_model", "Test-set metrics of a trained model (accuracy, "
              "balanced accuracy, kappa, ROC AUC, per-class P/R/F1) with confusion matrix and "
              "training-curve images.", s.EvaluateArgs),  # fmt: skip
    ]


def _plot_tools(study: Study) -> list[BaseTool]:
    async def plot_raw(channels: list[str] | None = None, start: float = 0.0,
                       duration: float = 10.0, file: str | None = None) -> str:  # fmt: skip
        from brainchat.eeg.views import plot_raw_op

        return await _run(study, plot_raw_op(channels, start, duration, file))

    async def plot_psd(fmin: float = 1.0, fmax: float = 45.0) -> str:
        from brainchat.eeg.views import plot_psd_op

        return await _run(study, plot_psd_op(fmin, fmax, topomap=False))

    async def plot_topomap(fmin: float = 8.0, fmax: float = 13.0) -> str:
        from brainchat.eeg.views import plot_psd_op

        return await _run(study, plot_psd_op(fmin, fmax, topomap=True))

    async def plot_epochs_average(channels: list[str] | None = None) -> str:
        from brainchat.eeg.views import plot_epochs_op

        return await _run(study, plot_epochs_op(channels))

    return [
        _tool(plot_raw, "plot_raw", "Plot raw traces of a time window.", s.PlotRawArgs, **_READ_ONLY),
        _tool(plot_psd, "plot_psd", "Plot the power spectrum per channel group.", s.PsdArgs,
              **_READ_ONLY),  # fmt: skip
        _tool(plot_topomap, "plot_topomap", "Plot a band-power topographic map.", s.TopomapArgs,
              **_READ_ONLY),  # fmt: skip
        _tool(plot_epochs_average, "plot_epochs_average", "Plot the epochs average (and power) "
              "per class for a few channels.", s.EpochsAverageArgs, **_READ_ONLY),  # fmt: skip
    ]


def build_eeg_tools(study: Study) -> list[BaseTool]:
    """Every EEG tool, bound to one study, with read-only/destructive/long-running flags."""
    return [*_data_tools(study), *_preprocessing_tools(study), *_ica_tools(study),
            *_analysis_tools(study), *_plot_tools(study)]  # fmt: skip
