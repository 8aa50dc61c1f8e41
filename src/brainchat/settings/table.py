"""README.md's configuration table, written from the declarations (declared.py).

`python -m brainchat.settings.table` prints it; tests/test_settings_readme.py checks that
README.md holds exactly this table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from brainchat.settings.declared import GROUPS
from brainchat.settings.fields import base_type, bounds, choices, extra, number

HEADER = "| variable | allowed | default | meaning |\n| --- | --- | --- | --- |"


def allowed(field: FieldInfo) -> str:
    """What the variable accepts: a range (with its unit), the words, or the declared text."""
    lo, hi = bounds(field)
    unit = extra(field)["unit"]
    if lo is not None or hi is not None:
        return f"{number(lo)}–{number(hi)}" + (f" {unit}" if unit else "")
    if words := choices(field):
        return ", ".join(f"`{w}`" for w in words)
    if base_type(field) is bool:
        return "`true`, `false`"
    return str(extra(field)["allowed"])


def shown_default(field: FieldInfo) -> str:
    said = extra(field)["shown_default"]
    value: Any = field.default
    if said:
        return str(said)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int | float):
        return number(value)
    return f"`{value}`"


def meaning(field: FieldInfo) -> str:
    """The help, then what each allowed word does (when the declaration says)."""
    said = extra(field)["choices"]
    words = "; ".join(f"`{w}`: {said[w]}" for w in choices(field) if w in said)
    return f"{field.description}" + (f" ({words})" if words else "")


def rows() -> list[tuple[str, str, str, str]]:
    """(variable, allowed, default, meaning) for every declared variable, group after group."""
    return [
        (str(f.alias), allowed(f), shown_default(f), meaning(f))
        for group in GROUPS
        for f in group.model_fields.values()
    ]


def markdown() -> str:
    lines = [f"| `{name}` | {a} | {d} | {m} |" for name, a, d, m in rows()]
    return "\n".join([HEADER, *lines])


def readme_table(readme: Path) -> str:
    """The configuration table as README.md has it: from its header to the first non-row."""
    text = readme.read_text(encoding="utf-8")
    start = text.find("\n| variable |") + 1
    if not start:
        return ""
    lines = []
    for line in text[start:].splitlines():
        if not line.startswith("|"):
            break
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
