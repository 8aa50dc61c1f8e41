"""EEG knowledge the agent is guided by, behind the domain interface (brainchat.domain.Domain).

steps.py is the workflow (order, preconditions, the tools of each step); vocabulary.py the words
the answer check reads; answers.py what to state from a result; checks.py arguments worth a
second look and files picked by position; examples.py worked examples of requests and calls;
terms.py the words requests name steps and choices with, in English and Chinese.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from brainchat.domain import DomainStep, Example, Suggestion
from brainchat.eeg.guidance import answers, checks, steps, terms
from brainchat.eeg.guidance.vocabulary import VOCABULARY
from brainchat.grounding import Vocabulary


def _domain_step(step: steps.Step) -> DomainStep:
    cjk = terms.cjk_terms(step.id)
    return DomainStep(step.id, step.about, step.tools, step.report, step.replaces, tuple(cjk[:4]))


class EegDomain:
    """The EEG workflow as the agent reads it."""

    vocabulary: Vocabulary = VOCABULARY

    def steps(self) -> Sequence[DomainStep]:
        return tuple(_domain_step(s) for s in steps.STEPS)

    def step_of(self, tool: str) -> DomainStep | None:
        step = steps.STEP_OF.get(tool)
        return None if step is None else _domain_step(step)

    def offer(self, tools: list[str], facts: dict[str, Any]) -> list[str]:
        return steps.allowed(tools, facts)

    def focus(self, asked: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
        return steps.focus(asked, facts, fixed)

    def listing(self) -> str | None:
        return steps.LISTING

    def next_call(
        self, asked: list[str], facts: dict[str, Any], done: set[str], fixed: dict[str, Any]
    ) -> str | None:
        """The call that comes next for the asked steps: the first one not done this run, or
        the step the study needs before it; with the values the user fixed for it."""
        for step in steps.first_that_replace(steps.steps_of(asked)):
            if step.report and step.id not in steps.PIPELINE and step.id not in steps.ANALYSES:
                continue  # a listing, a plot: not a pipeline step to push towards
            if set(step.tools) & done:
                continue
            before = steps.prerequisite(step, facts)
            target = before if before is not None and before.id not in asked else step
            if before is not None and set(before.tools) & done:
                target = step  # the prerequisite ran: the study's stage lags (a filter)
            tool = next((t for t in target.tools if t in fixed), target.tools[0])
            values = fixed.get(tool) or {}
            shown = f" with {json.dumps(values)}" if values else ""
            return f"{tool}{shown}"
        return None

    def rounds(self, asked: list[str], facts: dict[str, Any]) -> int:
        return steps.rounds_needed(asked, facts)

    def held(self, asked: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
        return steps.held(asked, facts, fixed)

    def opening(self, asked: list[str], listing: bool, facts: dict[str, Any]) -> list[str]:
        return steps.opening(asked, listing, facts)

    def closing(self, asked: list[str], facts: dict[str, Any], done: set[str]) -> list[str]:
        return steps.closing(asked, facts, done)

    def state_line(self, tool: str, result: str) -> str | None:
        return answers.state_line(tool, result)

    def shows(self, tool: str, args: dict[str, Any], facts: dict[str, Any]) -> bool | None:
        return checks.shows(tool, args, facts)

    def worked_call(self) -> dict[str, Any] | None:
        """A safe first call whose arguments send no one guessing: listing the data folder."""
        return {"name": steps.LISTING, "arguments": {"pattern": "*.edf"}}

    def second_look(
        self,
        tool: str,
        args: dict[str, Any],
        fixed: dict[str, Any],
        positions: list[int],
        results: list[tuple[str, str]],
    ) -> Suggestion | None:
        return checks.second_look(tool, args, fixed) or checks.picked(tool, args, positions, results)  # fmt: skip

    def placed(
        self, positions: list[int], results: list[tuple[str, str]], fixed: dict[str, Any]
    ) -> dict[str, dict[str, Any]]:
        """The files the request gives, as the run's latest listing names them, for the
        next-step note: those at the record's positions ("the first two files"), or the listed
        files the user's own file words name ("sub-01 ses-01")."""
        files = checks.pick(positions, results)
        words = (fixed.get("load_data") or {}).get("files")
        if not files and isinstance(words, list) and all(isinstance(w, str) for w in words):
            files = checks.named(words, results)
        return {"load_data": {"files": files}} if files else {}

    def examples(self, request: str, k: int) -> list[Example]:
        from brainchat.eeg.guidance.examples import nearest

        return nearest(request, k)


EEG = EegDomain()
