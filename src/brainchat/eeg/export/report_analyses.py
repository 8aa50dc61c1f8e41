"""The report's section of analyses (eeg/core/analyses.py): each one's parameters, table and
notes, from its log entry's result (the numbers the tool returned, which the script recomputes)."""

from __future__ import annotations

import html
import math
from typing import Any

from brainchat.eeg.core.analyses import ANALYSES, entry_label

MAX_ROWS = 400  # a longer table is cut in the report (the script's JSON has every row)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:.4g}" if abs(value) < 1e-2 or abs(value) >= 1e4 else f"{value:.3f}"
    if isinstance(value, list | dict):
        return _e(", ".join(map(str, value)) if isinstance(value, list) else value)
    return _e(value)


def _table(rows: list[dict[str, Any]]) -> str:
    head = list(dict.fromkeys(k for r in rows for k in r))
    top = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(r.get(h, ''))}</td>" for h in head) + "</tr>"
        for r in rows[:MAX_ROWS]
    )
    cut = (
        f"<p>First {MAX_ROWS} of {len(rows)} rows; the script prints them all.</p>"
        if len(rows) > MAX_ROWS
        else ""
    )
    return (
        f'<table class="analysis"><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>{cut}'
    )


def analyses_section(log: list[dict[str, Any]]) -> str:
    """Every analysis of the log, in order (empty: none)."""
    done = [e for e in log if e.get("op") in ANALYSES and isinstance(e.get("result"), dict)]
    if not done:
        return ""
    parts = ["<h2>Analyses</h2>"]
    for entry in done:
        result = entry["result"]
        parts.append(f"<h3>{_e(entry_label(entry))}</h3>")
        if result.get("summary"):
            parts.append(f"<p>{_e(result['summary'])}</p>")
        rows = [r for r in result.get("rows") or [] if isinstance(r, dict)]
        if rows:
            parts.append(_table(rows))
        parts += [f'<p class="note">{_e(n)}</p>' for n in result.get("notes") or []]
    return "\n".join(parts)
