"""The guards of a guided model (a small one): each reads the run's record of the request.

- `StateOffer`: the tools of the steps the request needs (its own, and those between the
  study's stage when the run began and them), the same every round; a web search only when
  the record asks for one; without a record, the tools the study's state allows.
- `FixedArguments`: a tool whose values the request fixes shows only its required arguments
  and those.
- `Opening`: the reports the domain names for the request (ones that take no argument and
  change nothing: the data folder's listing before a first load, the study's state for a
  question about it) are run by brainchat before the model's first round, unless the request
  asks for a web search (the model's first call is then its own).
- `Examples`: worked examples like the request go into the system prompt.
- `NextStep`: a note names the study's stage and the call that comes next for the request (a
  web search first, when the record asks for one).
- `AskedSteps`: once every asked step is done, a step nobody asked for is not run (steps that
  only report run, and plots when a figure is asked); a round that then adds nothing, or only
  reads what is there, ends the loop; a model that stops short of an asked report the domain
  computes without arguments (a test-set evaluation) has brainchat make it, with the values the
  request gives; one that stops with other asked steps never run is reminded once. A step
  whose call was not approved is settled: once nothing else is asked, the run answers.
- `UserValues`: a call whose arguments contradict the values the request writes, or that the
  domain would look at twice, is sent back once with the suggested arguments; the model
  decides, and the same call sent again runs as it is.
- `RoundBudget`: the round limit leaves room for the rounds the asked steps take, and the limit
  on model calls for them and a few corrected calls.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from brainchat.agent.callvalues import completed, conflict
from brainchat.agent.guards import Decision, Guard, Guards, Refuse, Suggest
from brainchat.agent.progress import (
    adds_nothing,
    done_tools,
    finished,
    not_done,
    only_declined,
    open_steps,
    searched,
    unasked_report,
    web_tools,
)
from brainchat.agent.state import call_signature
from brainchat.settings import AgentLimits

if TYPE_CHECKING:
    from brainchat.agent.context import Deps
    from brainchat.agent.record import RequestRecord
    from brainchat.agent.state import LedgerEntry, RunContext

EXAMPLES = 2  # worked examples in a guided model's system prompt


def _facts(d: Deps) -> dict[str, Any]:
    return d.facts() if d.facts is not None else {}


class StateOffer(Guard):
    def offer(self, d: Deps, run: RunContext, names: list[str]) -> list[str]:
        if d.facts is None:
            return names
        record = run.record
        if record is None or not (record.steps or record.web):
            return d.domain.offer(names, _facts(d))
        # the tools of the request's steps from the study as it was when the run began: the
        # same tools every round (a server's prompt cache keeps them; the model may write the
        # whole pipeline in one reply), a step that comes too early said by the tool itself;
        # a request for the web alone is offered no analysis step
        asked = open_steps(d, run, record)
        focus = d.domain.focus(asked, run.facts_at_start, record.values()) if asked else set()
        # a web search only when the record asks for one
        web = web_tools(d)
        return [
            n
            for n in names
            if (n in focus or d.domain.step_of(n) is None) and (record.web or n not in web)
        ]


class FixedArguments(Guard):
    """A tool's optional switches (arguments whose default is none: an event filter, a baseline,
    a rejection threshold) are shown, and may be written, only when the request sets them: a
    small model fills every argument it sees, with values nobody asked for. Arguments with a
    working default (an epoch's window, a split's kind) and the required ones stay; a tool that
    is nothing but switches (a band-pass's cut-offs) is shown whole. The full schema still
    checks the call when it runs."""

    def shape(
        self, d: Deps, run: RunContext, schemas: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        if run.record is None:
            return schemas
        values = run.record.values()
        return [_only(schema, values.get(_name(schema)) or {}) for schema in schemas]


def _name(schema: dict[str, Any]) -> str:
    return str(schema.get("function", schema).get("name"))


def _only(schema: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
    """The schema without the switches the request does not set (see FixedArguments)."""
    fn = dict(schema.get("function", schema))
    params = dict(fn.get("parameters") or {})
    props = dict(params.get("properties") or {})
    required = set(params.get("required") or ())

    def switch(name: str, prop: Any) -> bool:
        optional = name not in required and name not in fixed
        return optional and isinstance(prop, dict) and prop.get("default", None) is None

    kept = {k: v for k, v in props.items() if not switch(k, v)}
    if not kept and props:
        return schema  # nothing but switches: the model must choose among them
    fn["parameters"] = {**params, "properties": kept}
    return {**schema, "function": fn} if "function" in schema else fn


class Opening(Guard):
    def opening(self, d: Deps, run: RunContext) -> list[dict[str, Any]]:
        record = run.record
        if record is None or run.ledger.entries or record.web:
            return []  # a request for a search: the model's first call is its own
        names = d.domain.opening(record.steps, record.listing, _facts(d))
        offered = d.bound_llm.offered()
        return [
            {"name": name, "args": {}, "id": f"brainchat_open_{i}"}
            for i, name in enumerate(names, 1)
            if name in offered
        ]


class Examples(Guard):
    def guide(self, d: Deps, run: RunContext) -> str:
        found = d.domain.examples(run.question, EXAMPLES)
        if not found:
            return ""
        listing = d.domain.listing()
        where = f" (files in <brackets> come from {listing}'s result)" if listing else ""
        lines = [f"Worked examples of requests like this one and the calls that carry them out{where}:"]  # fmt: skip
        # the most alike last, next to the request: a small model leans on what it read last
        lines += [f"- Request: {ex.request}\n  Calls: {ex.calls}" for ex in reversed(found)]
        return "\n".join(lines)


class NextStep(Guard):
    def notes(self, d: Deps, run: RunContext) -> list[str]:
        record = run.record
        if record is None or not (record.steps or record.web) or d.facts is None:
            return []
        facts = _facts(d)
        if record.web and not searched(d, run) and web_tools(d) & set(d.runner.tools):
            # the search first: what it finds may shape the analysis, and it changes nothing
            return ["(Next step for this request: a web search, with the request's subject as its query.)"]  # fmt: skip
        if (pending := _pending(run)) is not None:
            call = json.dumps(pending, ensure_ascii=False, default=str)
            return [f"(Study stage: {facts.get('stage', 'empty')}. Next step: the suggested call {call}.)"]  # fmt: skip
        # the values the request fixes, with the files it gives (by place or in its own words)
        # as the run's listing names them
        results = [(e.name, e.result) for e in run.ledger.successful()]
        values = _unrefuted(run, record)
        for tool, args in d.domain.placed(record.positions, results, values).items():
            values[tool] = {**values.get(tool, {}), **args}
        step = d.domain.next_call(open_steps(d, run, record), facts, done_tools(run), values)
        if step is None:
            return []
        return [
            f"(Study stage: {facts.get('stage', 'empty')}. Next step for this request: {step}.)"
        ]


def _unrefuted(run: RunContext, record: RequestRecord) -> dict[str, dict[str, Any]]:
    """The record's values less each one it read from the request's meaning (not its words)
    that a failed call of its tool carried: the tool said why it is wrong, and a note naming it
    again sends the model back to the same error (a record's `device: "cuda"` on a machine
    without a GPU). Values the request writes stay: they are the user's to change."""
    failed = [e for e in run.ledger.entries if e.status == "error" and isinstance(e.args, dict)]
    values = record.values()
    for tool, args in values.items():
        said = record.said.get(tool, set())
        for name in [k for k in args if k not in said]:
            if any(e.name == tool and e.args.get(name) == args[name] for e in failed):
                del args[name]
    return values


class AskedSteps(Guard):
    def before_tool(self, d: Deps, run: RunContext, call: dict[str, Any]) -> Decision:
        record, step = run.record, d.domain.step_of(call["name"])
        if record is None or step is None or not record.steps or step.id in record.steps:
            return None
        for asked in (s for s in d.domain.steps() if s.id in record.steps):
            if step.id in asked.replaces and not set(asked.tools) & done_tools(run):
                return Refuse(
                    f"not run: the request asks for {asked.id}, and {asked.tools[0]} does "
                    f"{step.id} itself. Call {asked.tools[0]} now"
                )
        if step.report and (step.id != "plot" or record.plot):
            return None  # it changes nothing: it reports on what is there
        if not (done := finished(d, run, record)):
            if refused := only_declined(d, run, record):
                return Refuse(
                    f"not run: the request asks only for {refused}, which was not approved. "
                    "Answer now, saying that it did not run"
                )
            return None  # the asked steps may need it first
        return Refuse(
            f"not run: the request does not ask for {call['name']}, and every step it asks "
            f"for ({done}) is done. Answer now from the results above, or call a tool the "
            "request asks for"
        )

    def after_round(
        self, d: Deps, run: RunContext, entries: list[LedgerEntry], at_limit: bool
    ) -> str:
        record = run.record
        if record is None or not record.steps or not entries:
            return ""
        if record.web and not run.ledger.sources:
            return ""  # a search is asked for too, and none found anything yet
        if not (done := finished(d, run, record)):
            refused = only_declined(d, run, record)
            return f"what the request asks for ({refused}) was not approved: answering" if refused else ""  # fmt: skip
        if at_limit:
            return f"every step the request asks for is done ({done})"
        # a round that only re-ran, failed, or read what is there (a listing, the study's
        # state) after the last asked step adds nothing the answer needs: the results are in
        if not all(adds_nothing(e, run) or unasked_report(d, e, record) for e in entries):
            return ""
        names = ", ".join(sorted({e.name for e in entries}))
        how = "ran nothing new" if all(adds_nothing(e, run) for e in entries) else "only read what is there"  # fmt: skip
        return f"every step the request asks for is done ({done}), and this round {how} ({names}): answering"  # fmt: skip

    def closing(self, d: Deps, run: RunContext) -> list[dict[str, Any]]:
        record = run.record
        if record is None or run.learning.get("closed"):
            return []
        names = d.domain.closing(open_steps(d, run, record), _facts(d), done_tools(run))
        offered = d.bound_llm.offered()
        values = record.values()
        calls = [
            {
                "name": n,
                "args": completed(d, n, dict(values.get(n) or {})),
                "id": f"brainchat_close_{i}",
            }  # fmt: skip
            for i, n in enumerate(names, 1)
            if n in offered
        ]
        run.learning["closed"] = bool(calls)  # once per run, when there was a call to make
        return calls

    def stopped(self, d: Deps, run: RunContext) -> str | None:
        record = run.record
        if record is None or not (record.steps or record.web) or run.reminded:
            return None
        missing = not_done(d, run, record)
        if record.web and not searched(d, run):
            # a search asked for, none made
            missing += sorted(web_tools(d) & set(d.runner.tools))[:1]
        if not missing or run.remaining() <= 0:
            return None  # the time left is the answer's
        run.reminded = True
        step = d.domain.next_call(
            open_steps(d, run, record), _facts(d), done_tools(run), record.values()
        )
        call = f" Call {step} now, with arguments from the results above;" if step else ""
        return (
            f"(Not done yet: the request also asks for {', '.join(missing)}, and no call of "
            f"{'it' if len(missing) == 1 else 'them'} has succeeded.{call} if it cannot be done, "
            "say why in one sentence.)"
        )


class UserValues(Guard):
    def before_tool(self, d: Deps, run: RunContext, call: dict[str, Any]) -> Decision:
        record, args = run.record, call.get("args")
        if record is None or call.get("invalid") or not isinstance(args, dict):
            return None
        key = call_signature(call["name"], args)
        if key in run.suggested:
            return None  # sent back once already: the model chose to send it as it is
        # held to the values the request writes; a choice the model read from other words
        # guides the next-step note, but is not the user's to hold a call to
        fixed = record.written_values(call["name"])
        results = [(e.name, e.result) for e in run.ledger.successful()]
        found = conflict(d, call["name"], args, fixed) or d.domain.second_look(
            call["name"], args, fixed, record.positions, results
        )
        if found is None:
            return None
        run.suggested.add(key)
        args = completed(d, call["name"], found.args)
        run.suggestion = {"name": call["name"], "arguments": args}
        return Suggest(args, found.why)


class RoundBudget(Guard):
    def limits(self, d: Deps, run: RunContext, limits: AgentLimits) -> AgentLimits:
        record = run.record
        if record is None or not record.steps:
            return limits
        need = (
            d.domain.rounds(open_steps(d, run, record), run.facts_at_start) + 2
        )  # the listing, one more
        # a small model's corrected call is a model call more: room for three of them
        calls = max(limits.max_iterations, need + 3)
        return replace(
            limits, max_auto_rounds=max(limits.max_auto_rounds, need), max_iterations=calls
        )


GUIDED = Guards(
    (
        StateOffer(),
        FixedArguments(),
        Opening(),
        Examples(),
        NextStep(),
        AskedSteps(),
        UserValues(),
        RoundBudget(),
    )
)


def _pending(run: RunContext) -> dict[str, Any] | None:
    """The latest suggested call, while no call of its tool has run since it was made."""
    pending = run.suggestion
    if pending is None:
        return None
    entries = run.ledger.entries
    sent_back = max((i for i, e in enumerate(entries) if e.name == pending["name"] and e.status == "refused"), default=-1)  # fmt: skip
    ran = any(e.name == pending["name"] and e.status in ("success", "error") for e in entries[sent_back + 1 :])  # fmt: skip
    return None if ran else pending
