"""What a run has done of its record: the steps still open, whether every asked step is done,
and what a round added. The guided guards (guided.py) and the answer's input read it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainchat.tools.registry import flags_of

if TYPE_CHECKING:
    from brainchat.agent.context import Deps
    from brainchat.agent.record import RequestRecord
    from brainchat.agent.state import LedgerEntry, RunContext


def web_tools(d: Deps) -> set[str]:
    """The tools that search the web."""
    return {n for n, t in d.runner.tools.items() if flags_of(t).web}


def open_steps(d: Deps, run: RunContext, record: RequestRecord) -> list[str]:
    """The record's steps less those the study held when the run began (a load of a study
    already loaded, with nothing said of what to load), those an asked step did itself, and
    those whose call was not approved: the user has said no, and the run goes on without it."""
    held = d.domain.held(record.steps, run.facts_at_start, record.values())
    names = {e.name for e in run.ledger.entries if e.declined}
    declined = {s.id for s in d.domain.steps() if names & set(s.tools)}
    settled = held | _covered(d, run, record) | declined
    return [s for s in record.steps if s not in settled]


def _covered(d: Deps, run: RunContext, record: RequestRecord) -> set[str]:
    """Asked steps that an asked step which does them itself has done in this run (a record
    listing a split, a training and a test beside a cross-validation, whose folds split, train
    and test): they are not pushed, reminded or waited for once it succeeded; never refused."""
    done = done_tools(run)
    return {
        r for s in d.domain.steps() if s.id in record.steps and set(s.tools) & done for r in s.replaces
    }  # fmt: skip


def searched(d: Deps, run: RunContext) -> bool:
    """A web search succeeded in this run."""
    return any(e.name in web_tools(d) and e.status == "success" for e in run.ledger.entries)


def done_tools(run: RunContext) -> set[str]:
    return {e.name for e in run.ledger.entries if e.status == "success"}


def finished(d: Deps, run: RunContext, record: RequestRecord) -> str:
    """The asked steps' tools when each asked step has succeeded in this run, with no failure of
    one since; else ""."""
    ids = open_steps(d, run, record)
    asked = [s for s in d.domain.steps() if s.id in ids]
    entries = [e for e in run.ledger.entries if e.status != "pending"]
    ok = [i for i, e in enumerate(entries) if e.status == "success"]
    if not asked or any(not any(entries[i].name in s.tools for i in ok) for s in asked):
        return ""
    tools = {t for s in asked for t in s.tools}
    last = max(i for i in ok if entries[i].name in tools)
    if any(e.status == "error" and e.name in tools for e in entries[last:]):
        return ""  # an asked-for call failed since: the step its error points to runs
    return ", ".join(s.tools[0] for s in asked)


def only_declined(d: Deps, run: RunContext, record: RequestRecord) -> str:
    """The declined calls' tools when a call was declined and no step the request asks for is
    left open (nothing else to do: the user said no); else ""."""
    names = sorted({e.name for e in run.ledger.entries if e.declined})
    return "" if not (record.steps and names) or open_steps(d, run, record) else ", ".join(names)


def not_done(d: Deps, run: RunContext, record: RequestRecord) -> list[str]:
    """The asked steps no call did in this run, by their usual tool."""
    done, ids = done_tools(run), open_steps(d, run, record)
    return [s.tools[0] for s in d.domain.steps() if s.id in ids and not set(s.tools) & done]


def unasked_report(d: Deps, entry: LedgerEntry, record: RequestRecord) -> bool:
    """A call of a step that changes nothing (it lists or reports) which the request does not
    ask for."""
    step = d.domain.step_of(entry.name)
    return step is not None and step.report and step.id not in record.steps and not (step.id == "plot" and record.plot)  # fmt: skip


def adds_nothing(entry: LedgerEntry, run: RunContext) -> bool:
    """A call that changed nothing and told nothing new: refused, skipped, unreadable, failed,
    or a result the run already had word for word."""
    if entry.status in ("refused", "skipped", "error") or entry.invalid:
        return True
    return any(
        e is not entry and e.name == entry.name and e.status == "success" and e.result == entry.result
        for e in run.ledger.entries
    )  # fmt: skip
