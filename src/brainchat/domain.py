"""What the agent knows of the field it works in: nothing, unless a domain is given.

The agent core names no tool of any field. A domain (EEG's is eeg/guidance/) tells it the steps
a request can ask for and the tools that do them, which tools the study's state allows, what
comes next, which asked steps the study already holds, which reports brainchat runs before a
small model's first round or after its last, what to state from a result, whether the study shows a call's effect (a plan's
verification), which arguments deserve a second look (files picked by their place in a listing
among them), the call a prompt's worked example shows, worked examples
of requests and their calls, and the words the answer check reads. `NoDomain` knows none of it:
the agent then offers every tool and guides by nothing but the run's own results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from brainchat.grounding import EMPTY, Vocabulary


@dataclass(frozen=True)
class DomainStep:
    """A step a request can ask for (its id goes in the request record), and its tools."""

    id: str
    about: str  # one line for the model that writes the record
    tools: tuple[str, ...]
    report: bool = False  # it changes nothing (it lists, reports or draws)
    replaces: tuple[str, ...] = ()  # steps it does itself
    # the field's words for it in CJK scripts (分段 for epoching), shown beside `about` (English)
    # to the model that writes the record of a request written in them
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Example:
    """A worked example: a request, the calls that carry it out as one line of text, and the
    request's record (agent/record.py's fields)."""

    request: str
    calls: str
    record: dict[str, Any] | None = None


@dataclass(frozen=True)
class Suggestion:
    """Arguments a domain would send instead, and why; the model decides."""

    args: dict[str, Any]
    why: str


class Domain(Protocol):
    """See the module docstring; every method may answer "nothing" (None, [] or the input)."""

    vocabulary: Vocabulary

    def steps(self) -> Sequence[DomainStep]: ...

    def step_of(self, tool: str) -> DomainStep | None: ...

    def offer(self, tools: list[str], facts: dict[str, Any]) -> list[str]: ...

    def focus(self, asked: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]: ...

    def listing(self) -> str | None: ...

    def next_call(
        self, asked: list[str], facts: dict[str, Any], done: set[str], fixed: dict[str, Any]
    ) -> str | None: ...

    def rounds(self, asked: list[str], facts: dict[str, Any]) -> int: ...

    def held(self, asked: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]: ...

    def opening(self, asked: list[str], listing: bool, facts: dict[str, Any]) -> list[str]: ...

    def closing(self, asked: list[str], facts: dict[str, Any], done: set[str]) -> list[str]: ...

    def state_line(self, tool: str, result: str) -> str | None: ...

    def shows(self, tool: str, args: dict[str, Any], facts: dict[str, Any]) -> bool | None: ...

    def worked_call(self) -> dict[str, Any] | None: ...

    def second_look(
        self,
        tool: str,
        args: dict[str, Any],
        fixed: dict[str, Any],
        positions: list[int],
        results: list[tuple[str, str]],
    ) -> Suggestion | None: ...

    def examples(self, request: str, k: int) -> list[Example]: ...

    def placed(
        self, positions: list[int], results: list[tuple[str, str]], fixed: dict[str, Any]
    ) -> dict[str, dict[str, Any]]: ...


class NoDomain:
    """The domain of a field the agent knows nothing about."""

    vocabulary: Vocabulary = EMPTY

    def steps(self) -> Sequence[DomainStep]:
        return ()

    def step_of(self, tool: str) -> DomainStep | None:
        return None

    def offer(self, tools: list[str], facts: dict[str, Any]) -> list[str]:
        return tools

    def focus(self, asked: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
        return set()

    def listing(self) -> str | None:
        return None

    def next_call(
        self, asked: list[str], facts: dict[str, Any], done: set[str], fixed: dict[str, Any]
    ) -> str | None:
        return None

    def rounds(self, asked: list[str], facts: dict[str, Any]) -> int:
        return 0

    def state_line(self, tool: str, result: str) -> str | None:
        return None

    def shows(self, tool: str, args: dict[str, Any], facts: dict[str, Any]) -> bool | None:
        return None

    def worked_call(self) -> dict[str, Any] | None:
        return None

    def second_look(
        self,
        tool: str,
        args: dict[str, Any],
        fixed: dict[str, Any],
        positions: list[int],
        results: list[tuple[str, str]],
    ) -> Suggestion | None:
        return None

    def examples(self, request: str, k: int) -> list[Example]:
        return []

    def placed(
        self, positions: list[int], results: list[tuple[str, str]], fixed: dict[str, Any]
    ) -> dict[str, dict[str, Any]]:
        return {}

    def held(self, asked: list[str], facts: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
        return set()

    def opening(self, asked: list[str], listing: bool, facts: dict[str, Any]) -> list[str]:
        return []

    def closing(self, asked: list[str], facts: dict[str, Any], done: set[str]) -> list[str]:
        return []
