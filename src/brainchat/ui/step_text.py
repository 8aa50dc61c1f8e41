"""Titles and bodies of an agent run's steps, in a researcher's words. No Chainlit.

One step per tool call (its arguments in, its result out, what it changed in the study and the
figures it drew); the titles carry what one wants without opening a step: status, result count,
live training progress, duration.
"""

from __future__ import annotations

import json
import re
from typing import Any

from brainchat.events import Evaluation, ModelSwitch, RequestUnderstood, ToolFinished
from brainchat.ui.format import seconds
from brainchat.ui.structured_view import structured_block

# The model-facing note a plotting tool returns; the browser shows the figure itself instead.
IMAGE_NOTE = re.compile(r"^\s*image: .* shown to the user\s*$")
STATUS = {
    "success": "done",
    "cached": "done",
    "error": "failed",
    "refused": "refused",
    "skipped": "not run again (repeat)",
}
DECISIONS = {
    "enough": "enough to answer",
    "answer": "ready to answer",
    "stop": "stop",
    "not_enough": "not enough, trying another way",
    "continue": "another round",
}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tool_title(name: str, state: str = "running…", duration: float | None = None) -> str:
    """`web_search · 4 results · 120 ms`, `train_model · epoch 3/12 · …`, `x · running…`."""
    took = f" · {seconds(duration)}" if duration is not None else ""
    return f"{name} · {state}{took}"


def finished_title(e: ToolFinished) -> str:
    count = len(e.top) if e.top else e.result_count  # the results the step lists, when it does
    if e.status == "success" and count is not None:
        state = plural(count, "result") + (" · cache hit" if e.cache_hit else "")
    else:
        state = STATUS.get(e.status, e.status) + (" · cache hit" if e.cache_hit else "")
    return tool_title(e.name, state, e.duration)


def progress_title(name: str, message: str, data: dict[str, Any]) -> str:
    """Live progress for the title: epoch k/n, loss, validation accuracy, time left."""
    if "epoch" in data and "epochs" in data:
        parts = [f"epoch {data['epoch']}/{data['epochs']}"]
        if "loss" in data:
            parts.append(f"loss {data['loss']:.3f}")
        if "val_acc" in data:
            parts.append(f"val acc {data['val_acc']:.2f}")
        elif "acc" in data:
            parts.append(f"acc {data['acc']:.2f}")
        if data.get("eta") is not None:
            parts.append(f"ETA {data['eta']:.0f} s")
        return tool_title(name, " · ".join(parts))
    return tool_title(name, message[:80] or "running…")


def progress_bar(fraction: float | None, width: int = 20) -> str:
    if fraction is None:
        return ""
    done = round(max(0.0, min(1.0, fraction)) * width)
    return f"`{'█' * done}{'░' * (width - done)}` {fraction:.0%}"


def result_text(e: ToolFinished, change: str = "", figures: list[str] | None = None) -> str:
    """The body of a tool step: what came back, the study change, the figures it drew."""
    lines = [_first(e) or "(no result)"]
    if e.error and e.status != "success":
        lines.append(f"\n**Error:** {e.error}")
    for i, top in enumerate(e.top, 1):  # all of them: the title counts this list
        title = top.get("title") or top.get("url") or f"result {i}"
        head = f"[{title}]({top['url']})" if top.get("url") else title
        snippet = (top.get("snippet") or "").strip()
        lines.append(f"{i}. {head}" + (f" — {snippet[:200]}" if snippet else ""))
    if e.structured is not None:  # a table for records, else JSON
        lines.append("\n" + structured_block(e.structured))
    elif not e.top:
        rest = _rest(e)
        if rest:
            lines.append("\n" + "  \n".join(rest))  # hard line breaks: one result line per line
    if change:
        lines.append(f"\n**Study:** {change}")
    if figures:
        lines.append(f"\n**Figures** (shown under the answer): {', '.join(figures)}")
    return "\n".join(lines)


def _first(e: ToolFinished) -> str:
    summary = e.summary.strip()
    return "" if IMAGE_NOTE.match(summary) else summary


def _rest(e: ToolFinished) -> list[str]:
    """The result's lines after the summary, without the model-facing image notes."""
    lines = [line.rstrip() for line in e.content[:2000].splitlines()]
    if lines and lines[0].strip() == e.summary.strip():
        lines = lines[1:]
    return [line.strip() for line in lines if line.strip() and not IMAGE_NOTE.match(line)]


def evaluation_title(e: Evaluation) -> str:
    return f"Evaluation · {DECISIONS.get(e.verdict, e.verdict)}"


def decision_title(e: Evaluation | None, model: str) -> str:
    """The step where the run hands over to the answer model, with the verdict that routed."""
    verdict = DECISIONS.get(e.verdict, e.verdict) if e is not None else "ready to answer"
    return f"Decision · {verdict} · answering with {model}"


def decision_text(e: Evaluation | None, switch: ModelSwitch) -> str:
    """Why the run hands over: the verdict's reason (or the switch's own), and who answers."""
    why = e.reason if e is not None else switch.reason
    same = " (the same model that called the tools)" if "same model" in switch.reason else ""
    return f"{why[:1].upper()}{why[1:]}.\n\n{switch.model}{same} writes the answer."


def run_title(rounds: int, tool_calls: int, total: float | None = None, suffix: str = "") -> str:
    """`Agent run · 2 rounds · 3 tool calls · 3.41 s`: the time is the stats table's total."""
    took = f" · {seconds(total)}" if total is not None else ""
    return (
        f"Agent run · {plural(rounds, 'round')} · {plural(tool_calls, 'tool call')}{took}{suffix}"
    )


RECORD_FLAGS = ("plot", "listing", "web")


def record_title(e: RequestUnderstood) -> str:
    """The step of a guided model's record of the request: its steps, or why there is none."""
    if e.record is None:
        return f"Request not understood · {e.duration:.1f} s"
    steps = " → ".join(e.record.get("steps") or []) or "no analysis step"
    return f"Request understood · {steps} · {e.duration:.1f} s"


def record_text(e: RequestUnderstood) -> str:
    """The record as a researcher reads it: what was asked, what was fixed."""
    if e.record is None:
        return f"{e.model} made no record of the request ({e.problem}); the agent goes on without one."  # fmt: skip
    r = e.record
    lines = [f"{e.model} read the request ({'JSON schema' if e.how == 'schema' else 'JSON text'}):"]
    if r.get("language"):
        lines.append(f"- language: {r['language']}")
    lines.append(f"- steps: {', '.join(r.get('steps') or []) or 'none'}")
    if r.get("positions"):
        lines.append(f"- files at places {', '.join(str(p) for p in r['positions'])} of the listing")  # fmt: skip
    for tool, values in (r.get("fixed") or {}).items():
        said = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in values.items())
        lines.append(f"- {tool}: {said}")
    asked = [k for k in RECORD_FLAGS if r.get(k)]
    if asked:
        lines.append(f"- also: {', '.join(asked)}")
    return "\n".join(lines)
