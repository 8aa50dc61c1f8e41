"""An answer that repeats brainchat's own instructions is not an answer.

After a timeout with nothing gathered, a small answer model echoed the answer request's "Say
plainly which steps were done (the successful tool calls above)..." as its answer. `echoed` finds
an instruction sentence in an answer; `facts_answer` is what brainchat says instead: what the
ledger shows, in its own words."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from brainchat.agent import textcalls
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
    """brainchat's own answer from the ledger: each successful call's first line (a search's
    sources by title and address), each failure; a result repeated by identical calls once."""
    lines = [f"brainchat writes this answer itself: {why}. What this run shows:", ""]
    blocks: dict[tuple[str, ...], int] = {}
    for e in ledger.entries:
        if e.status == "success":
            block = tuple(_sources_lines(e.name, e.sources) or _result_lines(e.name, e.result))
        elif e.invalid:  # a call the model could not write: what was wrong, no repair hint
            block = (f"- {textcalls.what_was_wrong(e.name, e.error or 'invalid')[:200]}",)
        elif e.status in ("error", "refused", "skipped"):
            block = (f"- {e.name} {e.status}: {(e.error or '')[:200]}",)
        else:
            continue
        blocks[block] = blocks.get(block, 0) + 1
    for block, times in blocks.items():
        again = f" (the same, {times} times)" if times > 1 else ""
        lines += [block[0] + again, *block[1:]]
    if not any(e.status == "success" for e in ledger.entries):
        lines.append("- No tool call succeeded, so nothing was gathered.")
    return "\n".join(lines)


def _sources_lines(name: str, sources: list[dict[str, Any]]) -> list[str]:
    """A search's results by title and address, without [n] markers: this answer cites
    nothing, it names what was found."""
    if not sources:
        return []
    out = [f"- {name}: {len(sources)} result(s):"]
    for s in sources[:LISTED]:
        url = f" ({str(s.get('url'))[:200]})" if s.get("url") else ""
        out.append(f"  - {str(s.get('title') or 'untitled')[:160]}{url}")
    return out


LISTED = 12  # items of a list result kept, so the facts name what a listing found


def _result_lines(name: str, result: str) -> list[str]:
    """A result's first line; when that line introduces a list ("4 file(s) ...:"), the list's
    first items too, so the facts name what was found (the files, not "4 file(s)")."""
    rows = [ln.strip() for ln in result.splitlines() if ln.strip()] or ["(empty)"]
    out = [f"- {name}: {rows[0][:200]}"]
    if rows[0].endswith(":"):
        out += [f"  - {row[:160]}" for row in rows[1 : 1 + LISTED]]
        if len(rows) > 1 + LISTED:
            out.append(f"  - ... and {len(rows) - 1 - LISTED} more")
    return out
