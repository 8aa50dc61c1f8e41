"""The agent's policies: result evaluation, loop detection and the limits that end the tool loop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from brainchat.agent.state import LedgerEntry, RunContext
from brainchat.settings import AgentLimits


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str


Evaluator = Callable[[LedgerEntry], Verdict]


def default_evaluator(min_chars: int) -> Evaluator:
    """Empty or too-short results do not count as enough; each verdict says why."""

    def evaluate(entry: LedgerEntry) -> Verdict:
        if entry.status != "success":
            return Verdict(False, f"{entry.name} {entry.status}: {entry.error or 'no result'}")
        if entry.sources:
            return Verdict(True, f"{entry.name}: {len(entry.sources)} results")
        text = entry.result.strip()
        if entry.structured is not None or _is_number(text):
            return Verdict(
                True,
                f"{entry.name}: a {'structured' if entry.structured is not None else 'numeric'} result",
            )
        if len(text) < min_chars:
            return Verdict(
                False, f"{entry.name}: result too short ({len(text)} < {min_chars} characters)"
            )
        return Verdict(True, f"{entry.name}: {len(text)} characters of result")

    return evaluate


def _is_number(text: str) -> bool:
    """A short number ("42", "0.91") is a complete answer, not a too-short one."""
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Decision:
    route: str  # "decide" | "answer"
    verdict: str  # "continue" | "answer"
    reason: str
    stop_reason: str | None = None  # iteration_limit | timeout | loop
    notice: str | None = None
    hint: str = ""


def next_step(
    ctx: RunContext,
    limits: AgentLimits,
    round_: int,
    tool_rounds: int,
    useful: list[str],
    problems: list[str],
    looped: bool,
) -> Decision:
    """After a tool round: call the model again, or hand over to answering, and why."""
    found = "; ".join(useful) if useful else "nothing useful yet"
    if problems:
        found += " (" + "; ".join(problems) + ")"
    if looped and ctx.loop_hits >= limits.loop_repeats_to_stop:
        return Decision(
            "answer",
            "answer",
            f"the model repeated calls it already made {ctx.loop_hits} times",
            stop_reason="loop",
            notice="The agent kept asking for results it already had, so it stopped searching.",
            hint="Rephrase the question more specifically, or switch to Chat mode.",
        )
    if ctx.remaining() <= 0:
        return Decision(
            "answer",
            "answer",
            f"time limit of {limits.max_execution_time:g} s reached; {found}",
            stop_reason="timeout",
            notice=f"The agent hit its time limit ({limits.max_execution_time:g} s) and answers from what it gathered.",
            hint="Raise the max execution time in the settings, or ask a narrower question.",
        )
    if round_ >= limits.max_iterations:
        return Decision(
            "answer",
            "answer",
            f"iteration limit of {limits.max_iterations} reached; {found}",
            stop_reason="iteration_limit",
            notice=f"The agent reached its limit of {limits.max_iterations} iterations and answers from what it gathered.",
            hint="Raise max iterations in the settings, or split the question.",
        )
    if limits.execution_mode == "single_step" and tool_rounds >= 1:
        return Decision("answer", "answer", f"single-step mode: one tool round done; {found}")
    if tool_rounds >= limits.max_auto_rounds:
        return Decision(
            "answer", "answer", f"auto mode: {limits.max_auto_rounds} tool rounds done; {found}"
        )
    if useful:
        return Decision("decide", "continue", f"{found}; asking the model whether it needs more")
    return Decision("decide", "continue", f"{found}; asking the model to try another way")
