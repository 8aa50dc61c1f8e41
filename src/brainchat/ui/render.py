"""Run events -> Chainlit steps and messages: one renderer per user message.

An agent run is one open "Agent run" step holding collapsed steps: the record of the request (a
guided model's), each round's thinking, one step per tool call (arguments, result, what it
changed in the study, live progress in its title), a step when an evaluation changes course, and
the hand-over to the answer model. The answer is its own streamed message with sources, figures
and a stats table. `stop()` closes whatever is open and leaves the usage so far.
"""

from __future__ import annotations

import re
import time
from typing import Any, assert_never

import chainlit as cl

from brainchat import events as ev
from brainchat import i18n
from brainchat.tools.mcp_content import image_mime
from brainchat.ui import format as fmt
from brainchat.ui import run_end
from brainchat.ui import step_text as st
from brainchat.ui.batching import TokenBatcher
from brainchat.ui.plan_view import PlanView
from brainchat.ui.run_steps import RunSteps, new_step, progress_view

AUTHOR = run_end.AUTHOR
_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")  # a server's words shown as text
EXPORT_ACTION = run_end.EXPORT_ACTION
export_button = run_end.export_button


class RunRenderer(RunSteps):
    """Renders one run's events; keeps the open steps so a stop can close them."""

    def __init__(self, mode: str, parent_id: str | None = None) -> None:
        super().__init__(mode, parent_id)
        self.started = time.perf_counter()
        self.thinking: cl.Step | None = None  # the function-call model's current round
        self.reasoning: tuple[cl.Step, float] | None = None  # the answer model's own reasoning
        self.tools: dict[str, cl.Step] = {}
        self.waiting: set[str] = set()  # call_ids waiting for approval
        self.changes: dict[str, str] = {}  # call_id -> what it changed in the study
        self.asked: dict[str, str] = {}  # call_id -> what its server asked the user
        self.server_log: dict[str, list[str]] = {}  # call_id -> its server's log lines
        self.figure_names: dict[str, list[str]] = {}
        self.figures: list[Any] = []  # cl.Image  # shown under the answer
        self.files: list[Any] = []  # cl.File  # written by a tool, offered under the answer
        self.study_touched = False  # a tool changed the study: the answer gets the export button
        self.decision: ev.Evaluation | None = None  # the verdict that routes to the answer
        self.answer: cl.Message | None = None
        self.answer_text = ""
        self.footer: list[str] = []
        self.sources: list[dict[str, Any]] = []  # the answer's cited sources: its [n] link to them
        self.stats: ev.Stats | None = None
        self.errors: list[cl.Message] = []  # error notices: the stats go under the last one
        self.streamed: dict[tuple[str, str], list[str]] = {}  # (role, model) -> text, for a stop
        self.finished = False
        self.plan = PlanView()  # the task list, when the run makes a plan

    # -- dispatch ------------------------------------------------------------------------
    async def handle(self, event: ev.Event) -> None:
        """Render one event. The match is exhaustive over ev.AnyEvent: mypy (`assert_never`) and
        tests/test_events_dispatch.py fail for an event kind without a case here."""
        if self.finished:
            return
        e = ev.as_any(event)
        match e:
            case ev.RunStarted():
                await self.on_run_started(e)
            case ev.ThinkingToken():
                await self.on_thinking_token(e)
            case ev.ThinkingDone():
                await self.on_thinking_done(e)
            case ev.ToolCallStarted():
                await self.on_tool_call_started(e)
            case ev.ToolProgress():
                await self.on_tool_progress(e)
            case ev.ToolImage():
                await self.on_tool_image(e)
            case ev.ToolFile():
                await self.on_tool_file(e)
            case ev.ToolFinished():
                await self.on_tool_finished(e)
            case ev.Evaluation():
                await self.on_evaluation(e)
            case ev.ModelSwitch():
                await self.on_model_switch(e)
            case ev.AnswerToken():
                await self.on_answer_token(e)
            case ev.AnswerChecked():
                await self.on_answer_checked(e)
            case ev.Citations():
                await self.on_citations(e)
            case ev.Notice():
                await self.on_notice(e)
            case ev.Stats():
                await self.on_stats(e)
            case ev.StudyChanged():
                await self.on_study_changed(e)
            case ev.StudyRestored():
                await self.on_study_restored(e)
            case ev.PlanCreated():
                await self.on_plan_created(e)
            case ev.PlanStepUpdated():
                await self.on_plan_step_updated(e)
            case ev.Replanned():
                await self.on_replanned(e)
            case ev.RequestUnderstood():
                await self.on_request_understood(e)
            case ev.RunFinished():
                await self.on_run_finished(e)
            case _:
                assert_never(e)

    async def on_run_started(self, e: ev.RunStarted) -> None:
        await self._parent()

    async def on_thinking_token(self, e: ev.ThinkingToken) -> None:
        self.streamed.setdefault((e.role, e.model), []).append(e.text)
        if e.role in ("answer", "chat"):  # reasoning before the answer: not an agent round
            if self.reasoning is None:
                label = i18n.t("page.reasoning" if e.role == "answer" else "page.thinking")
                self.reasoning = (
                    await self._streaming(f"{label} · {e.model}"),
                    time.perf_counter(),
                )  # closed with its duration at the first answer token
            if "reasoning" not in self.batches:
                self.batches["reasoning"] = TokenBatcher(self.reasoning[0].stream_token)
            await self.batches["reasoning"].add(e.text)
            return
        if self.thinking is None:
            self.thinking = await self._streaming(f"{i18n.t('page.thinking')} · {e.model}")
        if "thinking" not in self.batches:
            self.batches["thinking"] = TokenBatcher(self.thinking.stream_token)
        await self.batches["thinking"].add(e.text)

    async def on_thinking_done(self, e: ev.ThinkingDone) -> None:
        await self._flush("thinking")
        self.rounds = max(self.rounds + (0 if e.round else 1), e.round)
        step, self.thinking = self.thinking, None
        plan = "\n\n" + i18n.t("page.calls", tools=", ".join(e.tool_calls)) if e.tool_calls else ""
        streamed = step.output.strip() if step is not None else ""
        if step is None:
            if not e.text.strip() and not e.tool_calls:
                return
            step = await self._open(
                new_step(
                    f"{i18n.t('page.thinking')} · {e.model}",
                    "llm",
                    await self._parent(),
                    auto_collapse=True,
                    show_input=False,
                )
            )
        text = (e.text.strip() or streamed or i18n.t("page.no_reasoning")) + plan
        title = f"{i18n.t('page.thinking')} · {e.model} · {fmt.seconds(e.duration)}"
        await self._close(step, text, title)

    async def on_tool_call_started(self, e: ev.ToolCallStarted) -> None:
        self.tool_calls += 1
        step = new_step(
            st.tool_title(e.name),
            "tool",
            await self._parent(),
            default_open=False,
            show_input="json" if e.args else False,
        )
        step.input = fmt.args_text(e.args)
        step.metadata = {
            "call_id": e.call_id,
            "name": e.name,
            "source": e.source,
            "status": "running",
        }
        self.tools[e.call_id] = await self._open(step)
        if e.call_id in self.waiting:  # the question came before this event was rendered
            await self.awaiting(e.call_id, True)

    async def on_tool_progress(self, e: ev.ToolProgress) -> None:
        step = self.tools.get(e.call_id)
        if step is None or step.id not in self.open:
            return
        if e.data.get("elicitation"):  # kept for the step's body when it ends
            self.asked[e.call_id] = e.message
        if e.data.get("mcp_log") or e.data.get("sampling"):  # a server's log line (#43): kept
            self.server_log.setdefault(e.call_id, []).append(e.message)
        step.name, step.output = progress_view(e)  # the title: visible without opening
        await step.update()

    async def awaiting(self, call_id: str, waiting: bool) -> None:
        """A tool call waits for the user's approval (or no longer does)."""
        (self.waiting.add if waiting else self.waiting.discard)(call_id)
        step = self.tools.get(call_id)
        if step is None or step.id not in self.open or self.finished:
            return
        name = str((step.metadata or {}).get("name") or "tool")
        step.name = st.tool_title(
            name, i18n.t("page.tool_waiting" if waiting else "page.tool_running")
        )
        step.output = i18n.t("page.approve_below") if waiting else ""
        await step.update()

    async def on_tool_image(self, e: ev.ToolImage) -> None:
        name = e.title or e.name
        mime = image_mime(e.png)  # PNG, or the JPEG, GIF or WebP an MCP tool sent
        self.figures.append(cl.Image(content=e.png, name=name, display="inline", mime=mime))
        self.files.extend(run_end.figure_downloads(e, name))
        self.figure_names.setdefault(e.call_id, []).append(name)

    async def on_tool_file(self, e: ev.ToolFile) -> None:
        self.files.append(cl.File(path=e.path, name=e.title, display="inline", mime=e.mime))

    async def on_study_changed(self, e: ev.StudyChanged) -> None:
        self.study_touched = True
        change = e.change or e.summary
        if e.call_id in self.tools and self.tools[e.call_id].id in self.open:
            self.changes[e.call_id] = change  # shown in that tool's step when it ends
        else:
            await self._note(i18n.t("page.study_step", stage=e.stage), change)

    async def on_tool_finished(self, e: ev.ToolFinished) -> None:
        step = self.tools.get(e.call_id)
        if step is None:  # a call we never saw start (defensive)
            await self.on_tool_call_started(
                ev.ToolCallStarted(call_id=e.call_id, name=e.name, args={})
            )
            step = self.tools[e.call_id]
        step.is_error = e.status in ("error", "refused")
        step.metadata = {**(step.metadata or {}), "status": e.status, "cache_hit": e.cache_hit}
        body = st.result_text(e, self.changes.pop(e.call_id, ""), self.figure_names.get(e.call_id))
        if e.call_id in self.asked:  # the server asked the user mid-call
            body += "\n\n" + i18n.t("page.asked", question=self.asked.pop(e.call_id))
        if lines := self.server_log.pop(e.call_id, []):
            body += (
                "\n\n"
                + i18n.t("mcp_client.server_log")
                + "\n"
                + "\n".join("- " + _MARKUP.sub(r"\\\1", line) for line in lines)
            )
        await self._close(step, body, st.finished_title(e))

    async def on_evaluation(self, e: ev.Evaluation) -> None:
        if e.verdict == "continue":  # the default flow: the model decides; nothing to open
            return
        if e.verdict == "not_enough":
            await self._note(st.evaluation_title(e), e.reason)
        else:
            self.decision = e  # shown with the hand-over to the answer model

    async def on_request_understood(self, e: ev.RequestUnderstood) -> None:
        await self._note(st.record_title(e), st.record_text(e))

    async def on_plan_created(self, e: ev.PlanCreated) -> None:
        await self._plan_step(i18n.t("page.plan", n=len(e.steps)), e.steps, "")
        await self.plan.show(e.steps)

    async def on_replanned(self, e: ev.Replanned) -> None:
        title = i18n.t("page.replan", attempt=e.attempt, most=e.max_attempts)
        await self._plan_step(title, e.steps, e.reason + "\n\n")
        await self.plan.show(
            e.steps, i18n.t("page.replanned", attempt=e.attempt, most=e.max_attempts)
        )

    async def on_plan_step_updated(self, e: ev.PlanStepUpdated) -> None:
        evidence = None
        if e.status in ("done", "failed"):
            key = "page.step_verified" if e.status == "done" else "page.step_failed"
            name = i18n.t(key, id=e.step_id, title=e.title)
            evidence = await self._plan_step(name, [], e.detail)
        await self.plan.step(e, evidence)

    async def on_study_restored(self, e: ev.StudyRestored) -> None:
        name = i18n.t("page.study_restored", stage=e.stage)
        name += i18n.t("page.incomplete") if e.problem else ""
        step = new_step(name, "undefined", await self._parent(), show_input=False)
        step.is_error = bool(e.problem)
        await self._open(step)
        await self._close(step, fmt.study_restored_text(e))

    async def on_model_switch(self, e: ev.ModelSwitch) -> None:
        await self._note(
            st.decision_title(self.decision, e.model), st.decision_text(self.decision, e)
        )
        self.decision = None

    async def on_answer_token(self, e: ev.AnswerToken) -> None:
        self.streamed.setdefault((e.role, e.model), []).append(e.text)
        if self.answer is None:
            await self._end_reasoning()
            if self.run is not None and self.thinking is None:
                await self._close_run()
            self.answer = cl.Message(content="", author=AUTHOR)
        self.answer_text += e.text
        if "answer" not in self.batches:
            self.batches["answer"] = TokenBatcher(self.answer.stream_token)
        await self.batches["answer"].add(e.text)

    async def on_answer_checked(self, e: ev.AnswerChecked) -> None:
        """The checked answer replaces the streamed one (its unverifiable sentences marked)."""
        self.answer_text = e.text

    async def _end_reasoning(self) -> None:
        if self.reasoning is not None:
            await self._flush("reasoning")
            step, began = self.reasoning
            took = fmt.seconds(time.perf_counter() - began)
            await self._close(step, None, f"{step.name} · {took}")
            self.reasoning = None

    async def on_citations(self, e: ev.Citations) -> None:
        if e.sources:
            self.sources = e.sources
            self.footer.append(fmt.citations_text(e.sources))

    async def on_notice(self, e: ev.Notice) -> None:
        msg = await cl.Message(content=fmt.notice_text(e), author=AUTHOR).send()
        if e.kind == "error":
            self.errors.append(msg)

    async def on_stats(self, e: ev.Stats) -> None:
        self.stats = e

    async def on_run_finished(self, e: ev.RunFinished) -> None:
        await self.plan.finish(e.reason)
        await self.finish()

    # -- end of a run ----------------------------------------------------------------------
    def shown_answer(self) -> str:
        """The answer as its message shows it (and the store keeps it): citations linked."""
        return fmt.link_citations(self.answer_text, self.sources)

    async def finish(self) -> None:
        """Close every open step, then complete the answer with sources, figures and stats."""
        await run_end.finish(self)

    async def stop(
        self, rows: list[ev.RoleStats] | None = None, message: cl.Message | None = None
    ) -> None:
        """The user pressed stop: open steps marked stopped, partial output and usage kept."""
        await run_end.stop(self, rows, message)
