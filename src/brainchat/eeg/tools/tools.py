"""The EEG study as LangChain tools for the agent. mne/torch/matplotlib load on first use only."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, ToolException

from brainchat.eeg.core.state import Op, StudyState
from brainchat.eeg.io.listing import MAX_LISTED_ENTRIES
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools import schemas as s
from brainchat.eeg.tools.artifact_tools import artifact_tools
from brainchat.eeg.tools.bids_tools import LOAD_DESCRIPTION, bids_tools, expand_files  # BIDS
from brainchat.eeg.tools.bids_tools import LoadArgs as BidsLoadArgs
from brainchat.eeg.tools.crossval_tool import crossval_tools
from brainchat.eeg.tools.erp_tool import erp_tools
from brainchat.eeg.tools.fetch_tool import fetch_tools
from brainchat.eeg.tools.spectra_tool import spectra_tools
from brainchat.eeg.tools.tfr_tool import tfr_tools
from brainchat.eeg.tools.toolkit import (
    DESTRUCTIVE,
    READ_ONLY,
    TRAINING_MODULES,
    export_study,
    in_thread,
    make_tool,
    preload,
    run_op,
    step,
)
from brainchat.eeg.tools.view_tools import ica_tools, plot_tools


def _channels_checked(*, data_dir: Any, files: list[str], stop: threading.Event) -> str:
    """Several files are loaded together only if they share one channel set (a ToolError names
    the groups otherwise), checked from their headers before any data is read."""
    from brainchat.eeg.io.channel_sets import check_channel_sets

    check_channel_sets(data_dir, files, stop)
    return ""


async def _load(study: Study, files: list[str], mixed: bool, bids: dict[str, Any]) -> str:
    """load_data: a BIDS folder expanded to its recordings, their channel sets compared unless
    the call says they differ on purpose (then the load warns), the files read."""
    from brainchat.eeg.preprocessing.preprocessing import load_op

    files = await expand_files(study, files, bids)  # BIDS: a dataset's folder
    if not mixed:
        await in_thread(_channels_checked, data_dir=study.data_dir, files=files)
    op = load_op(study.data_dir, files, study.max_operation_mb)
    return await run_op(study, op, record={"op": "load", "files": list(files)})


def _own_uploads(study: Study) -> set[str]:
    """The files uploaded in this conversation (its upload lines: "name (8 ch, ...)")."""
    return {line.rsplit(" (", 1)[0] for line in study.uploads}


def _data_tools(study: Study) -> list[BaseTool]:
    def list_data_files(pattern: str = "*", *, stop: threading.Event) -> str:
        from brainchat.eeg.io.listing import list_files

        return list_files(study.data_dir, pattern, stop, mine=_own_uploads(study))

    async def load_data(files: list[str], mixed_channels: bool = False, **bids: Any) -> str:
        return await _load(study, files, mixed_channels, bids)

    async def get_study_state() -> str:
        from brainchat.eeg.core.report import describe

        await study.restore()  # a resumed conversation's study is replayed first
        return await in_thread(lambda *, stop: describe(study.state))

    async def clear_study() -> str:
        return await run_op(
            study,
            lambda state, stop: (StudyState(), "study cleared: nothing loaded"),
            record={"op": "clear"},
        )

    return [
        make_tool(
            list_data_files,
            "list_data_files",
            "List EEG files (EDF, BDF, GDF, FIF, EEGLAB .set, BrainVision .vhdr) in the data "
            "folder, with inferred subject/session; a BIDS dataset as its subjects/sessions. The "
            "pattern matches at any depth; one starting with a subfolder lists only that folder. "
            f"At most {MAX_LISTED_ENTRIES:,} entries are walked and one '**' is allowed per pattern.",
            s.ListFilesArgs,
            **READ_ONLY,
        ),
        make_tool(
            load_data,
            "load_data",
            LOAD_DESCRIPTION,  # BIDS: was "Load one or more EEG files ..."
            BidsLoadArgs,
        ),
        make_tool(
            get_study_state,
            "get_study_state",
            "Show the study: stage, files, channels, "
            "sampling rate, duration, events per class, preprocessing history, epochs, models.",
            s.NoArgs,
            **READ_ONLY,
        ),
        make_tool(
            clear_study,
            "clear_study",
            "Discard everything in the study (data, epochs, models).",
            s.NoArgs,
            **DESTRUCTIVE,
        ),
    ]


async def _preprocess(study: Study, make: Callable[[], Op], record: dict[str, Any]) -> str:
    """Run one preprocessing step on the study, refused up front when it would need more memory
    than one operation may use."""
    from brainchat.eeg.study.memory import guarded, step_need

    need = step_need(record["step"]["op"], record["step"]["params"])
    op = guarded(make(), need, study.max_operation_mb)
    return await run_op(study, op, mutates_data=True, record=record)


def _filter_tools(study: Study) -> list[BaseTool]:
    async def pre(make: Callable[[], Op], record: dict[str, Any]) -> str:
        return await _preprocess(study, make, record)

    async def bandpass_filter(l_freq: float | None = None, h_freq: float | None = None) -> str:
        label = (
            f"band-pass {l_freq:g}-{h_freq:g} Hz"
            if l_freq and h_freq
            else (f"high-pass {l_freq:g} Hz" if l_freq else f"low-pass {h_freq:g} Hz")
        )
        return await pre(*step("bandpass", {"l_freq": l_freq, "h_freq": h_freq}, label))

    async def notch_filter(freqs: list[float] = [50.0]) -> str:  # noqa: B006
        return await pre(
            *step("notch", {"freqs": freqs}, f"notch {'/'.join(f'{f:g}' for f in freqs)} Hz")
        )

    async def resample_data(sfreq: float) -> str:
        return await pre(*step("resample", {"sfreq": sfreq}, f"resample {sfreq:g} Hz"))

    return [
        make_tool(
            bandpass_filter,
            "bandpass_filter",
            "Band-pass (or high/low-pass) filter the loaded "
            "recordings, e.g. 8-30 Hz for motor imagery.",
            s.BandpassArgs,
        ),
        make_tool(
            notch_filter, "notch_filter", "Remove line noise at the given frequencies.", s.NotchArgs
        ),
        make_tool(
            resample_data, "resample_data", "Resample the recordings to a new rate.", s.ResampleArgs
        ),
    ]


def _channel_tools(study: Study) -> list[BaseTool]:
    async def pre(make: Callable[[], Op], record: dict[str, Any]) -> str:
        return await _preprocess(study, make, record)

    async def set_reference(ref: Any = "average") -> str:
        label = "average reference" if ref == "average" else f"reference {'+'.join(ref)}"
        return await pre(*step("reference", {"ref": ref}, label))

    async def select_channels(keep: list[str] | None = None, drop: list[str] | None = None) -> str:
        label = f"keep {len(keep)} ch" if keep else f"drop {', '.join(drop or [])}"
        return await pre(*step("select", {"keep": keep, "drop": drop}, label))

    async def set_montage(name: str = "standard_1005") -> str:
        return await pre(*step("montage", {"name": name}, f"montage {name}"))

    async def reset_preprocessing() -> str:
        from brainchat.eeg.preprocessing.preprocessing import reset_op

        return await run_op(study, reset_op, record={"op": "reset"})

    return [
        make_tool(
            set_reference,
            "set_reference",
            "Re-reference the EEG (average or given channels).",
            s.ReferenceArgs,
        ),
        make_tool(
            select_channels, "select_channels", "Keep or drop channels.", s.SelectChannelsArgs
        ),
        make_tool(
            set_montage,
            "set_montage",
            "Set standard electrode positions (needed for topomaps and ICA maps).",
            s.MontageArgs,
        ),
        make_tool(
            reset_preprocessing,
            "reset_preprocessing",
            "Undo all preprocessing: back to the data "
            "as loaded (discards epochs, split and models).",
            s.NoArgs,
            **DESTRUCTIVE,
        ),
    ]


BIDS_LABEL = re.compile(r"(?:^|[_/])[a-z]+-([A-Za-z0-9]+)")  # sub-01, ses-02, task-mi, run-1


def _recording_labels(study: Study) -> set[str]:
    """The BIDS labels in the loaded recordings' file names (sub-01_ses-01_task-mi: 01, mi)."""
    names = [r.name for r in study.state.recordings]
    return {m.group(1).lower() for name in names for m in BIDS_LABEL.finditer(name)}


def _dataset_tools(study: Study) -> list[BaseTool]:
    async def epoch_data(
        tmin: float = 0.5,
        tmax: float = 2.5,
        events: list[str] | None = None,
        baseline: Any = None,
        reject_uv: float | None = None,
    ) -> str:
        from brainchat.eeg.preprocessing.dataset import epoch_op
        from brainchat.eeg.study.memory import epoch_need, guarded

        limit = study.max_operation_mb
        base = tuple(baseline) if baseline is not None else None
        record = {
            "op": "epoch",
            "tmin": tmin,
            "tmax": tmax,
            "events": events,
            "baseline": baseline,
            "reject_uv": reject_uv,
        }
        op = guarded(epoch_op(tmin, tmax, events, base, reject_uv), epoch_need(tmin, tmax), limit)
        try:
            return await run_op(study, op, record=record)
        except ToolException as exc:  # unknown events: the allowed ones and a corrected call
            if not str(exc).startswith("unknown event"):
                raise
            raise s.epoch_error(str(exc), record, _recording_labels(study)) from None

    async def split_dataset(
        by: str = "trial", test_ratio: float = 0.2, val_ratio: float = 0.2, seed: int = 0
    ) -> str:
        from brainchat.eeg.preprocessing.dataset import split_op

        record = {
            "op": "split",
            "by": by,
            "test_ratio": test_ratio,
            "val_ratio": val_ratio,
            "seed": seed,
        }
        return await run_op(study, split_op(by, test_ratio, val_ratio, seed), record=record)

    return [
        make_tool(
            epoch_data,
            "epoch_data",
            "Cut epochs around the class events (annotations).",
            s.EpochArgs,
        ),
        make_tool(
            split_dataset,
            "split_dataset",
            "Split epochs into train/validation/test, by trial, session or subject.",
            s.SplitArgs,
        ),
    ]


def _model_tools(study: Study) -> list[BaseTool]:
    async def train_model(**kwargs: Any) -> str:
        await preload(TRAINING_MODULES)  # torch: imported off the event loop
        from brainchat.eeg.decoding.decoding import seeded_turn, train_op
        from brainchat.eeg.decoding.training import TrainConfig

        cfg = TrainConfig(**kwargs)
        before = set(study.state.models)
        record = {"op": "train", "config": vars(cfg)}
        text = await run_op(study, train_op(cfg), record=record, turn=seeded_turn(cfg))
        return text + await study.save_new_models(before)

    async def export_analysis() -> str:
        done = await export_study(study)
        return done.text(study.data_dir)

    async def evaluate_model(model: str | None = None) -> tuple[str, dict[str, Any]]:
        await preload(TRAINING_MODULES)
        from brainchat.eeg.decoding.decoding import evaluate_op

        text = await run_op(study, evaluate_op(model))
        key = model or list(study.state.models)[-1]  # the model evaluate_op scored
        return text, {"structured": {"model": key, **study.state.results[key]}}  # MCP's too

    return [
        make_tool(
            train_model,
            "train_model",
            "Train a decoder (EEGNet, ShallowConvNet, SCCNet or "
            "CSP+LDA) on the training set; shows progress each epoch; can be stopped.",
            s.TrainArgs,
            long_running=True,
            timeout=3600,
        ),
        make_tool(
            evaluate_model,
            "evaluate_model",
            "Test-set metrics of a trained model (accuracy, "
            "balanced accuracy, kappa, ROC AUC, per-class P/R/F1) with confusion matrix and "
            "training-curve images.",
            s.EvaluateArgs,
            structured=True,
        ),
        make_tool(
            export_analysis,
            "export_analysis",
            "Write the study as a standalone Python script (MNE-Python, scikit-learn, PyTorch; "
            "no brainchat) that redoes every step with its parameters and seeds, and a "
            "self-contained HTML report (recordings, steps, figures, metrics, settings); both "
            "saved in the data folder's exports/ and offered for download. Writes new files only.",
            s.NoArgs,
            timeout=600,
        ),
    ]


def build_eeg_tools(study: Study) -> list[BaseTool]:
    """Every EEG tool, bound to one study, with read-only/destructive/long-running flags."""
    return [
        *_data_tools(study),
        *_filter_tools(study),
        *_channel_tools(study),
        *ica_tools(study),
        *_dataset_tools(study),
        *_model_tools(study),
        *bids_tools(study),  # BIDS: epochs and results as BIDS derivatives
        *plot_tools(study),
        *crossval_tools(study),  # cross-validated protocols (eeg/protocols/)
        *tfr_tools(study),  # time-frequency (ERD/ERS) and cluster permutation tests
        *fetch_tools(study),  # public data sets by name (eeg/io/public/)
        *artifact_tools(study),  # artifact scans and the steps that remove what they found
        *spectra_tools(study),
        *erp_tools(study),
    ]
