"""The EEG tools that look at the data (plots) and the ICA tools."""

from __future__ import annotations

import threading
from dataclasses import replace

from langchain_core.tools import BaseTool

from brainchat.eeg.core.state import StudyState
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools import schemas as s
from brainchat.eeg.tools.toolkit import READ_ONLY, make_tool, run_op


def ica_tools(study: Study) -> list[BaseTool]:
    async def ica_fit(n_components: int = 15, method: str = "fastica", seed: int = 0) -> str:
        from brainchat.eeg.decoding.decoding import ica_fit_op
        from brainchat.eeg.study.memory import guarded, ica_fit_need

        record = {"op": "ica_fit", "n_components": n_components, "method": method, "seed": seed}
        op = guarded(ica_fit_op(n_components, method, seed), ica_fit_need, study.max_operation_mb)
        return await run_op(study, op, record=record)

    async def ica_components(components: list[int] | None = None) -> str:
        from brainchat.eeg.tools.views import ica_components_op

        return await run_op(study, ica_components_op(components))

    async def ica_apply(exclude: list[int]) -> str:
        from brainchat.eeg.decoding.decoding import ica_apply_step
        from brainchat.eeg.preprocessing.preprocessing import step_op

        def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
            new, text = step_op(ica_apply_step(state, exclude))(state, stop)
            return replace(new, ica=None), text

        from brainchat.eeg.study.memory import guarded, step_need

        checked = guarded(op, step_need("ica", {}), study.max_operation_mb)
        return await run_op(
            study, checked, mutates_data=True, record={"op": "ica_apply", "exclude": list(exclude)}
        )

    return [
        make_tool(
            ica_fit,
            "ica_fit",
            "Fit ICA on the continuous data (high-pass >= 1 Hz first).",
            s.IcaFitArgs,
            long_running=True,
            timeout=1800,
        ),
        make_tool(
            ica_components,
            "ica_components",
            "List and plot the fitted ICA components.",
            s.IcaComponentsArgs,
            **READ_ONLY,
        ),
        make_tool(
            ica_apply, "ica_apply", "Remove the given ICA components from the data.", s.IcaApplyArgs
        ),
    ]


def plot_tools(study: Study) -> list[BaseTool]:
    async def plot_raw(
        channels: list[str] | None = None,
        start: float = 0.0,
        duration: float = 10.0,
        file: str | None = None,
    ) -> str:
        from brainchat.eeg.tools.views import plot_raw_op

        return await run_op(study, plot_raw_op(channels, start, duration, file))

    async def plot_psd(fmin: float = 1.0, fmax: float = 45.0) -> str:
        from brainchat.eeg.tools.views import plot_psd_op

        return await run_op(study, plot_psd_op(fmin, fmax, topomap=False))

    async def plot_topomap(fmin: float = 8.0, fmax: float = 13.0) -> str:
        from brainchat.eeg.tools.views import plot_psd_op

        return await run_op(study, plot_psd_op(fmin, fmax, topomap=True))

    async def plot_epochs_average(channels: list[str] | None = None) -> str:
        from brainchat.eeg.tools.views import plot_epochs_op

        return await run_op(study, plot_epochs_op(channels))

    return [
        make_tool(
            plot_raw, "plot_raw", "Plot raw traces of a time window.", s.PlotRawArgs, **READ_ONLY
        ),
        make_tool(
            plot_psd,
            "plot_psd",
            "Plot the power spectrum per channel group.",
            s.PsdArgs,
            **READ_ONLY,
        ),
        make_tool(
            plot_topomap,
            "plot_topomap",
            "Plot a band-power topographic map.",
            s.TopomapArgs,
            **READ_ONLY,
        ),
        make_tool(
            plot_epochs_average,
            "plot_epochs_average",
            "Plot the epochs average (and power) per class for a few channels.",
            s.EpochsAverageArgs,
            **READ_ONLY,
        ),
    ]
