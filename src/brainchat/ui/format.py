"""Plain-text / Markdown pieces the browser shows (stats, tool listings, notices). No Chainlit.

Kept apart from the Chainlit rendering so they can be unit-tested and reused.
"""

from __future__ import annotations

import json
import re
from typing import Any

from brainchat import i18n
from brainchat.events import Notice, RoleStats, Stats
from brainchat.prices import unknown_price_hint
from brainchat.tools.registry import ToolSet

ROLE_LABELS = ("chat", "record", "function_call", "answer")  # brainchat.i18n.format


def role_label(role: str) -> str:
    return i18n.t(f"format.role.{role}") if role in ROLE_LABELS else role


NOTICE_ICONS = {
    "iteration_limit": "⏱️",
    "timeout": "⏱️",
    "context_full": "📏",
    "loop": "🔁",
    "error": "⚠️",
    "refused": "🚫",
    "cancelled": "⏹️",
    "info": "ℹ️",
    "ungrounded": "⚠️",
    "unverified_claim": "⚠️",
}
FLAGS = ("destructive", "ask_first", "long_running")  # a tool's flags the listing names
TIP_HREF = "#brainchat-tip"  # a link only for its title (tooltip); brainchat.js makes it inert


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def tokens(value: int, estimated: bool) -> str:
    return i18n.t("format.est", n=value) if estimated else str(value)


def cost(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if value >= 0.0001 or value == 0 else f"${value:.6f}"


def tip(text: str, tooltip: str) -> str:
    """Markdown text with a hover tooltip: a link whose title is the tooltip."""
    return f'[{text}]({TIP_HREF} "{tooltip.replace(chr(34), chr(39))}")'


def cost_cell(value: float | None, model: str) -> str:
    """A cost, or "—" with a tooltip saying how to give the model a price."""
    return cost(value) if value is not None else tip("—", unknown_price_hint(model))


def total_cost_cell(stats: Stats) -> str:
    """The sum of the known costs; "≥" when some model has no price, "—" when none has."""
    unknown = ", ".join(dict.fromkeys(r.model for r in stats.rows if r.cost is None))
    if stats.total_cost is None:
        return tip("—", unknown_price_hint(unknown or "these models"))
    if unknown:
        return tip(f"≥ {cost(stats.total_cost)}", unknown_price_hint(unknown))
    return cost(stats.total_cost)


def chat_stats_table(stats: Stats) -> str:
    """The footer under a chat answer: model, tokens, time to first token, time, cost."""
    first = stats.ttft is not None  # no answer token (a stop, an error): no first-token column
    cols = ["model", "in", "out", *(["first"] if first else []), "time", "cost"]
    head = [i18n.t(f"format.col.{c}") for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "--:|" * (len(head) - 1)]
    for r in stats.rows:
        cells = [
            r.model
            + (i18n.t("format.calls_failed", failed=r.failed, calls=r.calls) if r.failed else ""),
            tokens(r.input_tokens, r.estimated),
            tokens(r.output_tokens, r.estimated),
            *([seconds(stats.ttft)] if first else []),
            seconds(stats.total_seconds),
            cost_cell(r.cost, r.model),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def agent_stats_table(stats: Stats) -> str:
    """A compact per-role table with a total row (Markdown)."""
    cols = ("role", "model", "calls", "in", "out", "time", "cost")
    head = " | ".join(i18n.t(f"format.col.{c}") for c in cols)
    lines = [f"| {head} |", "|---|---|--:|--:|--:|--:|--:|"]
    calls = inp = out = 0
    est = False
    for r in stats.rows:
        calls, inp, out = calls + r.calls, inp + r.input_tokens, out + r.output_tokens
        est = est or r.estimated
        lines.append(
            f"| {role_label(r.role)} | {r.model} | {r.calls}{i18n.t('format.failed', failed=r.failed) if r.failed else ''} | "
            f"{tokens(r.input_tokens, r.estimated)} | {tokens(r.output_tokens, r.estimated)} | "
            f"{seconds(r.seconds)} | {cost_cell(r.cost, r.model)} |"
        )
    if stats.tool_seconds:
        lines.append(f"| {i18n.t('format.tools_row')} | | | | | {seconds(stats.tool_seconds)} | |")
    lines.append(
        f"| {i18n.t('format.total')} | | {calls} | {tokens(inp, est)} | {tokens(out, est)} | "
        f"{seconds(stats.total_seconds)} | {total_cost_cell(stats)} |"
    )
    if stats.ttft is not None:  # no answer token (a stop, an error): no line saying "—"
        lines += ["", i18n.t("format.first_token", time=seconds(stats.ttft))]
    return "\n".join(lines)


def usage_line(stats: Stats) -> str:
    """One quiet line for under a chat answer (model, tokens, time, cost); it opens the table."""
    models = ", ".join(dict.fromkeys(r.model for r in stats.rows)) or i18n.t("format.no_model")
    est = any(r.estimated for r in stats.rows)
    inp = sum(r.input_tokens for r in stats.rows)
    out = sum(r.output_tokens for r in stats.rows)
    price = i18n.t("format.cost_unknown") if stats.total_cost is None else cost(stats.total_cost)
    if stats.total_cost is not None and any(r.cost is None for r in stats.rows):
        price = f"≥ {price}"
    line = i18n.t(
        "format.usage_line",
        models=models,
        inp=tokens(inp, est),
        out=tokens(out, est),
        time=seconds(stats.total_seconds),
        price=price,
    )
    return re.sub(r"[\\[\]*`<>]", "", line)  # shown as a link's text: no Markdown in it


def stats_footer(mode: str, stats: Stats) -> str:
    """The stats under an answer, the same shape in both modes: a rule, then a small table."""
    table = agent_stats_table(stats) if mode == "agent" else chat_stats_table(stats)
    return "\n\n---\n" + table


def usage_so_far(
    mode: str,
    rows: list[RoleStats] | None,
    streamed: dict[tuple[str, str], list[str]],
    elapsed: float,
) -> str:
    """Usage so far per role (from the core's ledger when given; else estimated from the text
    `streamed` per (role, model)) and the elapsed time: what a stopped run shows."""
    if rows:
        total = sum(r.cost for r in rows if r.cost is not None)
        known = any(r.cost is not None for r in rows)
        stats = Stats(rows=rows, total_seconds=elapsed, total_cost=total if known else None)
        return i18n.t("format.usage_so_far") + stats_footer(mode, stats).removeprefix("\n\n---")
    from brainchat.usage import count_tokens

    parts = [
        i18n.t(
            "format.output_est", role=role_label(role), model=model, n=count_tokens("".join(chunks))
        )  # fmt: skip
        for (role, model), chunks in streamed.items()
    ]
    said = "; ".join(parts) or i18n.t("format.no_tokens")
    return i18n.t("format.usage_so_far_est", parts=said, time=seconds(elapsed))


def notice_text(notice: Notice) -> str:
    icon = NOTICE_ICONS.get(notice.kind, "ℹ️")
    hint = f"\n\n*{notice.hint}*" if notice.hint else ""
    return f"{icon} {notice.message}{hint}"


def args_text(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, indent=2, default=str)


def citations_text(sources: list[dict[str, Any]]) -> str:
    lines = ["", i18n.t("format.sources")]
    for s in sources:
        title = s.get("title") or s.get("url") or i18n.t("format.source")
        url = s.get("url")
        # a passage of the user's documents (knowledge://) names its document and page as text
        lines.append(
            f"{s.get('n', '-')}. [{title}]({url})"
            if _linkable(url)
            else f"{s.get('n', '-')}. {title}"
        )
    return "\n".join(lines)


# `[n]` outside code: not escaped, an image, a link's text or a reference definition
CITE_MARK = re.compile(r"(?<![\\!])\[(\d{1,3})\](?!\()")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+).+?\1")
REF_DEFINITION = re.compile(r"^ {0,3}\[\d{1,3}\]:")


def link_citations(text: str, sources: list[dict[str, Any]]) -> str:
    """`[1]` in an answer becomes a link to source 1; a marker without a source stays as is.

    Markdown-safe: fenced code blocks and inline code are left alone, and only http(s) URLs
    without spaces or angle brackets become links."""
    links = {
        int(s["n"]): _cite_link(int(s["n"]), str(s["url"]), str(s.get("title") or ""))
        for s in sources
        if str(s.get("n", "")).isdigit() and _linkable(s.get("url"))
    }
    if not links:
        return text
    out, fence = [], ""
    for line in text.splitlines(keepends=True):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            out.append(line)
        elif opening:
            fence = opening.group(1)
            out.append(line)
        elif REF_DEFINITION.match(line):
            out.append(line)
        else:
            out.append(_link_outside_code(line, links))
    return "".join(out)


def _linkable(url: Any) -> bool:
    return (
        isinstance(url, str)
        and url.startswith(("https://", "http://"))
        and not re.search(r"[\s<>]", url)
    )


def _cite_link(n: int, url: str, title: str) -> str:
    title = re.sub(r"\s+", " ", title).replace('"', "'").replace("\\", "")
    return f'[\\[{n}\\]](<{url}> "{title}")' if title else f"[\\[{n}\\]](<{url}>)"


def _link_outside_code(line: str, links: dict[int, str]) -> str:
    pieces, last = [], 0
    for span in CODE_SPAN.finditer(line):
        pieces.append(_link_marks(line[last : span.start()], links) + span.group(0))
        last = span.end()
    return "".join(pieces) + _link_marks(line[last:], links)


def _link_marks(text: str, links: dict[int, str]) -> str:
    return CITE_MARK.sub(lambda m: links.get(int(m.group(1)), m.group(0)), text)


def toolset_text(toolset: ToolSet, title: str | None = None) -> str:
    """Servers, tools and failed tool sources, grouped by source."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in toolset.describe():
        groups.setdefault(row["source"], []).append(row)
    lines = [f"**{title or i18n.t('format.tools')}**"]
    if not groups:
        lines.append(i18n.t("format.no_tools"))
    for source, rows in groups.items():
        label = (
            i18n.t("format.local")
            if source == "local"
            else i18n.t("format.mcp_server", name=source.removeprefix("mcp:"))
        )
        names = []
        for row in rows:
            flags = [i18n.t(f"format.flag.{f}") for f in FLAGS if row[f]]
            names.append(f"`{row['name']}`" + (f" ({', '.join(flags)})" if flags else ""))
        lines.append(f"- {label}: {', '.join(names)}")
    for failure in toolset.failures:
        lines.append(i18n.t("format.unavailable", source=failure.source, reason=failure.reason))
    return "\n".join(lines)


def tools_count(toolset: ToolSet) -> str:
    """One line: how many tools, from where, and how many sources failed to load."""
    sources: dict[str, int] = {}
    for row in toolset.describe():
        key = "local" if row["source"] == "local" else "MCP"
        sources[key] = sources.get(key, 0) + 1
    n = sum(sources.values())
    where = (
        i18n.t("format.tools_where", local=sources.get("local", 0), mcp=sources["MCP"])
        if "MCP" in sources
        else ""
    )
    failed = len(toolset.failures)
    down = i18n.t(f"format.sources_down.{_one(failed)}", n=failed) if failed else ""
    return i18n.t(f"format.tools_count.{_one(n)}", n=n) + where + down


def _one(n: int) -> str:
    return "one" if n == 1 else "many"


def roles_text(roles: dict[str, str]) -> str:
    return i18n.t(
        "welcome.roles",
        function_call=roles.get("function_call", "?"),
        answer=roles.get("answer", "?"),
    )


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def study_restored_text(e: Any) -> str:
    """What the replay of a resumed conversation's EEG study did, and what it could not do."""
    done = "; ".join(e.replayed) or i18n.t("format.nothing")
    lines = [i18n.t("format.restored", time=seconds(e.seconds), done=done)]
    if e.problem:
        lines.append(i18n.t("format.restore_stopped", problem=e.problem))
        if e.skipped:
            lines.append(i18n.t("format.not_restored", skipped="; ".join(e.skipped)))
    return "\n\n".join(lines)


def shown_folder(data_dir: Any, folder: Any) -> str:
    """A folder as a message names it, in the user's language: relative to the data folder,
    never by where the server keeps it (eeg.io.paths.shown_folder's rule)."""
    from pathlib import Path

    from brainchat.eeg.io.paths import relative_name

    name = relative_name(data_dir, folder)
    if name == ".":
        return i18n.t("format.folder.root")
    if Path(name).is_absolute():
        return i18n.t("format.folder.other", name=Path(folder).name)
    return i18n.t("format.folder.sub", name=Path(name).as_posix())
