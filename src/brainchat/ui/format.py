"""Plain-text / Markdown pieces the browser shows (stats, tool listings, notices). No Chainlit.

Kept apart from the Chainlit rendering so they can be unit-tested and reused.
"""

from __future__ import annotations

import json
from typing import Any

from brainchat.events import Notice, Stats, ToolFinished
from brainchat.tools.registry import ToolSet

ROLE_LABELS = {"chat": "chat", "function_call": "function call", "answer": "answer"}
NOTICE_ICONS = {
    "iteration_limit": "⏱️",
    "timeout": "⏱️",
    "loop": "🔁",
    "error": "⚠️",
    "refused": "🚫",
    "cancelled": "⏹️",
    "info": "ℹ️",
}


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def tokens(value: int, estimated: bool) -> str:
    return f"{value} est." if estimated else str(value)


def cost(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if value >= 0.0001 or value == 0 else f"${value:.6f}"


def chat_stats_line(stats: Stats) -> str:
    """One compact line for a chat answer: model, tokens, time to first token, total time."""
    parts = []
    for row in stats.rows:
        est = " (est.)" if row.estimated else ""
        parts.append(f"{row.model} · {row.input_tokens} in / {row.output_tokens} out tokens{est}")
    parts.append(f"first token {seconds(stats.ttft)}")
    parts.append(f"total {seconds(stats.total_seconds)}")
    if stats.total_cost is not None:
        parts.append(f"≈ {cost(stats.total_cost)}")
    return "`" + " · ".join(parts) + "`"


def agent_stats_table(stats: Stats) -> str:
    """A compact per-role table with a total row (Markdown)."""
    lines = [
        "| Role | Model | Calls | In tokens | Out tokens | Time | Cost |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    calls = inp = out = 0
    est = False
    for r in stats.rows:
        calls, inp, out = calls + r.calls, inp + r.input_tokens, out + r.output_tokens
        est = est or r.estimated
        lines.append(
            f"| {ROLE_LABELS.get(r.role, r.role)} | {r.model} | {r.calls}{f' ({r.failed} failed)' if r.failed else ''} | "
            f"{tokens(r.input_tokens, r.estimated)} | {tokens(r.output_tokens, r.estimated)} | "
            f"{seconds(r.seconds)} | {cost(r.cost)} |"
        )
    if stats.tool_seconds:
        lines.append(f"| tools | | | | | {seconds(stats.tool_seconds)} | |")
    lines.append(
        f"| **Total** | | {calls} | {tokens(inp, est)} | {tokens(out, est)} | "
        f"{seconds(stats.total_seconds)} | {cost(stats.total_cost)} |"
    )
    lines.append("")
    lines.append(f"First answer token after {seconds(stats.ttft)}.")
    return "\n".join(lines)


def notice_text(notice: Notice) -> str:
    icon = NOTICE_ICONS.get(notice.kind, "ℹ️")
    hint = f"\n\n*{notice.hint}*" if notice.hint else ""
    return f"{icon} {notice.message}{hint}"


def args_text(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, indent=2, default=str)


def tool_call_name(
    name: str, status: str, duration: float | None = None, cached: bool = False
) -> str:
    """The title of a tool-call step: name, status, duration, cache hit."""
    label = {"running": "running…", "success": "done", "error": "failed", "cached": "done"}.get(
        status, status
    )
    extra = f" · {seconds(duration)}" if duration is not None else ""
    hit = " · cache hit" if cached else ""
    return f"Tool call: {name} · {label}{extra}{hit}"


def tool_result_text(event: ToolFinished) -> str:
    """The body of a tool-result step: summary, top results as links, structured content."""
    lines = [event.summary or "(no summary)"]
    if event.error:
        lines.append(f"\n**Error:** {event.error}")
    for i, top in enumerate(event.top[:3], 1):
        title = top.get("title") or top.get("url") or f"result {i}"
        url = top.get("url")
        head = f"[{title}]({url})" if url else title
        snippet = (top.get("snippet") or "").strip()
        lines.append(f"{i}. {head}" + (f" — {snippet[:200]}" if snippet else ""))
    if event.structured is not None:
        body = json.dumps(event.structured, ensure_ascii=False, indent=2, default=str)
        lines.append(f"\n```json\n{body[:3000]}\n```")
    elif event.content and not event.top and event.content != event.summary:
        lines.append(f"\n```\n{event.content[:2000]}\n```")
    return "\n".join(lines)


def result_step_name(event: ToolFinished) -> str:
    count = f" · {event.result_count} result(s)" if event.result_count is not None else ""
    return f"Tool result: {event.name}{count}"


def citations_text(sources: list[dict[str, Any]]) -> str:
    lines = ["", "**Sources**"]
    for s in sources:
        title = s.get("title") or s.get("url") or "source"
        url = s.get("url")
        lines.append(
            f"{s.get('n', '-')}. [{title}]({url})" if url else f"{s.get('n', '-')}. {title}"
        )
    return "\n".join(lines)


def toolset_text(toolset: ToolSet, title: str = "Tools") -> str:
    """Servers, tools and failed tool sources, grouped by source."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in toolset.describe():
        groups.setdefault(row["source"], []).append(row)
    lines = [f"**{title}**"]
    if not groups:
        lines.append("- (no tools available)")
    for source, rows in groups.items():
        label = "local" if source == "local" else f"MCP server `{source.removeprefix('mcp:')}`"
        names = []
        for row in rows:
            flags = [f for f in ("destructive", "ask_first", "long_running") if row[f]]
            names.append(
                f"`{row['name']}`" + (f" ({', '.join(flags).replace('_', '-')})" if flags else "")
            )
        lines.append(f"- {label}: {', '.join(names)}")
    for failure in toolset.failures:
        lines.append(f"- ❌ `{failure.source}` unavailable: {failure.reason}")
    return "\n".join(lines)


def roles_text(roles: dict[str, str]) -> str:
    return (
        f"**Models:** thinking and tool calls with `{roles.get('function_call', '?')}`, "
        f"final answer with `{roles.get('answer', '?')}`."
    )


def mode_text(mode: str, toolset: ToolSet | None, roles: dict[str, str]) -> str:
    """The confirmation shown when the mode changes."""
    if mode == "chat":
        return (
            f"💬 **Chat mode is on.** `{roles.get('chat', roles.get('function_call', '?'))}` "
            "answers directly, with the conversation as context; no tools are used."
        )
    assert toolset is not None
    return "\n\n".join(
        [
            "🤖 **Agent mode is on.** The agent reasons, calls tools, then answers with sources.",
            toolset_text(toolset, "Tools it can use"),
            roles_text(roles),
        ]
    )


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def study_restored_text(e: Any) -> str:
    """What the replay of a resumed conversation's EEG study did, and what it could not do."""
    done = "; ".join(e.replayed) or "nothing"
    lines = [
        f"The EEG study of this conversation was rebuilt from its saved log in "
        f"{seconds(e.seconds)}: {done}."
    ]
    if e.problem:
        lines.append(f"⚠️ It stopped at {e.problem}.")
        if e.skipped:
            lines.append(
                f"Not restored: {'; '.join(e.skipped)}. Check the data folder "
                "(list_data_files) and redo those steps."
            )
    return "\n\n".join(lines)
