"""An answer that repeats brainchat's own instructions is not an answer (issue #23).

After a timeout with nothing gathered, a small answer model echoed the answer request's "Say
plainly which steps were done (the successful tool calls above)..." as its answer. `echoed` finds
an instruction sentence in an answer; `facts_answer` is what brainchat says instead: what the
ledger shows, in its own words."""

from __future__ import annotations

import re
from collections.abc import Iterable

from brainchat.agent.state import ToolLedger

MIN_SENTENCE = 25  # shorter instruction fragments ("Tool results:") may occur in any answer


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def echoed(answer: str, instructions: Iterable[str]) -> str | None:
    """The first instruction sentence (at least MIN_SENTENCE long) that the answer repeats."""
    said = _normal(answer)
    for text in instructions:
        for sentence in re.split(r"(?<=[.;:])\s+", text):
            core = _normal(sentence).rstrip(".;:")
            if len(core) >= MIN_SENTENCE and core in said:
                return sentence.strip()
    return None


def facts_answer(ledger: ToolLedger, why: str) -> str:
    """brainchat's own answer from the ledger: each successful call's first line, each failure."""
    lines = [f"brainchat writes this answer itself: {why}. What this run shows:", ""]
    for e in ledger.entries:
        if e.status == "success":
            lines += _result_lines(e.name, e.result)
        elif e.status in ("error", "refused", "skipped"):
            lines.append(f"- {e.name} {e.status}: {(e.error or '')[:200]}")
    if not any(e.status == "success" for e in ledger.entries):
        lines.append("- No tool call succeeded, so nothing was gathered.")
    return "\n".join(lines)


LISTED = 12  # items of a list result kept (a 1.5B run's facts named no file of its listing)


def _result_lines(name: str, result: str) -> list[str]:
    """A result's first line; when that line introduces a list ("4 file(s) ...:"), the list's
    first items too, so the facts name what was found (issue #23: the files task's answer)."""
    rows = [ln.strip() for ln in result.splitlines() if ln.strip()] or ["(empty)"]
    out = [f"- {name}: {rows[0][:200]}"]
    if rows[0].endswith(":"):
        out += [f"  - {row[:160]}" for row in rows[1 : 1 + LISTED]]
        if len(rows) > 1 + LISTED:
            out.append(f"  - ... and {len(rows) - 1 - LISTED} more")
    return out
