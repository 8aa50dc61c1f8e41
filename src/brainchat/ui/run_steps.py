"""The Chainlit steps of one run: what is open, under which parent, and the token streams.

An agent run's steps hang under one "Agent run" step (opened with the first of them); a chat
run's under the user's message. `RunRenderer` (ui/render.py) decides what each event shows; this
keeps every step it opened until it is closed, so the end of a run or a stop can close the rest.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import chainlit as cl
from chainlit.context import context as chainlit_context
from chainlit.utils import utc_now

from brainchat import i18n
from brainchat.events import ToolProgress
from brainchat.ui import step_text as st
from brainchat.ui.batching import TokenBatcher
from brainchat.ui.plan_view import steps_text

TICK = 1.0  # seconds between two updates of the running agent run's elapsed time


def phase_text(e: ToolProgress) -> str:
    """What a long step is doing, in the user's language (the event carries the phase, typed)."""
    d = e.data
    if e.phase == "training" and d.get("epoch"):
        parts = [i18n.t("progress.epoch", epoch=d["epoch"], epochs=d["epochs"])]
        if "loss" in d:
            parts.append(f"loss {d['loss']:.3f}")
        if "val_acc" in d:
            parts.append(f"val acc {d['val_acc']:.2f}")
        elif "acc" in d:
            parts.append(f"acc {d['acc']:.2f}")
        if d.get("eta") is not None:
            parts.append(i18n.t("progress.eta", seconds=f"{d['eta']:.0f}"))
        return " · ".join(parts)
    if e.phase == "training":
        return i18n.t("progress.training", epochs=d.get("epochs", "?"))
    if e.phase == "restoring":
        return i18n.t("progress.restoring", steps=d.get("steps", "?"))
    if e.phase == "fitting":
        return i18n.t("progress.fitting", what=d.get("what", "?"))
    return i18n.t(f"progress.{e.phase}")


def progress_view(e: ToolProgress) -> tuple[str, str]:
    """A tool step's title and body while it runs: its phase, or the tool's own message."""
    bar = st.progress_bar(e.fraction)
    if e.phase is None:  # an MCP server's or a tool's own words, as they came
        return st.progress_title(e.name, e.message, e.data), f"{e.message}\n\n{bar}".strip()
    text = phase_text(e)
    return st.tool_title(e.name, text), f"{text}\n\n{bar}".strip()


def elapsed_text(seconds: float) -> str:
    """A live counter: whole seconds, then minutes and seconds."""
    whole = int(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


def new_step(name: str, type_: str, parent_id: str | None, **kw: Any) -> cl.Step:
    step = cl.Step(name=name, type=type_, parent_id=parent_id, **kw)  # type: ignore[arg-type]
    step.start = utc_now()
    return step


class RunSteps:
    """The open steps of one run, by id, and the streams that still hold tokens."""

    def __init__(self, mode: str, parent_id: str | None = None) -> None:
        self.mode, self.parent_id = mode, parent_id
        self.run: cl.Step | None = None  # the "Agent run" step (agent mode)
        self.open: dict[str, cl.Step] = {}  # every step not yet closed, by id
        self.batches: dict[str, TokenBatcher] = {}  # "thinking" / "answer" -> its open stream
        self.rounds = self.tool_calls = 0  # for the run step's title
        self.began = time.perf_counter()
        self._ticker: asyncio.Task[None] | None = None  # the run step's elapsed time, live

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

    async def _note(self, name: str, output: str) -> None:
        """A step that is over as soon as it is shown (an evaluation, a decision)."""
        step = await self._open(new_step(name, "undefined", await self._parent(), show_input=False))
        await self._close(step, output)

    async def _streaming(self, title: str) -> cl.Step:
        """A step that fills as tokens arrive: open while streaming, collapsed once done."""
        step = new_step(
            title,
            "llm",
            await self._parent(),
            default_open=True,
            auto_collapse=True,
            show_input=False,
        )
        return await self._open(step)

    async def _parent(self) -> str | None:
        if self.mode != "agent":
            return self.parent_id
        if self.run is None:
            self.run = await self._open(
                new_step("Agent run", "run", self.parent_id, default_open=True, show_input=False)
            )
            self._ticker = asyncio.ensure_future(self._tick(self.run, asyncio.current_task()))
        return self.run.id

    async def _tick(self, run: cl.Step, turn: asyncio.Task[Any] | None) -> None:
        """While the run step is open, its title counts the time (sent to the page only: the
        stored title is the final one, with the total)."""
        while True:
            await asyncio.sleep(TICK)
            if run.id not in self.open or turn is None or turn.done():
                return
            running = i18n.t("progress.running_for", elapsed=elapsed_text(self.since()))
            run.name = f"{st.run_title(self.rounds, self.tool_calls)} · {running}"
            try:
                await chainlit_context.emitter.update_step(run.to_dict())
            except Exception:  # noqa: BLE001 - a page gone: the run goes on, so does its time
                pass

    def since(self) -> float:
        return time.perf_counter() - self.began

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    async def _plan_step(self, name: str, steps: list[dict[str, Any]], text: str) -> str:
        step = new_step(name, "undefined", await self._parent(), show_input=False)
        await self._open(step)
        await self._close(step, text + steps_text(steps))
        return step.id

    async def _flush(self, *streams: str) -> None:
        """Send what the named streams (default: all) still hold, then forget them."""
        for name in streams or list(self.batches):
            if (batch := self.batches.pop(name, None)) is not None:
                await batch.close()

    async def _close_run(self, total: float | None = None, suffix: str = "") -> None:
        self._stop_ticker()
        if self.run is None:
            return
        name = st.run_title(self.rounds, self.tool_calls, total, suffix)
        if self.run.id in self.open:
            await self._close(self.run, None, name)
        elif name != self.run.name:
            self.run.name = name
            await self.run.update()
