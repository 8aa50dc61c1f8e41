"""The Chainlit steps of one run: what is open, under which parent, and the token streams.

An agent run's steps hang under one "Agent run" step (opened with the first of them); a chat
run's under the user's message. `RunRenderer` (ui/render.py) decides what each event shows; this
keeps every step it opened until it is closed, so the end of a run or a stop can close the rest.
"""

from __future__ import annotations

from typing import Any

import chainlit as cl
from chainlit.utils import utc_now

from brainchat.ui import step_text as st
from brainchat.ui.batching import TokenBatcher
from brainchat.ui.plan_view import steps_text


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
        return self.run.id

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
        if self.run is None:
            return
        name = st.run_title(self.rounds, self.tool_calls, total, suffix)
        if self.run.id in self.open:
            await self._close(self.run, None, name)
        elif name != self.run.name:
            self.run.name = name
            await self.run.update()
