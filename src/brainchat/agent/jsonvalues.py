"""JSON values as small models write them in a tool call: one value, several one after another,
or with Python's None/True/False for null/true/false (prompt mode's calls)."""

from __future__ import annotations

import json
import re
from typing import Any

PY_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|\b(None|True|False)\b')
AS_JSON = {"None": "null", "True": "true", "False": "false"}


def _json_literals(body: str) -> str:
    """Python's None/True/False outside strings written as JSON's null/true/false: one meaning
    (a small model writes `"baseline": [None, None]`), not a call refused as bad JSON."""
    return PY_LITERAL.sub(lambda m: AS_JSON[m.group(1)] if m.group(1) else m.group(0), body)


def json_values(body: str) -> list[Any]:
    """One JSON value, or several one after another (a call per line, as small models write
    them inside one fence, optionally comma-separated); raises for anything else. Python's
    None/True/False outside strings are read as null/true/false."""
    try:
        return _several(body)
    except json.JSONDecodeError as first:
        fixed = _json_literals(body)
        if fixed == body:
            raise
        try:
            return _several(fixed)
        except json.JSONDecodeError:
            raise first from None


def _several(body: str) -> list[Any]:
    try:
        return [json.loads(body)]
    except json.JSONDecodeError as first:
        decoder = json.JSONDecoder()
        values: list[Any] = []
        pos = 0
        while pos < len(body):
            try:
                value, pos = decoder.raw_decode(body, pos)
            except json.JSONDecodeError:
                raise first from None
            values.append(value)
            while pos < len(body) and (body[pos].isspace() or body[pos] == ","):
                pos += 1
        return values
