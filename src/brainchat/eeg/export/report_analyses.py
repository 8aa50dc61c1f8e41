"""The report's section of analyses (eeg/core/analyses.py): each one's parameters, table and
notes, from its log entry's result (the numbers the tool returned, which the script recomputes)."""

from __future__ import annotations

import base64
import html
import logging
import math
from typing import Any

from brainchat.eeg.core.analyses import (
    ANALYSES,
    analysis_data,
    data_unchanged_after,
    entry_label,
    module_of,
)

log_ = logging.getLogger(__name__)

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


def _figure(log: list[dict[str, Any]], index: int, state: Any) -> str:
    """The analysis's figure drawn again from the study, when the data it read is unchanged."""
    entry = log[index]
    if state is None or not data_unchanged_after(log, index):
        return (
            '<p class="note">Figure not redrawn: the data changed after this analysis (the '
            "table holds its numbers as computed).</p>"
        )
    try:
        png = module_of(entry["op"]).figure(
            analysis_data(state), entry["result"], **(entry.get("params") or {})
        )
    except Exception:  # noqa: BLE001 - a figure that fails leaves the report whole
        log_.warning("the figure of %s was not drawn", entry["op"], exc_info=True)
        return '<p class="note">Figure not drawn (see the server log).</p>'
    if not png:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{_e(entry_label(entry))}" src="data:image/png;base64,{data}">'


def analyses_section(log: list[dict[str, Any]], state: Any = None) -> str:
    """Every analysis of the log, in order, with its figure drawn from `state` (the study as it
    is) where the data it read has not changed since (empty: no analysis)."""
    done = [
        i
        for i, e in enumerate(log)
        if e.get("op") in ANALYSES and isinstance(e.get("result"), dict)
    ]
    if not done:
        return ""
    parts = ["<h2>Analyses</h2>"]
    for i in done:
        entry = log[i]
        result = entry["result"]
        parts.append(f"<h3>{_e(entry_label(entry))}</h3>")
        if result.get("summary"):
            parts.append(f"<p>{_e(result['summary'])}</p>")
        rows = [r for r in result.get("rows") or [] if isinstance(r, dict)]
        if rows:
            parts.append(_table(rows))
        parts += [f'<p class="note">{_e(n)}</p>' for n in result.get("notes") or []]
        parts.append(_figure(log, i, state))
    return "\n".join(p for p in parts if p)
