"""EEG tool arguments as a small model writes them (issue #23): slips with one meaning fixed
before the check, each said in a notice. epoch_data: a baseline written as text or outside an
epoch nobody asked to correct, a rejection threshold nobody asked for that drops most epochs or
all, event names that are recording labels. split_dataset: a split other than the one the
request names. load_data: other files than "the first two files" of the run's listing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

NO_BASELINE = ("", "none", "null", "no", "false", "off")  # as text: no baseline correction


def repair_epoch_args(args: dict[str, Any], question: str = "") -> tuple[dict[str, Any], list[str]]:
    """epoch_data's `baseline` written harmlessly wrong in a way with one meaning (issue #23, a
    small model): the text "None"/"null", an empty list, [null], false -> null (no correction);
    a list written as text ("[0, 0.5]") -> that list. And a baseline outside the epoch when the
    user's request asks for no baseline: the model made it up (the 1.5B model sent [0.0, 0.5],
    then [0.0, 0.0], for 'epoch 0.5-2.5 s', and never the corrected call), and it cannot be
    applied to that epoch, so it is left out. Anything else is left for the check."""
    args, notes = _repaired_reject(args, question)
    if "baseline" not in args:
        return args, notes
    fixed, note = repaired_baseline(args["baseline"])
    if not note and "baseline" not in question.lower() and _outside(fixed, args):
        note = (
            f"baseline {json.dumps(fixed)} lies outside the epoch and the request asks for no "
            "baseline correction, so it was left out (no baseline correction)"
        )
        fixed = None
    return ({**args, "baseline": fixed}, [note, *notes]) if note else (args, notes)


# EEG's peak-to-peak is usually 50-150 µV: a made-up limit under it drops most epochs or all
# (the bench's pipeline run of 27 Nov: reject_uv 20 nobody asked for dropped all 192 epochs)
REJECT_FLOOR_UV = 50.0
REJECT_WORDS = ("reject", "artifact", "artefact", "threshold", "peak", "µv", "uv")


def _repaired_reject(args: dict[str, Any], question: str) -> tuple[dict[str, Any], list[str]]:
    """A `reject_uv` under REJECT_FLOOR_UV that the request never asked for: the model made it up
    (the 1.5B model sent 2.0, and once 20.0, for 'epoch 0.5-2.5 s', and every epoch was
    dropped), so it is left out. Asked for, it stays, and the tool's error says what to write."""
    value = args.get("reject_uv")
    low = question.lower()
    if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
        # "0" for "no rejection" (the 1.5B model, golden run of 25 Nov: the schema refused it,
        # and the model never sent the call again): one meaning, whatever the request says
        note = f"reject_uv {value:g} means no rejection, so it was left out (no rejection)"
        return {k: v for k, v in args.items() if k != "reject_uv"}, [note]
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 < value < REJECT_FLOOR_UV
        and not any(word in low for word in REJECT_WORDS)
    ):
        note = (
            f"reject_uv {value:g} µV is under EEG's usual peak-to-peak (50-150 µV), so it would "
            "drop most epochs or all, and the request asks for no rejection: it was left out "
            "(no rejection)"
        )
        return {k: v for k, v in args.items() if k != "reject_uv"}, [note]
    return args, []


def _outside(baseline: Any, args: dict[str, Any]) -> bool:
    """A well-formed baseline interval that does not fit in the call's epoch."""
    if not (isinstance(baseline, list | tuple) and len(baseline) == 2):
        return False
    if not all(map(is_seconds, baseline)):
        return False
    try:
        tmin, tmax = float(args.get("tmin", 0.5)), float(args.get("tmax", 2.5))
    except (TypeError, ValueError):
        return False
    start = tmin if baseline[0] is None else float(baseline[0])
    end = tmax if baseline[1] is None else float(baseline[1])
    return start < tmin - 1e-9 or end > tmax + 1e-9 or start > end


def repaired_baseline(value: Any) -> tuple[Any, str]:
    shown = json.dumps(value, default=str)
    if value is False or (isinstance(value, str) and value.strip().lower() in NO_BASELINE):
        return None, f"baseline {shown} was read as null (no baseline correction)"
    if isinstance(value, list | tuple) and (
        not value or (len(value) == 1 and (value[0] is None or value[0] in NO_BASELINE))
    ):
        return None, f"baseline {shown} was read as null (no baseline correction)"
    if isinstance(value, str):
        text = value.strip().replace("(", "[").replace(")", "]").replace("None", "null")
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return value, ""
        if isinstance(parsed, list):
            return parsed, f"baseline {shown} (text) was read as the list {json.dumps(parsed)}"
    return value, ""


def is_seconds(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


BIDS_LABEL = re.compile(r"(?:^|[_/])[a-z]+-([A-Za-z0-9]+)")  # sub-01, ses-02, task-mi, run-1


def events_naming_recordings(
    events: list[str] | None, names: list[str], available: list[str]
) -> str | None:
    """A note when every event the model named is unknown and is a label in the loaded
    recordings' BIDS file names (the 1.5B model sent events=["mi"], the task of
    `sub-01_ses-01_task-mi_eeg.edf`, and then the same call again): those name recordings, not
    events, so epoch_data uses all events. None when any named event exists, or a name is
    neither an event nor such a label (the tool's error then lists the events)."""
    if not events or any(e in available for e in events):
        return None
    labels = {m.group(1).lower() for name in names for m in BIDS_LABEL.finditer(name)}
    if not all(str(e).lower() in labels for e in events):
        return None
    return (
        f"events {json.dumps(events)} name the recordings (labels in their file names), not "
        f"events, so all events were used ({', '.join(available)})"
    )


SPLIT_NAMED = re.compile(
    r"\b(?:split|hold(?:ing)? out|held out)\b[^.?!;]{0,30}?\bby (trial|session|subject)s?\b", re.I
)


def repair_split_args(args: dict[str, Any], question: str = "") -> tuple[dict[str, Any], list[str]]:
    """split_dataset's `by` when the request names another split ("split by trial"): the
    request's (the 1.5B model sent by 'session' for '... split by trial, train CSP+LDA', bench
    pipeline run of 27 Nov, and scored other test trials than the ones asked for)."""
    named = SPLIT_NAMED.search(question)
    by = args.get("by")
    if named is None or not isinstance(by, str) or by.strip().lower() == named.group(1).lower():
        return args, []
    want = named.group(1).lower()
    note = f"by {json.dumps(by)} was replaced by {json.dumps(want)}, the split the request names"
    return {**args, "by": want}, [note]


NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
FIRST_FILES = re.compile(
    r"\bfirst (?:(one|two|three|four|five|six|seven|eight|\d{1,3}) )?(?:eeg |data |edf )?"
    r"(files?|recordings?)\b",
    re.I,
)
QUALIFIED = re.compile(
    r"\s*(of|from|for|with|in(?! (the |my |our )?(data )?(folder|directory|list\w*)))\b", re.I
)
LISTING_TOOL = "list_data_files"
LISTING_HEAD = "file(s) in the data folder:"  # eeg/io/listing.py's line before the files
LISTED = re.compile(r"^(\S+) \(\d+(?:\.\d+)? MB, subject ", re.M)


def repair_first_files(
    args: dict[str, Any], question: str, results: Sequence[tuple[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    """load_data's files when the request asks for "the first two files" and the run's latest
    listing shows which they are: the listing's first two (bench pipeline runs of 27 Nov: the
    1.5B model read "the first two files" of sub-01 ses-01/02 and sub-02 ses-01/02 as the first
    file of each subject, and scored other data than the ones asked for). Only list_data_files'
    own results count: a web page or an MCP tool's text shaped like a listing is no listing."""
    asked = FIRST_FILES.search(question)
    files = args.get("files")
    if asked is None or not isinstance(files, list):
        return args, []
    if QUALIFIED.match(question[asked.end() :]):
        return args, []  # "the first two files of sub-02": a selection the listing may not be
    count, noun = asked.groups()
    if count is None and noun.lower().endswith("s"):
        return args, []  # "the first files": no number
    n = 1 if count is None else NUMBERS.get(count.lower()) or int(count)
    listing = next(
        (r for name, r in reversed(results) if name == LISTING_TOOL and LISTING_HEAD in r), None
    )
    listed = LISTED.findall(listing.split(LISTING_HEAD, 1)[1]) if listing else []
    if not 0 < n <= len(listed) or sorted(map(str, files)) == sorted(listed[:n]):
        return args, []
    want = listed[:n]
    note = (
        f"files {json.dumps(files)} were replaced by {json.dumps(want)}: the request asks for "
        f"the {asked.group(0).lower()}, and the listing shows "
        + ("this one first" if n == 1 else f"these {n} first")
    )
    return {**args, "files": want}, [note]
