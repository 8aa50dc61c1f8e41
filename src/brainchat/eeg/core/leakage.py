"""Leakage notes: each preprocessing step that learned from all trials, named with every score after it.

Which steps learn from all trials is declared once, per kind of step, in `STEP_KINDS`
(core/state.py); this module only words it for each kind of score. Every tool result, the
exported report and the exported script use these words, so they say the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from brainchat.eeg.core.state import Step

MARK = "leakage risk:"
Scores = Literal["crossval", "test", "validation"]
# per kind of score: the trials held out, what was cut after the step, the scores, and the
# clean way again
_WORDS: dict[str, tuple[str, str, str, str]] = {
    "crossval": ("test folds", "cross-validation", "its scores", "cross-validate"),
    "test": ("test trials", "split_dataset", "the test scores", "redo the steps"),
    "validation": ("validation trials", "split_dataset", "the validation scores", "redo the steps"),
}


def leakage_notes(history: Iterable[Step], scores: Scores) -> list[str]:
    """One note per step of `history` fitted on all trials, for the `scores` computed after it
    (none when every step is a fixed transform)."""
    held, cut, which, again = _WORDS[scores]
    return [
        f"{MARK} '{step.label}' was fitted on all trials ({kind.name} learned {kind.learned} "
        f"from the {held} too) before {cut}; {which} may be optimistic. For a clean estimate, "
        f"reset_preprocessing and {again} without {kind.name}"
        for step in history
        if (kind := step.fitted) is not None
    ]
