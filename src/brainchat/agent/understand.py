"""The understand node: a guided model's record of the request, made before its first step.

A minimal profile skips it (its rules read nothing of the request); a model in `auto` tool
calling makes it only when its first reply calls nothing, to tell a request that needs tools
from one that does not (agent/automode.py).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from langgraph.runtime import Runtime

from brainchat.agent import record
from brainchat.agent.budget import message_tokens
from brainchat.agent.build import retag
from brainchat.agent.context import AgentContext, AgentState, Deps
from brainchat.agent.guided import EXAMPLES
from brainchat.agent.state import RunContext
from brainchat.grounding import units

CJK = re.compile(r"[\u3400-\u9fff]")


async def understand(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Make the run's record (once); the state is unchanged: the record is the run's."""
    await record_of(runtime.context.deps, runtime.context.run)
    return {}


async def record_of(d: Deps, run: RunContext) -> record.RequestRecord | None:
    """The run's record, made on first use: the steps the domain knows and the offered tools'
    arguments, the study as it is, the last turn."""
    if run.learning.get("record_asked"):
        return run.record
    run.learning["record_asked"] = True
    run.facts_at_start = d.facts() if d.facts is not None else {}
    steps = list(d.domain.steps())
    lines = []
    for step in steps:
        tools = ", ".join(
            f"{t}({', '.join(sorted(d.tool_arguments(t)))})"
            for t in step.tools
            if t in d.runner.tools
        )
        # the step's words in the request's script beside its English line (分段 is epoch)
        words = f" ({', '.join(step.terms)})" if step.terms and CJK.search(run.question) else ""
        if tools:
            lines.append(f"- {step.id}{words}: {step.about}. Tools: {tools}")
    ids = [s.id for s in steps if any(t in d.runner.tools for t in s.tools)]
    # the most alike last, next to the request; each example's record kept by the rule the
    # model's own record is kept by, so no example shows a value its request does not fix
    examples = [
        (ex.request, _example(d, ex.request, ex.record))
        for ex in reversed(d.domain.examples(run.question, EXAMPLES))
        if ex.record is not None
    ]
    request = record.messages(
        run.question, run.history, "\n".join(lines) or "(none)", d.study_text(), examples
    )
    name = d.names["function_call"]
    budget = d.budgets["function_call"]
    if message_tokens(request, budget.tokens) > budget.tokens:
        why = "the request is too long for the model's window beside the record's instructions"
        record.unmade(name, why)
        return None
    # its own row in the run's usage: the record is no function-call round
    run.usage.names["record"] = name
    if (spec := d.specs.get("function_call")) is not None:
        run.usage.specs = {**run.usage.specs, "record": spec}
    made = await record.understand(
        retag(d.function_call_llm, "record"),
        d.specs.get("function_call"),
        name,
        request,
        ids,
        sorted(d.runner.tools),
        [run.callback],
        functools.partial(_kept, d, run.question),
    )
    run.record = made
    return made


def _example(d: Deps, request: str, made: dict[str, Any]) -> dict[str, Any]:
    """A worked example's record as the model is shown it: its language, and only the values
    its request fixes."""
    language = "zh" if CJK.search(request) else "en"
    example = record.RequestRecord.model_validate({**made, "language": language})
    return _kept(d, request, example).model_dump()


def _kept(d: Deps, question: str, made: record.RequestRecord) -> record.RequestRecord:
    """The record with only the values the user fixed (see `_fixed_by_user`), typed as their
    arguments take them, which of them the request writes, and the steps of their tools."""
    kept: dict[str, dict[str, Any]] = {}
    said: dict[str, set[str]] = {}
    for tool, args in made.fixed.items():
        for k, v in args.items():
            how = _fixed_by_user(d, tool, k, v, question)
            if how is None:
                continue
            kept.setdefault(tool, {})[k] = _as_typed(v, d.tool_arguments(tool).get(k) or {})
            if how == "written":
                said.setdefault(tool, set()).add(k)
    made.fixed, made.said = kept, said
    # a value the request writes for a tool asks for that tool's step, whether or not the
    # record lists it ("with 20 permutations" asks for a cross-validation); a choice the model
    # read from other words does not: it guides a step the record asks for, and a small model
    # fills in choices nobody made (`device: "cuda"`), which would add a training to a request
    # for a band-pass
    for step in d.domain.steps():
        if set(step.tools) & set(said) and step.id not in made.steps:
            made.steps.append(step.id)
    return made


def _fixed_by_user(d: Deps, tool: str, name: str, value: Any, question: str) -> str | None:
    """Whether a value the record says the user fixed is the user's: "written" when the request
    writes it ("8-30 Hz", "split by trial"); "chosen" when it is a choice among a tool's allowed
    values (or a list of them) other than its default, which the request may say in other words
    ("a person never seen" is protocol cross_subject); None for anything else the request does
    not write (a number, a name, a default): a small model filling in arguments of its own
    (epochs 100, files "file1"). A text holding a number ("8") counts as the number its
    argument takes."""
    prop = d.tool_arguments(tool).get(name)
    if prop is None or isinstance(value, bool) or value is None:
        return None
    if not _fits(_as_typed(value, prop), prop):
        return None  # no value the tool takes ("files": "0, 1" for a list of names)
    if record.written(value, question, units.unit_of(_description(prop))):
        return "written"
    options = [prop, prop.get("items") or {}, *prop.get("anyOf", [])]
    choice = any(isinstance(o, dict) and ("enum" in o or "const" in o) for o in options)
    return "chosen" if choice and prop.get("default") != value else None


def _description(prop: dict[str, Any]) -> str:
    """An argument's description, with its items' for a list (where a unit is named)."""
    items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
    return " ".join(str(p.get("description") or "") for p in (prop, items) if p)


def _as_typed(value: Any, prop: dict[str, Any]) -> Any:
    """A number written as text ("8") as the number an argument of number type takes."""
    kinds = {str(o.get("type")) for o in prop.get("anyOf", [prop]) if isinstance(o, dict)}
    if isinstance(value, str) and kinds & {"number", "integer"}:
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "integer" in kinds else number
    return value


def _fits(value: Any, prop: dict[str, Any]) -> bool:
    """`value` is one the argument's JSON schema takes."""
    import jsonschema

    try:
        jsonschema.validate(value, prop)
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        return True  # a schema we cannot read: the tool checks its own arguments
    return True
