"""Output schemas and structured content of the EEG tools over MCP: a client that reads
`structuredContent` gets the numbers the text shows (metrics, cross-validation scores, an
analysis's rows, the study's state) without parsing it; the text stays for clients that do not.

Where each comes from: an analysis or evaluate_model returns it beside its text (the tool's
artifact); cross_validate's result is the study log's entry of that call; the study's state is
its facts after the call, with the study's handle (handles.py)."""

from __future__ import annotations

import json
from typing import Any

from brainchat.eeg.core.analyses import ANALYSES

JSON = dict[str, Any]
STRING: JSON = {"type": "string"}
NUMBER: JSON = {"type": "number"}
MAYBE_NUMBER: JSON = {"type": ["number", "null"]}
STRINGS: JSON = {"type": "array", "items": STRING}


def obj(properties: JSON, required: tuple[str, ...] | None = None) -> JSON:
    """An object schema; every property required unless `required` names fewer. Other
    properties are allowed: a result may grow a field without breaking a client."""
    keys = list(properties) if required is None else list(required)
    return {"type": "object", "properties": properties, "required": keys}


def rows_of(item: JSON) -> JSON:
    return {"type": "array", "items": item}


STATE = obj(
    {
        "study": {
            "type": ["string", "null"],
            "description": "the study's handle: pass it as `study` to any tool, from any session "
            "of this client, to continue this study (null: none issued)",
        },
        "stage": {"type": "string", "enum": ["empty", "loaded", "epoched", "split", "trained"]},
        "steps": rows_of(obj({"op": STRING, "params": {"type": "object"}})),
        "models": STRINGS,
        "ica": {"type": "boolean", "description": "an ICA is fitted and not yet applied"},
        "files": STRINGS,
    }
)

# a score that cannot be computed (NaN: one class in the test set) is sent as null
METRICS = obj(
    {
        "model": STRING,
        "accuracy": MAYBE_NUMBER,
        "balanced_accuracy": MAYBE_NUMBER,
        "kappa": MAYBE_NUMBER,
        "roc_auc": MAYBE_NUMBER,
        "per_class": {
            "type": "object",
            "additionalProperties": obj(
                {
                    "precision": MAYBE_NUMBER,
                    "recall": MAYBE_NUMBER,
                    "f1": MAYBE_NUMBER,
                    "support": NUMBER,
                }  # fmt: skip
            ),
        },
        "confusion": rows_of(rows_of(NUMBER)),
        "n_test": {"type": "integer"},
    }
)

CROSSVAL = obj(
    {
        "protocol": STRING,
        "scoring": STRING,
        "classes": STRINGS,
        "subjects": STRINGS,
        "n_epochs": {"type": "integer"},
        "summaries": rows_of(
            obj(
                {
                    "pipeline": STRING,
                    "mean": MAYBE_NUMBER,
                    "sd": MAYBE_NUMBER,
                    "chance": MAYBE_NUMBER,
                    "p_value": MAYBE_NUMBER,
                    "per_subject": {"type": "object", "additionalProperties": MAYBE_NUMBER},
                }
            )
        ),
        "records": rows_of(
            obj(
                {
                    "pipeline": STRING,
                    "subject": STRING,
                    "session": STRING,
                    "fold": NUMBER,
                    "score": MAYBE_NUMBER,
                    "n_train": NUMBER,
                    "n_test": NUMBER,
                }
            )  # fmt: skip
        ),
        "tests": rows_of(obj({"a": STRING, "b": STRING, "p_value": MAYBE_NUMBER}, ("a", "b"))),
        "notes": STRINGS,
    }
)

ANALYSIS = obj(
    {
        "summary": STRING,
        "rows": rows_of({"type": "object"}),
        "notes": STRINGS,
    },
    ("rows",),
)

# the tools whose result is the study's state: they change it, or show it
STATE_TOOLS = frozenset(
    {
        "load_data", "get_study_state", "clear_study", "bandpass_filter", "notch_filter",
        "resample_data", "set_reference", "select_channels", "set_montage",
        "reset_preprocessing", "ica_fit", "ica_apply", "epoch_data", "split_dataset",
        "train_model", "mark_bad_channels", "annotate_bad_segments",
    }
)  # fmt: skip
ANALYSIS_TOOLS = frozenset(spec.tool for spec in ANALYSES.values())


def output_schema(name: str) -> JSON | None:
    """The outputSchema of tool `name`, or None for a tool whose result is a listing, a figure
    or a file (list_data_files, the plots, export_analysis)."""
    if name in STATE_TOOLS:
        return STATE
    if name == "evaluate_model":
        return METRICS
    if name == "cross_validate":
        return CROSSVAL
    if name in ANALYSIS_TOOLS:
        return ANALYSIS
    return None


def mismatch(name: str, value: JSON | None) -> str | None:
    """Why `value` breaks tool `name`'s outputSchema (None: it fits, or there is no schema)."""
    schema = output_schema(name)
    if schema is None:
        return None
    import jsonschema

    if value is None:
        return "no structured content"
    try:
        jsonschema.validate(json.loads(json.dumps(value, default=str)), schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "the result"
        return f"{where}: {exc.message}"[:300]
    return None


def structured(name: str, study: Any, handle: str | None, given: JSON | None) -> JSON | None:
    """The structured content of a successful call of `name` (None: the tool has none)."""
    if name in STATE_TOOLS:
        return {"study": handle, **study.facts()}
    if name == "cross_validate":
        entry = next((e for e in reversed(study.log) if e.get("op") == "crossval"), None)
        return entry.get("result") if entry is not None else None
    return given if output_schema(name) is not None else None
