"""The answer stage's share of the run's time, from the answer model's measured speed.

A fixed share of the run for the answer cuts a slow model's answer short (a small model on a
few CPU cores writes ~10 tokens/s). The loop keeps what the answer model needs: its time to first token plus the reply tokens an answer takes at its tokens
per second, measured in this run (when the function-call model is the same model) or remembered
for it from earlier runs (agent/habits.py). The reserve is never under the old default and never
over half the run; when even that is not enough at the answer stage, the model is not asked and
brainchat states the gathered facts itself (echo.facts_answer), saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brainchat.agent import echo, habits
from brainchat.events import AnswerToken, Notice, emit

if TYPE_CHECKING:
    from brainchat.agent.context import AgentState, Deps
    from brainchat.agent.state import RunContext

ANSWER_TOKENS = 400  # what an answer takes (capped by the answer model's max_tokens)
MARGIN = 1.25  # the estimate is an estimate
MAX_SHARE = 0.5  # the tool loop keeps at least half the run
MIN_MEASURED = 20  # output tokens below which a reply says little about a model's speed


@dataclass(frozen=True)
class Speed:
    tps: float  # output tokens per second while it writes
    ttft: float  # seconds before its first token


def default_reserve(limit: float) -> float:
    """The reserve with nothing measured: a fifth of the run, at most 15 s."""
    return min(limit * 0.2, 15.0)


def measured(row: Any, waited: float | None = None) -> Speed | None:
    """A usage row's speed: output tokens over the time after each call's first token; None
    when it cannot tell (too few tokens, or no call streamed).

    `waited` is the row's calls' times to first token summed (UsageLedger.waited); without it
    the first call's stands for every call's (a cold first reply then makes a slow model look
    many times faster, and its answer is cut)."""
    if row is None or row.output_tokens < MIN_MEASURED or row.seconds <= 0:
        return None
    if row.ttft is None:
        # no call of the row streamed (a reply held to a JSON schema comes whole): its seconds
        # hold the prompt's reading too, which at 1,500 prompt tokens on two busy cores is most
        # of them, so tokens over seconds says nothing of how fast the model writes
        return None
    waited = (row.ttft or 0.0) * row.calls if waited is None else waited
    writing = max(row.seconds - waited, row.seconds * 0.1)
    return Speed(row.output_tokens / writing, waited / row.calls)


def answer_speed(d: Deps, ctx: RunContext) -> Speed | None:
    """The answer model's speed: measured in this run when the function-call model is the same
    model, else remembered for it, else unknown."""
    fc, ans = d.specs.get("function_call"), d.specs.get("answer")
    key = habits.model_key(ans)
    same = key is not None and key == habits.model_key(fc)
    fc_waited = ctx.usage.waited.get("function_call")  # each call's own wait
    if same and (speed := measured(ctx.usage.rows.get("function_call"), fc_waited)) is not None:
        return speed
    known = habits.recall(ans)
    if isinstance(known.get("answer_tps"), int | float) and known["answer_tps"] > 0:
        return Speed(float(known["answer_tps"]), float(known.get("answer_ttft") or 0.0))
    return None


def needed(d: Deps, speed: Speed) -> float:
    """Seconds the answer takes at `speed`."""
    spec = d.specs.get("answer") or d.specs.get("function_call")
    tokens = min(spec.reply_tokens, ANSWER_TOKENS) if spec is not None else ANSWER_TOKENS
    return speed.ttft + tokens / speed.tps


def keep_for_answer(d: Deps, ctx: RunContext) -> None:
    """Set the run's answer reserve from the answer model's speed (called at the start and after
    each function-call reply, as the measure improves)."""
    limit = d.limits.max_execution_time
    reserve = default_reserve(limit)
    if (speed := answer_speed(d, ctx)) is not None:
        reserve = min(max(reserve, needed(d, speed) * MARGIN), limit * MAX_SHARE)
    ctx.answer_reserve = reserve


def facts_instead(d: Deps, ctx: RunContext) -> AgentState | None:
    """At the answer stage: when the time left is under what the answer model needs, its answer
    would be cut; brainchat states the gathered facts itself instead (None: ask the model)."""
    speed = answer_speed(d, ctx)
    if speed is None:
        return None
    need, left = needed(d, speed), ctx.answer_remaining()
    if left >= need:
        return None
    name = d.names["answer"]
    why = (
        f"the {left:.0f} s left of the run are too few for {name} to write an answer (about "
        f"{need:.0f} s at its measured {speed.tps:.1f} tokens/s)"
    )
    text = echo.facts_answer(ctx.ledger, why)
    emit(AnswerToken(role="answer", model="brainchat", text=text))
    emit(
        Notice(
            kind="timeout",
            message=f"The answer is brainchat's own list of what the run gathered: {why}.",
            hint="Raise the max execution time in the settings, or pick a faster answer model.",
        )
    )
    return {"answer": text, "stop_reason": "timeout"}


def remember_speed(d: Deps, ctx: RunContext) -> None:
    """After an answer: the answer model's speed, for the next runs' reserve."""
    speed = measured(ctx.usage.rows.get("answer"), ctx.usage.waited.get("answer"))
    if speed is not None:
        habits.remember(
            d.specs.get("answer"), answer_tps=round(speed.tps, 2), answer_ttft=round(speed.ttft, 2)
        )
