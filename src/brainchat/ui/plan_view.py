"""Plan events -> Chainlit's task list beside the chat (ready -> running -> done / failed)."""

from __future__ import annotations

from typing import Any

import chainlit as cl

from brainchat import events as ev
from brainchat import i18n

STATUS = {
    "ready": cl.TaskStatus.READY,
    "running": cl.TaskStatus.RUNNING,
    "done": cl.TaskStatus.DONE,
    "failed": cl.TaskStatus.FAILED,
}


class PlanView:
    """One task list per run; its tasks follow the plan's steps by id."""

    def __init__(self) -> None:
        self.tasks: cl.TaskList | None = None
        self.by_id: dict[int, cl.Task] = {}

    async def show(self, steps: list[dict[str, Any]], status: str | None = None) -> None:
        """(Re)build the list from the whole plan (created or replanned)."""
        if self.tasks is None:
            self.tasks = cl.TaskList()
        old = self.by_id
        self.tasks.tasks = []
        self.by_id = {}
        for s in steps:
            task = cl.Task(title=s["title"], status=STATUS[s["status"]])
            if (kept := old.get(int(s["id"]))) is not None:
                task.forId = kept.forId  # a replan keeps the link to the step's evidence
            self.by_id[int(s["id"])] = task
            await self.tasks.add_task(task)
        self.tasks.status = status or i18n.t("steps.plan.running")
        await self.tasks.send()

    async def step(self, e: ev.PlanStepUpdated, evidence_id: str | None = None) -> None:
        """Move one task; `evidence_id` is the step-tree step a click on the task scrolls to."""
        task = self.by_id.get(e.step_id)
        if self.tasks is None or task is None:
            return
        task.status = STATUS[e.status]
        if evidence_id is not None:
            task.forId = evidence_id
        done = all(t.status == cl.TaskStatus.DONE for t in self.tasks.tasks)
        said = i18n.t(f"steps.plan.status.{e.status}") if e.status in STATUS else e.status
        self.tasks.status = (
            i18n.t("steps.plan.done")
            if done
            else i18n.t("steps.plan.step", n=e.step_id, status=said)
        )
        await self.tasks.send()

    async def finish(self, reason: str) -> None:
        """The run ended: a task still running goes back to ready (not done); the status says why."""
        if self.tasks is None:
            return
        if all(t.status == cl.TaskStatus.DONE for t in self.tasks.tasks):
            self.tasks.status = i18n.t("steps.plan.done")
        else:
            for task in self.tasks.tasks:
                if task.status == cl.TaskStatus.RUNNING:
                    task.status = cl.TaskStatus.READY
            self.tasks.status = (
                i18n.t(f"steps.plan.{reason}")
                if reason in ENDINGS
                else i18n.t("steps.plan.unfinished", reason=reason)
            )
        await self.tasks.send()


# the endings the status names (brainchat.i18n.steps); "answered": e.g. single-step mode
# waiting for the next confirmation
ENDINGS = ("plan_failed", "cancelled", "answered")


def steps_text(steps: list[dict[str, Any]]) -> str:
    """The plan as markdown lines for the step tree."""
    marks = {"ready": "○", "running": "◔", "done": "✓", "failed": "✗"}
    return "\n".join(
        f"{marks[s['status']]} {s['id']}. {s['title']}"
        + (f" (`{s['tool']}`)" if s.get("tool") else "")
        for s in steps
    )
