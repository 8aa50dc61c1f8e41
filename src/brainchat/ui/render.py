"""Run events -> Chainlit steps and messages: one renderer per user message.

Agent runs get one run step with nested, collapsible steps (thinking, tool call, tool result,
evaluation, model switch); the answer is its own streamed message with sources and a stats table.
Chat runs stream the answer with a one-line stats footer. `stop()` closes whatever is open.
"""

from __future__ import annotations

import time
from typing import Any

import chainlit as cl
from chainlit.utils import utc_now

from brainchat import events as ev
from brainchat.ui import format as fmt
from brainchat.ui.batching import TokenBatcher

AUTHOR = "brainchat"


def _step(name: str, type_: str, parent_id: str | None, **kw: Any) -> cl.Step:
    step = cl.Step(name=name, type=type_, parent_id=parent_id, **kw)  # type: ignore[arg-type]
    step.start = utc_now()
    return step


class RunRenderer:
    """Renders one run's events; keeps the open steps so a stop can close them."""

    def __init__(self, mode: str, parent_id: str | None = None) -> None:
        self.mode = mode
        self.parent_id = parent_id
        self.started = time.perf_counter()
        self.run: cl.Step | None = None
        self.thinking: cl.Step | None = None
        self.tools: dict[str, cl.Step] = {}
        self.images: dict[str, list[cl.Image]] = {}  # call_id -> plots for its result step
        self.open: dict[str, cl.Step] = {}  # every step not yet closed, by id
        self.answer: cl.Message | None = None
        self.answer_text = ""
        self.footer: list[str] = []
        self.stats: ev.Stats | None = None
        self.models: dict[str, str] = {}
        self.streamed: dict[tuple[str, str], list[str]] = {}  # (role, model) -> text, for a stop
        self.rounds = 0
        self.tool_calls = 0
        self.finished = False
        self.batches: dict[str, TokenBatcher] = {}  # "thinking" / "answer" -> its open stream

    # -- steps -------------------------------------------------------------------------
    async def _open(self, step: cl.Step) -> cl.Step:
        await step.send()
        self.open[step.id] = step
        return step

    async def _close(
        self, step: cl.Step | None, output: str | None = None, name: str | None = None
    ) -> None:
        if step is None:
            return
        if output is not None:
            step.output = output
        if name is not None:
            step.name = name
        step.end = utc_now()
        self.open.pop(step.id, None)
        await step.update()

    async def _run_step(self) -> str | None:
        if self.mode != "agent":
            return self.parent_id
        if self.run is None:
            self.run = await self._open(
                _step("Agent run", "run", self.parent_id, default_open=True, show_input=False)
            )
        return self.run.id

    # -- dispatch ------------------------------------------------------------------------
    async def handle(self, event: ev.Event) -> None:
        if self.finished:
            return
        handler = getattr(self, f"on_{event.type}", None)
        if handler is not None:
            await handler(event)

    async def on_run_started(self, e: ev.RunStarted) -> None:
        self.models = dict(e.models)
        await self._run_step()

    async def on_thinking_token(self, e: ev.ThinkingToken) -> None:
        self.streamed.setdefault((e.role, e.model), []).append(e.text)
        if self.thinking is None:
            parent = await self._run_step()
            self.rounds += 1
            self.thinking = await self._open(
                _step(
                    f"Thinking · {e.model}",
                    "llm",
                    parent,
                    default_open=True,
                    auto_collapse=True,
                    show_input=False,
                )
            )
            self.batches["thinking"] = TokenBatcher(self.thinking.stream_token)
        await self.batches["thinking"].add(e.text)

    async def on_thinking_done(self, e: ev.ThinkingDone) -> None:
        await self._flush("thinking")
        step = self.thinking
        self.thinking = None
        plan = f"\n\n→ calls {', '.join(e.tool_calls)}" if e.tool_calls else ""
        streamed = step.output.strip() if step is not None else ""
        text = (e.text.strip() or streamed or "(no visible reasoning)") + plan
        if step is None:
            if not e.text.strip() and not e.tool_calls:
                return
            self.rounds += 1
            step = await self._open(
                _step(
                    f"Thinking · {e.model}",
                    "llm",
                    await self._run_step(),
                    auto_collapse=True,
                    show_input=False,
                )
            )
        await self._close(step, text, f"Thinking · {e.model} · {fmt.seconds(e.duration)}")

    async def on_tool_call_started(self, e: ev.ToolCallStarted) -> None:
        self.tool_calls += 1
        step = _step(
            fmt.tool_call_name(e.name, "running"),
            "tool",
            await self._run_step(),
            default_open=False,
            show_input="json",
        )
        step.input = fmt.args_text(e.args)
        step.output = "running…"
        step.metadata = {"call_id": e.call_id, "source": e.source, "status": "running"}
        self.tools[e.call_id] = await self._open(step)

    async def on_tool_progress(self, e: ev.ToolProgress) -> None:
        step = self.tools.get(e.call_id)
        if step is None:
            return
        pct = f" ({e.fraction:.0%})" if e.fraction is not None else ""
        step.output = f"running… {e.message}{pct}"
        await step.update()

    async def on_tool_image(self, e: ev.ToolImage) -> None:
        step = self.tools.get(e.call_id)
        image = cl.Image(content=e.png, name=e.title or e.name, display="inline", mime="image/png")
        if step is not None:  # shown in the tool's result step, which opens when the tool ends
            self.images.setdefault(e.call_id, []).append(image)
        else:
            await cl.Message(
                content=f"**{e.title or e.name}**", elements=[image], author=AUTHOR
            ).send()

    async def on_tool_finished(self, e: ev.ToolFinished) -> None:
        step = self.tools.get(e.call_id)
        if step is None:  # a call we never saw start (defensive)
            await self.on_tool_call_started(
                ev.ToolCallStarted(call_id=e.call_id, name=e.name, args={})
            )
            step = self.tools[e.call_id]
        failed = e.status in ("error", "refused")
        step.is_error = failed
        step.metadata = {**step.metadata, "status": e.status, "cache_hit": e.cache_hit}
        took = fmt.seconds(e.duration)
        status = {"success": f"✓ done in {took}", "cached": f"✓ cache hit ({took})"}.get(
            e.status, f"✗ {e.status}" + (f": {e.error}" if e.error else "")
        )
        await self._close(
            step, status, fmt.tool_call_name(e.name, e.status, e.duration, e.cache_hit)
        )
        result = _step(fmt.result_step_name(e), "tool", await self._run_step(), show_input=False)
        result.output = fmt.tool_result_text(e)
        result.is_error = failed
        result.elements = list(self.images.pop(e.call_id, []))
        await self._open(result)
        await self._close(result)

    async def on_evaluation(self, e: ev.Evaluation) -> None:
        label = {
            "continue": "another round",
            "answer": "ready to answer",
            "stop": "stop",
            "enough": "enough to answer",
            "not_enough": "not enough, trying another way",
        }
        step = _step(
            f"Evaluation · {label.get(e.verdict, e.verdict)}",
            "undefined",
            await self._run_step(),
            show_input=False,
        )
        await self._open(step)
        await self._close(step, e.reason)

    async def on_model_switch(self, e: ev.ModelSwitch) -> None:
        step = _step(
            f"Model switch · answering with {e.model}",
            "undefined",
            await self._run_step(),
            show_input=False,
        )
        await self._open(step)
        await self._close(step, e.reason)

    async def on_study_changed(self, e: ev.StudyChanged) -> None:
        step = _step(f"Study · {e.stage}", "undefined", await self._run_step(), show_input=False)
        await self._open(step)
        await self._close(step, e.summary)

    async def _answer_message(self) -> cl.Message:
        if self.answer is None:
            if self.run is not None and self.thinking is None:
                await self._close_run()
            self.answer = cl.Message(content="", author=AUTHOR)
        return self.answer

    async def on_answer_token(self, e: ev.AnswerToken) -> None:
        self.streamed.setdefault((e.role, e.model), []).append(e.text)
        msg = await self._answer_message()
        self.answer_text += e.text
        if "answer" not in self.batches:
            self.batches["answer"] = TokenBatcher(msg.stream_token)
        await self.batches["answer"].add(e.text)

    async def on_citations(self, e: ev.Citations) -> None:
        if e.sources:
            self.footer.append(fmt.citations_text(e.sources))

    async def on_notice(self, e: ev.Notice) -> None:
        await cl.Message(content=fmt.notice_text(e), author=AUTHOR).send()

    async def on_stats(self, e: ev.Stats) -> None:
        self.stats = e

    async def on_run_finished(self, e: ev.RunFinished) -> None:
        await self.finish()

    # -- end of a run ----------------------------------------------------------------------
    async def _flush(self, *streams: str) -> None:
        """Send what the named streams (default: all) still hold, then forget them."""
        for name in streams or list(self.batches):
            if (batch := self.batches.pop(name, None)) is not None:
                await batch.close()

    async def _close_run(self, suffix: str = "") -> None:
        if self.run is None or self.run.id not in self.open:
            return
        elapsed = fmt.seconds(time.perf_counter() - self.started)
        name = f"Agent run · {self.rounds} round(s) · {self.tool_calls} tool call(s) · {elapsed}{suffix}"
        await self._close(self.run, None, name)

    def _stats_text(self) -> str:
        if self.stats is None:
            return ""
        if self.mode == "agent":
            return "\n\n---\n" + fmt.agent_stats_table(self.stats)
        return "\n\n" + fmt.chat_stats_line(self.stats)

    async def finish(self) -> None:
        """Close every open step, then complete the answer with sources and stats."""
        if self.finished:
            return
        self.finished = True
        await self._flush()
        for step in list(self.open.values()):
            if step is not self.run:
                await self._close(step)
        await self._close_run()
        extra = "".join(self.footer) + self._stats_text()
        if self.answer is not None:
            self.answer.content = self.answer_text + ("\n" + extra if extra else "")
            await self.answer.send()
        elif extra.strip():
            await cl.Message(
                content=extra.strip().removeprefix("---").strip(), author=AUTHOR
            ).send()

    async def stop(self, rows: list[ev.RoleStats] | None = None) -> None:
        """The user pressed stop: mark open steps stopped, keep partial output, show usage so far.

        `rows` is the core's usage so far (Session.usage_so_far); without it, output is estimated.
        """
        if self.finished:
            return
        self.finished = True
        await self._flush()
        for step in list(self.open.values()):
            if step is self.run:
                continue
            step.is_error = True
            note = "⏹️ stopped by you"
            await self._close(
                step, f"{step.output}\n\n{note}" if step.output else note, f"{step.name} · stopped"
            )
        await self._close_run(" · stopped")
        usage = self._usage_so_far(rows)
        if self.answer is not None:
            self.answer.content = self.answer_text + "\n\n*(stopped — partial answer)*"
            await self.answer.send()
        await cl.Message(
            content=(
                "⏹️ **Stopped.** What was done so far stays above; send a new message to go on.\n\n"
                + usage
            ),
            author=AUTHOR,
        ).send()

    def _usage_so_far(self, rows: list[ev.RoleStats] | None = None) -> str:
        """Usage so far per role (from the core's ledger when given) and the elapsed time."""
        from brainchat.usage import count_tokens

        if rows:
            stats = ev.Stats(rows=rows, total_seconds=time.perf_counter() - self.started)
            stats.total_cost = sum(r.cost for r in rows if r.cost is not None) or None
            if self.mode == "agent":
                return "Usage so far:\n\n" + fmt.agent_stats_table(stats)
            return "Usage so far: " + fmt.chat_stats_line(stats)

        parts = []
        for (role, model), chunks in self.streamed.items():
            out = count_tokens("".join(chunks))
            parts.append(f"{fmt.ROLE_LABELS.get(role, role)} {model}: {out} output tokens est.")
        elapsed = fmt.seconds(time.perf_counter() - self.started)
        return "`Usage so far: " + ("; ".join(parts) or "no tokens yet") + f" · {elapsed}`"
