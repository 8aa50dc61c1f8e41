"""Arguments worth a second look, and files picked by their place in a listing.

Neither changes a call: each makes a suggestion the model may take or leave (the agent's guards
send it back as a correctable error, and the same call sent again runs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from brainchat.domain import Suggestion
from brainchat.eeg.guidance.steps import LISTING, reached

# EEG's peak-to-peak is usually 50-150 µV: a rejection threshold under it drops most epochs or all
REJECT_FLOOR_UV = 50.0
LISTING_HEAD = "file(s) in the data folder:"  # eeg/io/listing.py's line before the files
LISTED = re.compile(r"^(\S+) \(\d+(?:\.\d+)?\s?MB, subject ", re.M)


def second_look(tool: str, args: dict[str, Any], fixed: dict[str, Any]) -> Suggestion | None:
    """A suggestion for arguments that are valid yet unlikely to be meant, unless the user
    fixed them: a rejection threshold under EEG's usual amplitude."""
    value = args.get("reject_uv")
    if tool != "epoch_data" or "reject_uv" in fixed:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and value < REJECT_FLOOR_UV:
        kept = {k: v for k, v in args.items() if k != "reject_uv"}
        return Suggestion(
            kept,
            f"reject_uv {value:g} µV is under EEG's usual peak-to-peak amplitude (50-150 µV), so "
            "it would drop most epochs or all, and the request sets no threshold",
        )
    return None


def _listed(results: list[tuple[str, str]]) -> list[str] | None:
    """The files of the run's latest listing; None when there is none."""
    listing = next(
        (r for name, r in reversed(results) if name == LISTING and LISTING_HEAD in r), None
    )
    return None if listing is None else LISTED.findall(listing.split(LISTING_HEAD, 1)[1])


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def named(words: list[str], results: list[tuple[str, str]]) -> list[str] | None:
    """The listed files the user's file words name ("sub-01/ses-01" is the listing's
    demo/sub-01_ses-01_task-mi_eeg.edf: its letters and digits hold them); None without a
    listing or when a word names no listed file."""
    files = _listed(results)
    if not files or not words:
        return None
    found: list[str] = []
    for word in words:
        key = _letters(word)  # a word of one or two signs ("1") names no file: it is in all
        hits = [f for f in files if len(key) > 2 and key in _letters(f)]
        if not hits:
            return None
        found += hits
    return list(dict.fromkeys(found))


def pick(positions: list[int], results: list[tuple[str, str]]) -> list[str] | None:
    """The files at `positions` (1 first, -1 last) of the run's latest listing; None when
    there is no listing or a position is outside it."""
    files = _listed(results)
    if files is None or not positions:
        return None
    picked = []
    for p in positions:
        if p == 0 or abs(p) > len(files):
            return None
        picked.append(files[p - 1] if p > 0 else files[p])
    return list(dict.fromkeys(picked))


def picked(
    tool: str, args: dict[str, Any], positions: list[int], results: list[tuple[str, str]]
) -> Suggestion | None:
    """A load of other files than the ones the user picked by their place in the listing."""
    files = args.get("files")
    if tool != "load_data" or not isinstance(files, list) or not positions:
        return None
    want = pick(positions, results)
    if want is None or sorted(map(str, files)) == sorted(want):
        return None
    where = ", ".join(str(p) for p in positions)
    return Suggestion(
        {**args, "files": want},
        f"the request picks the files at place(s) {where} of the listing, which are "
        f"{', '.join(want)}; the call loads {', '.join(map(str, files))}",
    )


def _has_op(facts: dict[str, Any], op: str, args: dict[str, Any], keys: tuple[str, ...]) -> bool:
    for s in reversed(facts.get("steps") or []):
        if s.get("op") == op:
            params = s.get("params") or {}
            return all(_same(params.get(k), args.get(k)) for k in keys if k in args)
    return False


def _same(a: Any, b: Any) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return bool(a == b)


# what the study shows after each state-changing call succeeded (a plan step is verified by it)
SHOWN: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    "load_data": lambda f, a: reached(f, "loaded"),
    "bandpass_filter": lambda f, a: _has_op(f, "bandpass", a, ("l_freq", "h_freq")),
    "notch_filter": lambda f, a: _has_op(f, "notch", a, ()),
    "resample_data": lambda f, a: _has_op(f, "resample", a, ("sfreq",)),
    "set_reference": lambda f, a: _has_op(f, "reference", a, ()),
    "select_channels": lambda f, a: _has_op(f, "select", a, ()),
    "ica_apply": lambda f, a: _has_op(f, "ica", a, ()),
    "epoch_data": lambda f, a: reached(f, "epoched"),
    "split_dataset": lambda f, a: reached(f, "split"),
    "train_model": lambda f, a: (
        reached(f, "trained") and str(a.get("model", "eegnet")) in (f.get("models") or [])
    ),
    "clear_study": lambda f, a: f.get("stage") == "empty",
    "reset_preprocessing": lambda f, a: not f.get("steps"),
}


def shows(tool: str, args: dict[str, Any], facts: dict[str, Any]) -> bool | None:
    """Whether the study shows `tool`'s effect (None: the study tells nothing of it)."""
    check = SHOWN.get(tool)
    return None if check is None else check(facts, args)
