"""The agent's policies: result evaluation, loop detection and the limits that end the tool loop."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from brainchat.agent.state import LedgerEntry, RunContext, call_signature
from brainchat.agent.textcalls import BROKEN
from brainchat.events import StopReason  # the stop reason is typed end to end
from brainchat.settings import AgentLimits


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str


Evaluator = Callable[[LedgerEntry], Verdict]


def default_evaluator(min_chars: int) -> Evaluator:
    """Empty or too-short results do not count as enough; each verdict says what came back."""

    def evaluate(entry: LedgerEntry) -> Verdict:
        if entry.name == BROKEN:  # no tool ran: no name for a small model to call
            return Verdict(False, f"your reply held no readable tool call: {entry.error}")
        if entry.status != "success":
            return Verdict(False, f"{entry.name} {entry.status}: {entry.error or 'no result'}")
        if entry.sources:
            return Verdict(True, f"{entry.name} found {len(entry.sources)} source(s)")
        text = entry.result.strip()
        if _is_number(text):
            return Verdict(True, f"{entry.name} returned {text} (a numeric result)")
        if entry.structured is not None:
            return Verdict(True, f"{entry.name} returned a structured result: {_gist(text)}")
        if len(text) < min_chars:
            return Verdict(
                False,
                f"{entry.name} returned almost nothing ({_gist(text) or 'empty'}; result too short, "
                f"under {min_chars} characters)",
            )
        return Verdict(True, f"{entry.name}: {_gist(text)}")

    return evaluate


def _gist(text: str, limit: int = 120) -> str:
    """The first line of a result, quoted: what a researcher would read first."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"“{first[:limit]}{'…' if len(first) > limit else ''}”" if first else ""


def _is_number(text: str) -> bool:
    """A short number ("42", "0.91") is a complete answer, not a too-short one."""
    try:
        float(text)
    except ValueError:
        return False
    return True


RoundVerdict = Literal["enough", "continue", "not_enough"]
RoundRule = Callable[[list[LedgerEntry], list[Verdict], AgentLimits], tuple[RoundVerdict, str]]


def default_round_rule(
    entries: list[LedgerEntry], verdicts: list[Verdict], limits: AgentLimits
) -> tuple[RoundVerdict, str]:
    """The cheap default (no model call): what one tool round means for the run.

    - nothing useful came back: "not_enough", and the reason goes into the next prompt;
    - single-step mode, or (rule evaluation) a round that was only successful web searches:
      "enough", straight to the answer stage without another function-call round;
    - otherwise "continue": the function-call model decides the next step.
    """
    useful = [v.reason for v in verdicts if v.ok]
    problems = [v.reason for v in verdicts if not v.ok]
    found = "; ".join(useful) if useful else "nothing useful yet"
    if problems:
        found += " (" + "; ".join(problems) + ")"
    if not useful:
        return "not_enough", found
    if limits.execution_mode == "single_step":
        return "enough", f"single-step mode: one tool round done; {found}"
    if limits.evaluation == "rule" and all(e.status == "success" and e.sources for e in entries):
        return "enough", f"the web search found sources to answer from; {found}"
    return "continue", found


def next_call(name: str, fix: dict[str, Any] | None, tools: Collection[str]) -> str:
    """The next concrete call after `name` failed: the one its error names as the fix (a
    ToolError's `next_call`), else another try or another way."""
    if fix and fix.get("name") in tools:
        args = fix.get("arguments") or {}
        if fix["name"] == name or args:
            return f"send the corrected call {json.dumps(fix, ensure_ascii=False, default=str)}"
        return f"call {fix['name']} next"
    return f"call {name} with different arguments, or another tool, or stop and answer"


def loop_notice(
    entries: list[LedgerEntry],
    times: int,
    tools: Collection[str] = (),
    ledger: list[LedgerEntry] | None = None,
) -> tuple[str, str]:
    """What the user reads at a loop stop: the calls that repeated (and how often, from the
    ledger), whether they had failed with which error or were unusable replies, what failed
    between the copies of a state-changing step, and the next concrete step (not 'rephrase', not
    'stopped searching' after a failing load_data)."""
    calls = ", ".join(dict.fromkeys(_call_text(e) for e in entries)) or "the same calls"
    count = _copies(entries, ledger) or times + 1
    if entries and all(e.invalid for e in entries):
        return _unusable_notice(entries[0], count)
    failed = [e for e in entries if e.reused is not None and e.reused.status != "success"]
    if failed:
        why = failed[0].reused.text if failed[0].reused else ""
        step = next_call(failed[0].name, failed[0].reused.fix if failed[0].reused else None, tools)
        return (
            f"The agent repeated {calls} {count} times although it failed with: "
            f"{_gist(why, 300) or 'no error text'}. It stopped instead of running it again.",
            f"Next step: {step}. You can ask for that directly.",
        )
    applied = [e for e in entries if e.reused is not None and e.reused.changed]
    if applied and applied[0].reused is not None:
        first = applied[0].reused.round
        between = [e for e in ledger or [] if first < e.round and e.status == "error"]
        said = (
            f"The agent asked for {calls} {count} times; it had already run in round {first} and "
            "the study had not changed since, so it was not applied again and the agent stopped."
        )
        if not between:
            return said, "The results are in the steps above; ask for the next step by name."
        # a real tool's failure says what to do next; an unreadable reply in between names no
        # tool ("call invalid_tool_call with different arguments" would name none)
        bad = ([e for e in between if e.name != BROKEN] or between)[-1]
        if bad.name == BROKEN:
            return (
                f"{said} In between, the model sent a tool call brainchat could not read: "
                f"{_gist(bad.error or '', 300)}.",
                "Ask again naming the next step and its values (for example 'epoch 0.5-2.5 s').",
            )
        return (
            f"{said} In between, {_call_text(bad)} failed: {_gist(bad.error or '', 300)}.",
            f"Next step: {next_call(bad.name, bad.fix, tools)}. You can ask for that directly.",
        )
    if entries and all(e.name == "web_search" for e in entries):
        return (
            f"The agent repeated {calls} {count} times for results it already had, so it "
            "stopped searching.",
            "The answer is written from the results found (in the steps above); to search "
            "further, name what they miss.",
        )
    return (
        f"The agent repeated {calls} {count} times for results it already had, so it stopped.",
        "The results are in the steps above; ask for the next step by name.",
    )


def _copies(entries: list[LedgerEntry], ledger: list[LedgerEntry] | None) -> int:
    """How many times the run asked for the first repeated call, by the ledger (0: unknown)."""
    if not entries or not ledger:
        return 0
    key = call_signature(entries[0].name, entries[0].args)
    same = [e for e in ledger if call_signature(e.name, e.args) == key]
    if entries[0].invalid:  # broken calls are told apart by what was wrong with them
        same = [e for e in same if e.invalid and _refusal(e) == _refusal(entries[0])]
    return len(same)


def _refusal(entry: LedgerEntry) -> str:
    """Why a call was refused: its own error, or that of the call it repeated."""
    return entry.reused.text if entry.reused is not None else entry.error or ""


def _unusable_notice(entry: LedgerEntry, count: int) -> tuple[str, str]:
    """The model sent the same call it could not write right, again and again."""
    what = "a tool call that is not valid JSON" if entry.name == BROKEN else _call_text(entry)
    return (
        f"The model sent the same unusable reply {count} times: {what}, refused each time "
        f"with: {_gist(_refusal(entry), 300)}. brainchat stopped asking it.",
        "Ask again naming the step and its values (for example 'band-pass 8-30 Hz'), or choose "
        "a larger function-call model, or another tool calling mode, in the settings.",
    )


def _call_text(entry: LedgerEntry, limit: int = 80) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in entry.args.items())
    return f"{entry.name}({args[:limit]}{'…' if len(args) > limit else ''})"


def at_round_limit(limits: AgentLimits, tool_rounds: int) -> bool:
    """Auto mode's limit on successful tool rounds is reached."""
    return limits.execution_mode == "auto" and tool_rounds >= limits.max_auto_rounds


@dataclass(frozen=True)
class Decision:
    route: Literal["decide", "answer"]
    verdict: Literal["enough", "continue", "not_enough", "answer"]
    reason: str
    stop_reason: StopReason | None = None  # iteration_limit | timeout | loop | round_limit
    notice: str | None = None
    hint: str = ""


def next_step(
    ctx: RunContext,
    limits: AgentLimits,
    round_: int,
    tool_rounds: int,
    verdict: RoundVerdict,
    found: str,
    looped: bool,
    entries: list[LedgerEntry] = [],  # noqa: B006 - read only; the round, from the graph state
    loop_hits: int = 0,  # from the graph state, no longer on ctx
    tools: Collection[str] = (),  # a loop stop names the next concrete call
) -> Decision:
    """After a tool round: a round judged enough goes to the answer (a repeat in it cuts
    nothing short, so it is no loop stop); then the limits (answer with a notice), then the
    round's verdict."""
    if verdict == "enough":
        return Decision("answer", "enough", found)
    if looped and loop_hits >= limits.loop_repeats_to_stop:
        notice, hint = loop_notice(entries, loop_hits, tools, ctx.ledger.entries)
        return Decision(
            "answer",
            "answer",
            f"the model repeated calls it already made {loop_hits} times",
            stop_reason="loop",
            notice=notice,
            hint=hint,
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
    if at_round_limit(limits, tool_rounds):
        return Decision(
            "answer",
            "answer",
            f"{limits.max_auto_rounds} successful tool rounds done (auto mode's limit); {found}",
            stop_reason="round_limit",
            notice=f"The agent did {limits.max_auto_rounds} successful tool rounds, its limit in auto mode; the answer says what was done and what remains.",
            hint='Reply "continue" to go on from here, or raise AGENT_MAX_TOOL_ROUNDS.',
        )
    if round_ >= limits.max_iterations:
        return Decision(
            "answer",
            "answer",
            f"iteration limit of {limits.max_iterations} model calls reached; {found}",
            stop_reason="iteration_limit",
            notice=f"The agent reached its limit of {limits.max_iterations} model calls and answers from what it gathered.",
            hint="Raise max iterations in the settings, or split the question.",
        )
    if verdict == "not_enough":
        return Decision("decide", "not_enough", f"{found}; asking the model to try another way")
    return Decision("decide", "continue", f"{found}; asking the model whether it needs more")
