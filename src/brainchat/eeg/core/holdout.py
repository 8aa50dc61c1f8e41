"""What a held-out test set can show: which sessions it shares with the training trials.

A split by trial draws the test trials from the same sessions as the training trials: what a
session has of its own (electrode impedance and placement, the day's noise, fatigue, the
subject's strategy that day) is in both sets, so the test accuracy says how well the model knows
those sessions, not how it does on a new one, and is optimistic for that. A split by session
(or by subject) holds whole sessions out. Every score after a split and the study's summary use
these words, so any model's answer can rest on them.
"""

from __future__ import annotations

from typing import Any

from brainchat.eeg.core.state import EpochSet, Split

MARK = "split note:"


def sessions_of(epochs: EpochSet, index: Any) -> list[str]:
    """The sessions (`subject/session`) the trials at `index` come from, sorted."""
    return sorted({f"{epochs.subjects[i]}/{epochs.sessions[i]}" for i in index})


def shared_sessions(epochs: EpochSet, split: Split) -> list[str]:
    """The sessions with trials in both the training and the test set."""
    return sorted(set(sessions_of(epochs, split.train)) & set(sessions_of(epochs, split.test)))


def split_note(epochs: EpochSet, split: Split) -> str | None:
    """One note on what the test scores of `split` can show (None: whole sessions held out)."""
    shared = shared_sessions(epochs, split)
    if not shared:
        return None
    named = ", ".join(shared[:6]) + (f" (+{len(shared) - 6} more)" if len(shared) > 6 else "")
    return (
        f"{MARK} split by {split.by}: the test trials come from the same {len(shared)} "
        f"session(s) as the training trials ({named}); what a session has of its own "
        "(electrode contact, the day's noise, fatigue) is in both sets, so the test accuracy "
        "is optimistic for a new session (a form of leakage). For an estimate on unseen "
        "sessions, split_dataset by='session' (or by='subject'), or cross_validate with "
        "protocol='cross_session'"
    )


def split_brief(epochs: EpochSet, split: Split) -> str:
    """A few words for the study's summary: whether test and training share sessions."""
    shared = shared_sessions(epochs, split)
    if shared:
        return f" (test shares {len(shared)} session(s) with training: optimistic for a new one)"
    return " (test sessions never trained on)"


WITHIN_SESSION = (
    f"{MARK} within_session trains and tests each fold on trials of the same session: what a "
    "session has of its own is in both, so these scores are for sessions already seen and "
    "optimistic for a new session. protocol='cross_session' holds whole sessions out"
)


def protocol_note(protocol: str) -> str | None:
    """What a cross-validation protocol's scores can show (None: whole groups held out)."""
    return WITHIN_SESSION if protocol == "within_session" else None
