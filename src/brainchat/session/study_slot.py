"""The conversation's EEG study: made on first use, in the data folder in force then."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainchat.settings import Settings

if TYPE_CHECKING:
    from brainchat.eeg.study.study import Study


class StudySlot:
    """Holds the study (mne and numpy load only when it is made) and what it is restored from."""

    def __init__(self) -> None:
        self._study: Study | None = None

    def get(self, settings: Settings, info: Callable[[], dict[str, Any]]) -> Study:
        if self._study is None:
            from brainchat.eeg.kernel import make_study

            self._study = make_study(settings.data_dir, settings.max_operation_mb)
            self._study.settings_info = info
        return self._study

    @property
    def made(self) -> bool:
        """Whether the study was made (`get` makes it)."""
        return self._study is not None


def study_facts(study: Study) -> dict[str, Any]:
    """What plan verification reads: the study's stage, recorded steps and trained models (of
    the saved log, while it waits for its replay)."""
    return study.facts()


def saved_log(study: Study) -> list[dict[str, Any]]:
    """The operation log that rebuilds the study: a replay not yet run, else what was done."""
    return list(study.pending) if study.pending else list(study.log)


def restore_study(study: Study, log: list[dict[str, Any]], uploads: list[str]) -> None:
    """Queue a saved log for replay at the study's next use, and list the uploaded files."""
    if log:
        study.pending = list(log)
    study.uploads = list(uploads)


def use_folders(study: Study, model_dir: Path | None, key: bytes) -> None:
    """Where trained models are saved, and the key that signs them."""
    study.model_dir = model_dir
    study.key = key
