"""A model's profile: how it calls tools and how much the agent guides it.

A strong model that calls tools natively gets the loop limits, the approvals of destructive
steps and the answer check, and nothing that refuses a step or second-guesses its arguments. A
small model (one that calls tools through the prompt) is guided: the agent makes a record of the
request first, offers only the tools the study's state allows, names the next step, shows worked
examples, and sends back calls that contradict the request as correctable errors. The user sets
the level per model (`guidance` in its spec); `auto` follows the tool calling in force, which a
model set to `auto` may itself have learned (agent/automode.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from brainchat.settings import ModelSpec

Level = Literal["minimal", "guided"]


@dataclass(frozen=True)
class Profile:
    tool_calling: str  # native | prompt | auto, as in force for this run
    guidance: Level

    @property
    def guided(self) -> bool:
        return self.guidance == "guided"


def profile_for(spec: ModelSpec | None, tool_calling: str) -> Profile:
    """The profile in force: the spec's guidance, or `auto`'s choice from the tool calling."""
    chosen = spec.guidance if spec is not None else "auto"
    if chosen == "auto":
        chosen = "guided" if tool_calling == "prompt" else "minimal"
    return Profile(tool_calling, "guided" if chosen == "guided" else "minimal")
