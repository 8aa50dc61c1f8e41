"""Titles and bodies of an agent run's steps, in a researcher's words. No Chainlit.

One step per tool call (its arguments in, its result out, what it changed in the study and the
figures it drew); the titles carry what one wants without opening a step: status, result count,
live training progress, duration.
"""

from __future__ import annotations

import json
import re
from typing import Any

from brainchat import i18n
from brainchat.events import Evaluation, ModelSwitch, RequestUnderstood, ToolFinished
from brainchat.ui.format import seconds
from brainchat.ui.structured_view import structured_block

# The model-facing note a plotting tool returns; the browser shows the figure itself instead.
IMAGE_NOTE = re.compile(r"^\s*image: .* shown to the user\s*$")
STATUS = {"success": "success", "cached": "success", "error": "error", "refused": "refused", "skipped": "skipped"}  # fmt: skip
DECISIONS = ("enough", "answer", "stop", "not_enough", "continue")


def plural(n: int, key: str) -> str:
    """`steps.<key>.one` or `.many` with the count: "1 result", "3 tool calls"."""
    return i18n.t(f"steps.{key}.{'one' if n == 1 else 'many'}", n=n)


def status_word(status: str) -> str:
    return i18n.t(f"steps.status.{STATUS[status]}") if status in STATUS else status


def verdict_word(verdict: str) -> str:
    return i18n.t(f"steps.verdict.{verdict}") if verdict in DECISIONS else verdict


def tool_title(name: str, state: str | None = None, duration: float | None = None) -> str:
    """`web_search · 4 results · 120 ms`, `train_model · epoch 3/12 · …`, `x · running…`."""
    took = f" · {seconds(duration)}" if duration is not None else ""
    return f"{name} · {state or i18n.t('steps.running')}{took}"


def finished_title(e: ToolFinished) -> str:
    count = len(e.top) if e.top else e.result_count  # the results the step lists, when it does
    hit = i18n.t("steps.cache_hit") if e.cache_hit else ""
    if e.status == "success" and count is not None:
        state = plural(count, "result") + hit
    else:
        state = status_word(e.status) + hit
    return tool_title(e.name, state, e.duration)


def progress_title(name: str, message: str, data: dict[str, Any]) -> str:
    """Live progress for the title: epoch k/n, loss, validation accuracy, time left."""
    if "epoch" in data and "epochs" in data:
        parts = [i18n.t("steps.epoch", epoch=data["epoch"], epochs=data["epochs"])]
        if "loss" in data:
            parts.append(i18n.t("steps.loss", value=f"{data['loss']:.3f}"))
        if "val_acc" in data:
            parts.append(i18n.t("steps.val_acc", value=f"{data['val_acc']:.2f}"))
        elif "acc" in data:
            parts.append(i18n.t("steps.acc", value=f"{data['acc']:.2f}"))
        if data.get("eta") is not None:
            parts.append(i18n.t("steps.eta", value=f"{data['eta']:.0f}"))
        return tool_title(name, " · ".join(parts))
    return tool_title(name, message[:80] or None)


def progress_bar(fraction: float | None, width: int = 20) -> str:
    if fraction is None:
        return ""
    done = round(max(0.0, min(1.0, fraction)) * width)
    return f"`{'█' * done}{'░' * (width - done)}` {fraction:.0%}"


def result_text(e: ToolFinished, change: str = "", figures: list[str] | None = None) -> str:
    """The body of a tool step: what came back, the study change, the figures it drew."""
    lines = [_first(e) or i18n.t("steps.no_result")]
    if e.error and e.status != "success":
        lines.append("\n" + i18n.t("steps.error", error=e.error))
    for i, top in enumerate(e.top, 1):  # all of them: the title counts this list
        title = top.get("title") or top.get("url") or i18n.t("steps.result_n", n=i)
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
        lines.append("\n" + i18n.t("steps.study", change=change))
    if figures:
        lines.append("\n" + i18n.t("steps.figures", figures=", ".join(figures)))
    return "\n".join(lines)


def _first(e: ToolFinished) -> str:
    summary = e.summary.strip()
    if e.top and summary.startswith(f"{len(e.top)} results"):  # a search's count, in the UI's words
        summary = plural(len(e.top), "result") + summary.removeprefix(f"{len(e.top)} results")
    return "" if IMAGE_NOTE.match(summary) else summary


def _rest(e: ToolFinished) -> list[str]:
    """The result's lines after the summary, without the model-facing image notes."""
    lines = [line.rstrip() for line in e.content[:2000].splitlines()]
    if lines and lines[0].strip() == e.summary.strip():
        lines = lines[1:]
    return [line.strip() for line in lines if line.strip() and not IMAGE_NOTE.match(line)]


def evaluation_title(e: Evaluation) -> str:
    return i18n.t("steps.evaluation", verdict=verdict_word(e.verdict))


def decision_title(e: Evaluation | None, model: str) -> str:
    """The step where the run hands over to the answer model, with the verdict that routed."""
    verdict = verdict_word(e.verdict if e is not None else "answer")
    return i18n.t("steps.decision", verdict=verdict, model=model)


def decision_text(e: Evaluation | None, switch: ModelSwitch) -> str:
    """Why the run hands over: the verdict's reason (or the switch's own), and who answers."""
    why = e.reason if e is not None else switch.reason
    same = i18n.t("steps.same_model") if "same model" in switch.reason else ""
    return i18n.t(
        "steps.decision_text", why=f"{why[:1].upper()}{why[1:]}", model=switch.model, same=same
    )


def run_title(rounds: int, tool_calls: int, total: float | None = None, suffix: str = "") -> str:
    """`Agent run · 2 rounds · 3 tool calls · 3.41 s`: the time is the stats table's total."""
    took = f" · {seconds(total)}" if total is not None else ""
    rounds_said, calls_said = plural(rounds, "round"), plural(tool_calls, "tool_call")
    return i18n.t("steps.run", rounds=rounds_said, calls=calls_said, took=took, suffix=suffix)


RECORD_FLAGS = ("plot", "listing", "web")


def record_title(e: RequestUnderstood) -> str:
    """The step of a guided model's record of the request: its steps, or why there is none."""
    if e.record is None:
        return i18n.t("steps.not_understood", took=f"{e.duration:.1f}")
    steps = " → ".join(e.record.get("steps") or []) or i18n.t("steps.no_analysis_step")
    return i18n.t("steps.understood", steps=steps, took=f"{e.duration:.1f}")


def record_text(e: RequestUnderstood) -> str:
    """The record as a researcher reads it: what was asked, what was fixed."""
    if e.record is None:
        return i18n.t("steps.no_record", model=e.model, problem=e.problem)
    r = e.record
    how = "JSON schema" if e.how == "schema" else "JSON text"
    lines = [i18n.t("steps.read_request", model=e.model, how=how)]
    if r.get("language"):
        lines.append(i18n.t("steps.record.language", value=r["language"]))
    steps = ", ".join(r.get("steps") or []) or i18n.t("steps.record.none")
    lines.append(i18n.t("steps.record.steps", value=steps))
    if r.get("positions"):
        places = ", ".join(str(p) for p in r["positions"])
        lines.append(i18n.t("steps.record.positions", value=places))
    for tool, values in (r.get("fixed") or {}).items():
        said = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in values.items())
        lines.append(f"- {tool}: {said}")
    asked = [k for k in RECORD_FLAGS if r.get(k)]
    if asked:
        lines.append(i18n.t("steps.record.also", value=", ".join(asked)))
    return "\n".join(lines)
