"""What an answer states from each EEG result, said right after that result in the answer request.

Said after the result only, never in the system prompt: a small answer model told in general to
state "the accuracy and the split" gave a web search's answer an accuracy and a split.
"""

from __future__ import annotations

import re

from brainchat.eeg.core.holdout import MARK as SPLIT_MARK
from brainchat.eeg.core.leakage import MARK

STATE = {
    "evaluate_model": "(State from this result: the accuracy, balanced accuracy or kappa when "
    "given, the per-class scores and the split, as written.)",
    "cross_validate": "(State from this result, as written: the score's name, each pipeline's "
    "mean ± sd, its permutation chance level and p-value, the paired test by its name with its "
    "W and p, and what each fold held out.)",
    "list_data_files": "(Name every file listed, with its subject and session.)",
    "load_data": "(Name every file loaded, with its subject, session, channels, duration and "
    "events.)",
}
# the score's name as the cross_validate result writes it ("...; score ROC AUC (chance ~0.5)")
SCORE_NAME = re.compile(r"; score (.{1,40}?) \(chance")
PAIRED = ", the paired test by its name with its W and p,"
LEAKAGE = f"the leakage risk it names ('{MARK} ...'), as written"
# a split by trial: the same sessions in training and test (eeg/core/holdout.py)
SPLIT = f"what its '{SPLIT_MARK}' says the test scores can show, in a sentence"


def state_line(name: str, result: str) -> str | None:
    """What to state from `name`'s result (None: nothing particular). A cross_validate line
    names its score, and asks for no paired test where none ran (one pipeline); a result that
    names a leakage risk, or a split whose test trials share sessions with training, asks for
    that too (a score without it reads as clean)."""
    line = _scores_line(name, result)
    extra = [said for mark, said in ((MARK, LEAKAGE), (SPLIT_MARK, SPLIT)) if mark in result]
    if not extra:
        return line
    if line is None:
        return f"(State from this result {' and '.join(extra)}.)"
    return f"{line.removesuffix('.)')}; and {' and '.join(extra)}.)"


def _scores_line(name: str, result: str) -> str | None:
    line = STATE.get(name)
    if line is None or name != "cross_validate":
        return line
    if score := SCORE_NAME.search(result):
        line = line.replace("the score's name", f"the score's name ({score.group(1)})")
    if "Wilcoxon signed-rank" not in result:
        line = line.replace(PAIRED, ",").replace(".)", "; no paired test ran, so state none.)")
    return line
