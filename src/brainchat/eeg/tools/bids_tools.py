"""The BIDS parts of the EEG tools: load_data's entity filters, and writing derivatives.

The tool glue lives beside tools.py (like view_tools.py), not in eeg/io/bids/: eeg/io/bids/ is read by
loading and listing, so it must not import the study modules above them (no import circles)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import Field, field_validator

from brainchat.eeg.core.state import Op, StudyState
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools import schemas as s
from brainchat.eeg.tools.toolkit import DESTRUCTIVE, in_thread, make_tool, run_op

LOAD_DESCRIPTION = (
    "Load one or more EEG files (paths relative to the data folder) into the study. Load all "
    "files of a study in one call. A BIDS dataset is loaded by its folder, e.g. "
    "files=['ds001'] with optional subjects/sessions/tasks/runs filters (labels such as '01'); "
    "its events.tsv become the annotations."
)


def _labels(what: str) -> Any:
    return Field(
        None,
        max_length=500,
        description=f"BIDS {what} labels to load from a dataset folder named in files "
        "(e.g. ['01', '02']); omit for all",
    )


class LoadArgs(s.LoadArgs):
    """load_data's arguments: files, and the BIDS entities that select recordings of a dataset."""

    subjects: list[str] | None = _labels("subject")
    sessions: list[str] | None = _labels("session")
    tasks: list[str] | None = _labels("task")
    runs: list[str] | None = _labels("run")
    mixed_channels: bool = Field(
        False,
        description="true: load files whose channel sets differ (then keep their common "
        "channels with select_channels); refused otherwise",
    )

    @field_validator("subjects", "sessions", "tasks", "runs", mode="before")
    @classmethod
    def _one_label(cls, value: Any) -> Any:
        """'01' for ['01']: a small model often gives one label as a string (or a number)."""
        return [str(value)] if isinstance(value, str | int) else value


async def expand_files(study: Study, files: list[str], filters: dict[str, Any]) -> list[str]:
    """load_data's files with each BIDS dataset folder replaced by its selected recordings."""

    def run(*, stop: threading.Event) -> list[str]:
        from brainchat.eeg.io.bids.read import expand

        return expand(study.data_dir, files, filters, stop)

    return await in_thread(run)  # type: ignore[arg-type,return-value]


def _derivatives_op(study: Study, replace: bool) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.export.export import _metrics
        from brainchat.eeg.export.export_report import versions
        from brainchat.eeg.io.bids.derivatives import write_derivatives

        version = versions()["brainchat"]
        metrics = _metrics(state)  # test-set metrics, computed where not evaluated yet
        done = write_derivatives(state, Path(study.data_dir), version, metrics, replace, stop)
        return state, done.text(study.data_dir)

    return op


def bids_tools(study: Study) -> list[BaseTool]:
    async def save_bids_derivatives() -> str:
        return await run_op(study, _derivatives_op(study, replace=False))

    async def replace_bids_derivatives() -> str:
        return await run_op(study, _derivatives_op(study, replace=True))

    where = (
        "BIDS derivatives (derivatives/brainchat/ of the loaded BIDS dataset, else of the data "
        "folder; sub-XX/ses-YY/eeg/..._desc-brainchat_epo.fif per subject and session, with "
        "dataset_description.json and desc-brainchat_results.json; cross_validate's scores "
        "per subject as sub-XX/.../..._desc-crossval_scores.tsv with a JSON sidecar, and the "
        "group statistics in desc-crossval_stats.tsv)"
    )
    return [
        make_tool(
            save_bids_derivatives,
            "save_bids_derivatives",
            f"Write the study's epochs, model results and cross-validation results as {where}. Writes new files only: "
            "when derivatives are already there it says so and writes nothing.",
            s.NoArgs,
            timeout=600,
        ),
        make_tool(
            replace_bids_derivatives,
            "replace_bids_derivatives",
            f"Like save_bids_derivatives, but replaces brainchat's earlier {where}. Only when "
            "the user wants the old ones replaced.",
            s.NoArgs,
            timeout=600,
            **DESTRUCTIVE,
        ),
    ]
