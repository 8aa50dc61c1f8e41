"""The folds of MOABB's three protocols, from labels and each epoch's subject and session.

within_session: StratifiedKFold(folds, shuffle=True, random_state=seed) inside each subject's
session (as MOABB's WithinSessionEvaluation); cross_session: leave one session out, per subject;
cross_subject: leave one subject out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PROTOCOLS = ("within_session", "cross_session", "cross_subject")


class ProtocolError(ValueError):
    """The data cannot be cross-validated this way; the message says why and what to do."""


@dataclass(frozen=True)
class Fold:
    """One train/test split: indices into the whole epoch set, and what the test part is."""

    subject: str  # the test trials' subject
    session: str  # the test trials' session ("*": all of the subject's sessions)
    index: int  # fold number within its group (0-based)
    train: np.ndarray
    test: np.ndarray


def make_folds(
    protocol: str,
    y: np.ndarray,
    subjects: np.ndarray,
    sessions: np.ndarray,
    folds: int = 5,
    seed: int = 0,
) -> tuple[list[Fold], list[str]]:
    """The folds of `protocol`, and notes naming the groups that had to be left out."""
    if protocol not in PROTOCOLS:
        raise ProtocolError(f"unknown protocol '{protocol}'; choose one of {', '.join(PROTOCOLS)}")
    subjects, sessions = np.asarray(subjects).astype(str), np.asarray(sessions).astype(str)
    if protocol == "within_session":
        return _within_session(y, subjects, sessions, folds, seed)
    if protocol == "cross_session":
        return _cross_session(y, subjects, sessions)
    return _cross_subject(y, subjects)


def _ordered(values: np.ndarray) -> list[str]:
    return sorted(set(values.tolist()))


def _within_session(y, subjects, sessions, folds, seed) -> tuple[list[Fold], list[str]]:
    from sklearn.model_selection import StratifiedKFold

    out, notes = [], []
    for subject in _ordered(subjects):
        for session in _ordered(sessions[subjects == subject]):
            idx = np.flatnonzero((subjects == subject) & (sessions == session))
            counts = np.bincount(y[idx])
            smallest = counts[counts > 0].min()
            if (counts > 0).sum() < 2 or smallest < folds:
                notes.append(
                    f"subject {subject} session {session} left out: "
                    f"{'one class only' if (counts > 0).sum() < 2 else f'a class has {smallest} trials, fewer than {folds} folds'}"
                )
                continue
            cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
            for k, (train, test) in enumerate(cv.split(idx, y[idx])):
                out.append(Fold(subject, session, k, idx[train], idx[test]))
    if not out:
        raise ProtocolError(
            f"no session has every class {folds} times or more; lower folds (at least 2)"
        )
    return out, notes


def _cross_session(y, subjects, sessions) -> tuple[list[Fold], list[str]]:
    out, notes = [], []
    for subject in _ordered(subjects):
        mine = subjects == subject
        held = _ordered(sessions[mine])
        if len(held) < 2:
            notes.append(f"subject {subject} left out: only one session ({held[0]})")
            continue
        for k, session in enumerate(held):
            test = np.flatnonzero(mine & (sessions == session))
            train = np.flatnonzero(mine & (sessions != session))
            out.append(Fold(subject, session, k, train, test))
    if not out:
        raise ProtocolError(
            "cross_session needs a subject with two or more sessions (sessions come from file "
            "names such as sub-01_ses-02); use within_session or cross_subject"
        )
    return out, notes


def _cross_subject(y, subjects) -> tuple[list[Fold], list[str]]:
    held = _ordered(subjects)
    if len(held) < 2:
        raise ProtocolError(
            "cross_subject needs two or more subjects (subjects come from file names such as "
            "sub-01_...); use within_session"
        )
    return [
        Fold(
            subject,
            "*",
            k,
            np.flatnonzero(subjects != subject),
            np.flatnonzero(subjects == subject),
        )
        for k, subject in enumerate(held)
    ], []
