"""The end of a run: the answer completed with its sources, figures and usage, or a stop.

`RunRenderer` (ui/render.py) keeps what a run showed; these functions close it. In Chat the usage
is one quiet line under the answer; a click on it unfolds its table in place (public/brainchat.js
and brainchat.css fold the table that follows a link to `USAGE_ANCHOR`). Nothing opens by itself:
an element shown "side" makes Chainlit open its side panel on every answer, covering the chat.
"""

from __future__ import annotations

import re
import time
from typing import Any

import chainlit as cl

from brainchat import events as ev
from brainchat import i18n
from brainchat.tools.mcp_content import image_mime
from brainchat.ui import format as fmt
from brainchat.ui import step_text as st

# The functions take ui.render's RunRenderer, which imports this module: it is typed `Renderer`
# (Any) here, so the two modules do not reach each other.
Renderer = Any

AUTHOR = "brainchat"
EXPORT_ACTION = "export_analysis"  # the button under an answer that changed the study
USAGE_ANCHOR = "#brainchat-usage"  # the chat usage line's link: it folds the table after it


def export_button() -> cl.Action:
    return cl.Action(
        name=EXPORT_ACTION,
        payload={},
        label=i18n.t("page.export_label"),
        icon="download",
        tooltip=i18n.t("page.export_tip"),
    )


def figure_downloads(e: ev.ToolImage, name: str) -> list[cl.File]:
    """A figure to download as PNG (or the image type an MCP tool sent) and, when the tool drew
    one, as SVG."""
    stem = re.sub(r"[^\w.-]+", "_", name).strip("._")[:60] or "figure"
    mime = image_mime(e.png)
    suffix = {"image/jpeg": "jpg"}.get(mime, mime.removeprefix("image/"))
    files = [cl.File(name=f"{stem}.{suffix}", content=e.png, mime=mime, display="inline")]
    if e.svg:
        files.append(
            cl.File(name=f"{stem}.svg", content=e.svg, mime="image/svg+xml", display="inline")
        )
    return files


def stopped_text() -> str:
    return i18n.t("page.stopped")


def usage_footer(mode: str, stats: ev.Stats) -> str:
    """Under an answer: the agent's table, or in Chat one quiet line that unfolds its table."""
    if mode == "agent":
        return fmt.stats_footer(mode, stats)
    tip = i18n.t("page.usage_tip").replace('"', "'")
    line = f'[{fmt.usage_line(stats)}]({USAGE_ANCHOR} "{tip}")'
    return f"\n\n{line}\n\n{fmt.chat_stats_table(stats)}"


async def finish(r: Renderer) -> None:
    """Close every open step, then complete the answer with sources, figures and stats."""
    if r.finished:
        return
    r.finished = True
    await r._flush()
    if r.decision is not None:  # a verdict that never reached the answer model
        await r._note(st.evaluation_title(r.decision), r.decision.reason)
    await r._end_reasoning()
    for step in list(r.open.values()):
        if step is not r.run:
            await r._close(step)
    await r._close_run(r.stats.total_seconds if r.stats else None)
    extra = "".join(r.footer) + (usage_footer(r.mode, r.stats) if r.stats else "")
    elements: list[Any] = [*r.figures, *r.files]
    if r.answer is not None:
        r.answer.content = r.shown_answer() + ("\n" + extra if extra else "")
        r.answer.elements = elements
        if r.study_touched and r.mode == "agent":
            r.answer.actions = [export_button()]
        await r.answer.send()
    elif r.errors:  # the stats of a failed run belong under its error, not in a bubble
        last = r.errors[-1]
        last.content = f"{last.content}\n{extra}"
        last.elements = elements
        await last.update()
    elif extra.strip() or r.figures or r.files:
        await cl.Message(
            content=i18n.t("page.no_answer") + "\n" + extra, elements=elements, author=AUTHOR
        ).send()


async def stop(
    r: Renderer, rows: list[ev.RoleStats] | None = None, message: cl.Message | None = None
) -> None:
    """The user pressed stop: mark open steps stopped, keep partial output, show usage so far.

    `rows` is the core's usage so far (Session.usage_so_far); without it, output is estimated.
    `message` is Chainlit's own "Task manually stopped." message: it becomes the one notice.
    """
    if r.finished:
        return
    r.finished = True
    await r.plan.finish("cancelled")
    await r._flush()
    note, suffix = i18n.t("page.step_stopped"), i18n.t("page.title_stopped")
    for step in list(r.open.values()):
        if step is r.run:
            continue
        step.is_error = True
        body = f"{step.output}\n\n{note}" if step.output else note
        await r._close(step, body, f"{step.name}{suffix}")
    elapsed = time.perf_counter() - r.started
    await r._close_run(elapsed, suffix)
    if r.answer is not None:
        r.answer.content = r.answer_text + "\n\n" + i18n.t("page.partial")
        r.answer.elements = [*r.figures, *r.files]
        await r.answer.send()
    text = f"{stopped_text()}\n\n{fmt.usage_so_far(r.mode, rows, r.streamed, elapsed)}"
    if message is not None:
        message.content = text
        await message.update()
    else:
        await cl.Message(content=text, author=AUTHOR).send()
