"""What a domain tells the answer check: its steps, its quantities and the things its results name.

grounding/ knows languages, not EEG. The domain (eeg/guidance/) hands it a `Vocabulary`: the
steps a sentence can claim as done (with the tools that do them and how the study's summary
shows them), the words that name a quantity (so "22 events" is not grounded by "22 ch"), the
things a verdict can be about (pipelines, models) and the tools whose results a verdict may
rest on. An empty vocabulary checks citations, figures and tool names only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from brainchat.grounding.lexicon import words


@dataclass(frozen=True)
class StepWords:
    """A step an answer may claim as done: the words for it, its tools, its sign in the study."""

    name: str  # how a finding names it ("filtering")
    said: re.Pattern[str]  # the step named in any language ("band-pass", "filtered", "滤波")
    tools: tuple[str, ...]  # the tools that do it
    shown: re.Pattern[str]  # the study summary's sign that an earlier turn did it
    done: re.Pattern[str] | None = None  # words that say by themselves it was done ("resampled")


# Quantities every science shares; a domain adds its own (channels, trials, subjects ...).
GENERIC_UNITS: dict[str, re.Pattern[str]] = {
    "hz": words(["k?hz"], ["赫兹", "赫茲"]),
    "ms": words(["ms", "milliseconds?"], ["毫秒"]),
    "s": words(["s", "secs?", "seconds?", "sek\\w*", "segundos?", "min", "minutes?"], ["秒", "分钟", "分鐘"]),
    "uv": words(["µv", "μv", "uv", "microvolts?"], ["微伏"]),
}  # fmt: skip


@dataclass(frozen=True)
class Vocabulary:
    """A domain's words for the answer check (see the module docstring)."""

    steps: tuple[StepWords, ...] = ()
    units: dict[str, re.Pattern[str]] = field(default_factory=dict)  # kind -> words naming it
    entities: dict[str, re.Pattern[str]] = field(default_factory=dict)  # id -> its names
    result_tools: frozenset[str] = frozenset()  # tools whose results a verdict may rest on
    data_refs: re.Pattern[str] | None = None  # words pointing at the user's own data

    def all_units(self) -> dict[str, re.Pattern[str]]:
        return {**GENERIC_UNITS, **self.units}


EMPTY = Vocabulary()
