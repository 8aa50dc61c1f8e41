"""The answer request: the question, the verified results cut to fit the answer model's window."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from brainchat.agent import textcalls
from brainchat.agent.budget import cut_text, fit_history, message_tokens
from brainchat.agent.context import Deps
from brainchat.agent.language import answer_language
from brainchat.agent.plan import Plan, answer_section
from brainchat.agent.state import LedgerEntry, RunContext, clip
from brainchat.events import Notice, emit
from brainchat.prompts import load_prompt


def answer_messages(
    d: Deps, run: RunContext, plan: Plan | None, stop: str | None
) -> list[BaseMessage] | str:
    """System prompt, the history that fits, and the verified results cut to fit the window;
    or, when even the newest result alone does not fit, the error (said to the user).

    Each result's share halves until all fit; below a useful share the newest results are
    kept and older ones listed by name only (the answer model may have a smaller window
    than the function-call model that gathered them).
    """
    budget = d.budgets["answer"]
    system = SystemMessage(load_prompt("answer", d.prompt_variants.get("answer")))
    cap, keep = budget.per_result, None
    total = len(run.ledger.entries) + len(run.ledger.sources)
    while True:
        question = HumanMessage(answer_input(run, plan, stop, cap, keep, d))
        fixed = message_tokens([system, question], budget.tokens)
        if fixed <= budget.tokens:
            break
        if cap > MIN_ANSWER_SHARE:
            cap = max(cap // 2, MIN_ANSWER_SHARE)  # each result a smaller share
        elif keep != 0:
            keep = (total if keep is None else keep) // 2  # older results by name only
        else:
            error = (
                f"The request is too long for {d.names['answer']}'s context window "
                f"({budget.window:,} tokens): even with every tool result left out it needs "
                f"about {fixed:,} of the {budget.tokens:,} tokens left for input."
            )
            emit(Notice(kind="error", message=error, hint="Ask a narrower question."))
            return error
    return [system, *fit_history(run.history, fixed, budget.tokens), question]


def answer_input(
    run: RunContext,
    plan: Plan | None,
    stop_reason: str | None = None,
    cap: int = 3000,
    keep: int | None = None,
    d: Deps | None = None,
) -> str:
    """The question plus only the results that really exist (the ledger's successes).

    `cap` is each result's share in tokens; `keep`, when set, is how many of the newest
    sources, results and failures are shown (older ones are counted by name only); `d` gives
    the domain's lines on what to state from a result.
    """
    ledger = run.ledger
    chars = max(cap, 60)  # arguments, titles and URLs scale with the share too
    lines = [f"User request: {run.question}", ""]
    if ledger.sources:
        lines += _sources(ledger.sources, keep, cap, chars)
    others, old = _newest([e for e in ledger.successful() if not e.sources], keep)
    if others or old:
        lines.append("Tool results:")
        if old:
            lines.append(f"({len(old)} earlier result(s) omitted to fit: {_names(old)}.)")
        for e in others:
            args = clip(json.dumps(e.args, default=str), min(chars, 500))
            lines.append(f"- {e.name}({args}):\n{cut_text(e.result, cap)}")
            if d is not None and (line := d.domain.state_line(e.name, e.result)):
                lines.append(line)
        lines.append("")
    failed, old_failed = _newest(
        [e for e in ledger.entries if e.status in ("error", "refused")], keep
    )
    if failed or old_failed:
        lines.append("Tool calls that failed (do not use them as evidence):")
        if old_failed:
            lines.append(f"- ({len(old_failed)} earlier failure(s): {_names(old_failed)})")
        lines += [f"- {clip(_failure(e), min(chars, 300))}" for e in failed]
    if plan is not None:
        lines.append("\n" + answer_section(plan))
    if stop_reason in LIMIT_STOPS and not _finished(d, run):
        gathered = any(e.status == "success" for e in ledger.entries)
        lines += ["", LIMIT_STOPS[stop_reason] if gathered else NOTHING[stop_reason]]
    return "\n".join(lines + _closing(run, d, nothing_ran=len(lines) == 2, cap=cap))


def _closing(run: RunContext, d: Deps | None, nothing_ran: bool, cap: int = 3000) -> list[str]:
    """The request's last lines: when no tool ran, whether the answer may come from knowledge;
    the asked steps that never ran; the language of the answer."""
    lines = []
    if nothing_ran:
        # No tool ran this turn: a question about what earlier turns ran (a score, a split) is
        # answered from the study as the function-call model saw it, not from the model's memory.
        # cut to a result's share, so a request fitted to the window shrinks it like a result
        study = cut_text(d.study_text(), cap) if d is not None else ""
        lines = [study, STUDY_LINE, ""] if study else []
        lines.append(no_tools_line(run.record))
    if run.record is not None and d is not None and (missing := _not_run(d, run)):
        lines.append(f"Asked for but never run (no result exists for them): {', '.join(missing)}.")
    ran = {e.name for e in run.ledger.successful()}
    if declined := sorted({e.name for e in run.ledger.entries if e.declined} - ran):
        # a step the user said no to is settled for the run (not asked again), and the answer
        # says so: it never reads as done, or as about to be done
        lines.append(f"Not run, because it was not approved (say so): {', '.join(declined)}.")
    return [*lines, "", answer_language(run.question, run.record)]


STUDY_LINE = (
    "That study holds what earlier turns of this conversation ran: where the request asks about "
    "those results, answer from it and state only what it shows."
)


def no_tools_line(record: object) -> str:
    """What the answer model reads when no tool ran: its own knowledge is enough only when the
    request needs no tool; the record says so, and without one both cases are named."""
    needs = getattr(record, "needs_tools", None)
    if needs is False:
        return "No tools were used; answer from your own knowledge."
    if needs is True:
        return (
            "No tool was called, although the request needs tools (the user's files or data, "
            "an analysis or a search): nothing was looked up or run. Say so plainly in one or "
            "two sentences, and do not invent files, data, results or sources."
        )
    return (
        "No tool was called in this run. Answer from your own knowledge only what needs no "
        "look-up; if the request needs the user's files, an analysis or a search, say plainly "
        "that nothing was looked up or run, and invent no files, data, results or sources."
    )


def _not_run(d: Deps, run: RunContext) -> list[str]:
    """The steps the record asks for that no call did in this run, by their usual tool."""
    from brainchat.agent.progress import not_done

    return not_done(d, run, run.record)


def _finished(d: Deps | None, run: RunContext) -> bool:
    """Every step the record asks for has succeeded: a loop stopped after that cut nothing the
    request asked for, and the answer model is not told that steps remain (a small model
    echoed that instruction as its answer)."""
    if d is None or run.record is None:
        return False
    from brainchat.agent.progress import finished

    return bool(finished(d, run, run.record))


def _sources(found: list[dict[str, Any]], keep: int | None, cap: int, chars: int) -> list[str]:
    """The answer request's web sources, numbered, with how to cite them."""
    sources, old_sources = _newest(found, keep)
    # the only place a citation is asked for: an answer model primed with "[n]" elsewhere
    # numbers a file list [1]..[4] with no source at all
    lines = [f"{SOURCES_HEADER}, with these numbers only; cite none where no source supports a claim):"]  # fmt: skip
    # what a source says first, its title and address after: a small model copies the line
    # next to the number, and given the title there it answered with the title alone
    lines += [
        f"[{s['n']}] {cut_text(s['snippet'], max(cap // 4, 50))}"
        f"\n    (from: {clip(s['title'], min(chars, 200))} — {clip(s['url'], min(chars, 300))})"
        for s in sources
    ]
    if old_sources:
        lines.append(f"({len(old_sources)} earlier source(s) omitted to fit the window.)")
    # said where a small answer model reads it, right after the sources, with the form to
    # copy: told only in the header, a small model used a source's words and cited nothing;
    # given only the form, it answered with a source's title and its number
    n = sources[0]["n"] if sources else 1
    return [
        *lines,
        "Answer with what the sources say that the request asks about, their specifics (names, "
        "methods, figures) included, not their titles alone. A sentence that uses a source ends "
        f'with its number: "... [{n}]."',
        "",
    ]


SOURCES_HEADER = "Web sources (cite as [n]"  # the demo's answer model reads the request by it
MIN_ANSWER_SHARE = 100  # tokens per result below which dropping older results reads better


def _failure(entry: LedgerEntry) -> str:
    """A failed call as the answer model reads it; an invalid one without its repair hint."""
    if entry.invalid:
        return textcalls.what_was_wrong(entry.name, entry.error or "invalid")
    return f"{entry.name}: {entry.error or entry.status}"


def _newest(items: list[Any], keep: int | None) -> tuple[list[Any], list[Any]]:
    """(the newest `keep` items, the older rest); all of them when `keep` is None."""
    if keep is None or len(items) <= keep:
        return items, []
    cut = len(items) - keep
    return items[cut:], items[:cut]


def _names(entries: list[Any]) -> str:
    """Tool names with counts ("lookup ×30, psd"): what older results were, in a line."""
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.name] = counts.get(e.name, 0) + 1
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in counts.items())


STOP_CAUSES = (  # why the tool loop stopped early, as the answer request says it
    ("round_limit", "the limit on successful tool rounds"),
    ("iteration_limit", "the limit on model calls"),
    ("timeout", "the time limit"),
    ("loop", "loop detection"),
    ("model_error", "a failure of the function-call model"),
    ("plan_failed", "a plan step that still failed after the allowed replans"),
    ("context_full", "the function-call model's context window filling up"),
)
# The same stop with nothing gathered: no "successful tool calls above" to point at (a small
# model echoed that instruction as its answer)
NOTHING = {
    reason: f"The tool loop was cut by {what} before any tool call succeeded. Tell the user in "
    "two sentences that nothing could be gathered and what failed (the failed calls above), and "
    "what they can change before asking again."
    for reason, what in STOP_CAUSES
}
LIMIT_STOPS = {
    reason: f"The tool loop was cut by {what} before the request may be complete. Say plainly "
    "which steps were done (the successful tool calls above) and which steps of the request "
    'remain, and tell the user they can reply "continue" to go on from here.'
    for reason, what in STOP_CAUSES
}
