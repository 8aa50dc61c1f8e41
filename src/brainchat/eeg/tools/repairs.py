"""EEG tool arguments as a small model writes them: slips of form with one meaning, fixed before
the check and said in a notice. epoch_data: a baseline written as text ("None", "[0, 0.5]"), an
empty list or [null]; a rejection threshold of 0 or less, which can only mean no rejection.
Nothing here reads the user's request or changes what a call asks for: a value that may not be
meant is the agent's guards' to send back as a suggestion (eeg/guidance/checks.py).
"""

from __future__ import annotations

import json
from typing import Any

NO_BASELINE = ("", "none", "null", "no", "false", "off")  # as text: no baseline correction


def repair_epoch_args(args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """epoch_data's `baseline` and `reject_uv` written with one meaning in another form: the
    text "None"/"null", an empty list, [null] or false for no baseline; a list as text; a
    `reject_uv` of 0 or less for no rejection. Anything else is left for the check."""
    notes = []
    value = args.get("reject_uv")
    if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
        notes.append(f"reject_uv {value:g} means no rejection, so it was left out (no rejection)")
        args = {k: v for k, v in args.items() if k != "reject_uv"}
    if "baseline" not in args:
        return args, notes
    fixed, note = repaired_baseline(args["baseline"])
    return ({**args, "baseline": fixed}, [note, *notes]) if note else (args, notes)


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
