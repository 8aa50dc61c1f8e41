"""A tool's structuredContent in its step: a table for a list of records, else JSON. No Chainlit.

MCP tools with an outputSchema return data, not prose; a list of flat records (FastMCP wraps a
returned list as {"result": [...]}) reads best as a table, anything else as indented JSON.
"""

from __future__ import annotations

import json
from typing import Any

from brainchat import i18n

MAX_ROWS, MAX_COLUMNS, MAX_CELL, MAX_JSON = 50, 12, 80, 3000


def structured_block(value: Any) -> str:
    """Markdown for the step's body: a table when the value is a list of flat records (or an
    analysis's result: its summary, the table of its `rows` and its notes)."""
    rows = records(value)
    if rows is not None:
        return table(rows)
    if isinstance(value, dict) and (rows := records(value.get("rows"))) is not None:
        parts = [str(value["summary"])] if value.get("summary") else []
        parts.append(table(rows))
        parts += [f"*{n}*" for n in value.get("notes") or [] if isinstance(n, str)]
        return "\n\n".join(parts)
    body = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return f"```json\n{body[:MAX_JSON]}\n```"


def records(value: Any) -> list[dict[str, Any]] | None:
    """The records of a list of flat objects (or of FastMCP's {"result": [...]}), else None."""
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]
    if not isinstance(value, list) or not value or not all(isinstance(r, dict) for r in value):
        return None
    if any(isinstance(v, dict | list) for r in value for v in r.values()):
        return None
    return value


def table(rows: list[dict[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows:
        columns += [str(k) for k in row if str(k) not in columns]
    shown = columns[:MAX_COLUMNS]
    lines = [
        "| " + " | ".join(_cell(c) for c in shown) + " |",
        "|" + "---|" * len(shown),
    ]
    for row in rows[:MAX_ROWS]:
        lines.append("| " + " | ".join(_cell(row.get(c, "")) for c in shown) + " |")
    more = []
    if len(rows) > MAX_ROWS:
        more.append(i18n.t("session.more_rows", n=len(rows) - MAX_ROWS))
    if len(columns) > MAX_COLUMNS:
        more.append(i18n.t("session.more_columns", n=len(columns) - MAX_COLUMNS))
    said = i18n.t("session.not_shown", more=", ".join(more)) if more else ""
    return "\n".join(lines) + (f"\n\n{said}" if said else "")


def _cell(value: Any) -> str:
    text = "" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value))
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"
