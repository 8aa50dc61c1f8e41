"""Arguments worth a second look, and files picked by their place in a listing.

Neither changes a call: each makes a suggestion the model may take or leave (the agent's guards
send it back as a correctable error, and the same call sent again runs).
"""

from __future__ import annotations

import re
from typing import Any

from brainchat.domain import Suggestion
from brainchat.eeg.guidance.steps import LISTING

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


def pick(positions: list[int], results: list[tuple[str, str]]) -> list[str] | None:
    """The files at `positions` (1 first, -1 last) of the run's latest listing; None when
    there is no listing or a position is outside it."""
    listing = next(
        (r for name, r in reversed(results) if name == LISTING and LISTING_HEAD in r), None
    )
    if listing is None or not positions:
        return None
    files = LISTED.findall(listing.split(LISTING_HEAD, 1)[1])
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
