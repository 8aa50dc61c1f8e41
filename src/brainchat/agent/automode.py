"""Calls written as text, in every mode, and `auto` tool calling that learns per model.

A small model served without native tool calls answers "as an AI language model I cannot access
files" to a request about the user's files, or writes its calls as JSON text. Here:

- every mode reads call-shaped text (`textcalls.read_calls`): valid calls run, invalid ones go
  back to the model as repair hints naming the tools and allowed values;
- in `auto`, a reply that misses (no call although the request needs tools, as the request's
  record says, or calls written as text) makes brainchat ask the same request once more in
  prompt mode; when that reply calls a tool, or the text calls were read, the model is switched
  to prompt mode for the rest of the run and later runs, the user reads a notice, and the choice
  is remembered for the model (agent/habits.py). A mode the user set (native, prompt) is never
  changed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, SystemMessage

from brainchat.agent import habits, textcalls
from brainchat.agent.budget import fit_run
from brainchat.agent.toolsprompt import fitted_tools_prompt
from brainchat.events import Notice, emit
from brainchat.modelclient import ModelClient
from brainchat.settings import ModelSpec, ToolCalling

if TYPE_CHECKING:
    from brainchat.agent.context import Deps
    from brainchat.agent.state import RunContext


@dataclass(frozen=True)
class Asked:
    """The request decide sent: its system prompt (without tools described) and the run's
    messages before fitting, for the one prompt-mode try."""

    system: BaseMessage
    messages: list[BaseMessage]


SWITCH_HINT = (
    'To choose yourself, set "tool_calling" to "native" or "prompt" in this model\'s spec or in '
    "the settings panel: a mode you set is never changed."
)


def learned(spec: ModelSpec | None, tool_calling: ToolCalling) -> ToolCalling:
    """The tool calling an agent is built with: a model set to `auto` that was switched to
    prompt mode before (this or an earlier app process) starts in prompt mode."""
    if tool_calling == "auto" and habits.recall(spec).get("tool_calling") == "prompt":
        return "prompt"
    return tool_calling


async def text_calls(
    d: Deps,
    ctx: RunContext,
    ask: Asked,
    thought: str,
    round_: int,
) -> tuple[str, list[dict[str, Any]], str]:
    """(the reply's text, its calls, the text shown as the thought) for a reply with no native
    call: the calls its text holds, after one prompt-mode try in `auto` when it missed."""
    found = read(d, thought, round_)
    valid = [c for c in found.calls if not c.get("invalid")]
    if d.tool_calling == "auto" and not valid and not ctx.learning.get("auto_tried"):
        missed = bool(found.calls) or (not ctx.ledger.entries and await _needs_tools(d, ctx))
        if missed:
            ctx.learning["auto_tried"] = True
            trial = await _ask_in_prompt_mode(d, ctx, ask, round_)
            if trial is not None and any(not c.get("invalid") for c in trial[1].calls):
                switch(d, _why(found, thought), trial[1].calls)
                return trial[0], trial[1].calls, trial[1].text
            _trial_failed(d, trial is not None)
    elif d.tool_calling == "auto" and valid:
        switch(d, "wrote its tool calls as text instead of calling tools natively", valid)
    elif d.tool_calling == "native" and found.calls and not ctx.learning.get("native_told"):
        ctx.learning["native_told"] = True
        _native_notice(d, found.calls)
    return thought, found.calls, found.text


async def _needs_tools(d: Deps, ctx: RunContext) -> bool:
    """The request needs a tool, by its record (made now, once, if the run has none yet)."""
    from brainchat.agent.understand import record_of

    made = await record_of(d, ctx)
    return made is not None and made.needs_tools


def read(d: Deps, text: str, round_: int) -> textcalls.TextCalls:
    """The calls `text` holds, checked against the tools offered (a hidden one is still known)."""
    offered = [s for _, s in d.bound_llm.pairs]  # every tool's schema: hidden ones run too
    schemas = {s["function"]["name"]: s["function"].get("parameters") or {} for s in offered}
    for name in d.runner.tools:
        schemas.setdefault(name, {})
    found = textcalls.read_calls(text, schemas, strict=d.tool_calling == "prompt", round_=round_)
    for call in found.calls:
        if call.get("renamed"):  # a small model calls `epoch`, `split`, `train`
            emit(
                Notice(
                    kind="info",
                    message=f"The model called '{call['renamed']}', which is no tool; brainchat "
                    f"ran {call['name']}, the only tool of that name, with the same arguments.",
                )
            )
    return found


def switch(d: Deps, why: str, calls: list[dict[str, Any]]) -> None:
    """Prompt mode for the rest of this agent's runs, remembered for the model, said once."""
    d.tool_calling = "prompt"
    d.bound_llm.plain = True  # no `tools` in the request any more; described in the prompt
    spec = d.specs.get("function_call")
    habits.remember(spec, tool_calling="prompt")
    name = d.names["function_call"]
    where = f" at {spec.base_url}" if spec is not None and spec.base_url else ""
    names = ", ".join(dict.fromkeys(str(c["name"]) for c in calls if not c.get("invalid")))
    emit(
        Notice(
            kind="tool_calling",
            message=f"{name} {why}; with the tools described in its prompt it called {names}. "
            f"brainchat now uses prompt tool calling for {name}{where}, in this and later "
            "conversations.",
            hint=SWITCH_HINT,
        )
    )


def _why(found: textcalls.TextCalls, thought: str) -> str:
    if found.calls:
        return "wrote tool calls as text that did not fit the tools"
    said = " ".join(thought.split())
    said = f' ("{said[:80]}{"…" if len(said) > 80 else ""}")' if said else ""
    return f"answered without calling a tool although the request needs one{said}"


def _trial_failed(d: Deps, answered: bool) -> None:
    name = d.names["function_call"]
    emit(
        Notice(
            kind="tool_calling",
            message=f"{name} called no tool although the request needs one; asked once more "
            "with the tools described in its prompt, it "
            + ("still called none" if answered else "did not answer")
            + ". Its tool calling stays auto.",
            hint="Pick a model that calls tools (a larger instruct model), or set "
            '"tool_calling": "prompt" for this one.',
        )
    )


def _native_notice(d: Deps, calls: list[dict[str, Any]]) -> None:
    name = d.names["function_call"]
    bad = sum(1 for c in calls if c.get("invalid"))
    emit(
        Notice(
            kind="tool_calling",
            message=f"{name} wrote {len(calls)} tool call(s) as text instead of calling tools "
            f"natively; brainchat read them from the text ({len(calls) - bad} valid"
            + (f", {bad} sent back with a repair hint" if bad else "")
            + ").",
            hint='Set "tool_calling": "prompt" (or "auto") for this model in its spec or the '
            "settings panel, so it is asked the way it writes calls.",
        )
    )


async def _ask_in_prompt_mode(
    d: Deps, ctx: RunContext, ask: Asked, round_: int
) -> tuple[str, textcalls.TextCalls] | None:
    """The same request once more, prompt mode's way (tools in the prompt, none on the wire):
    (its text, the calls read from it), or None when it cannot be sent or fails."""
    schemas = d.bound_llm.schemas()
    budget = replace(d.budget("function_call"), tools=0)
    run, base = ask.messages, str(ask.system.content)
    system = SystemMessage(
        f"{base}\n\n{fitted_tools_prompt(schemas, base, budget.tokens, d.domain.worked_call())}"
    )
    fitted = fit_run(system, ctx.history, run, budget, shape=textcalls.as_plain)
    if not fitted.fits or ctx.remaining() <= 0:
        return None
    spec, name = d.specs.get("function_call"), d.names["function_call"]
    client = ModelClient(d.bound_llm.llm, spec, name)  # the model without tools bound
    try:
        reply = await asyncio.wait_for(
            client.ask(textcalls.as_plain(fitted.messages), [ctx.callback], round_=round_),
            max(ctx.remaining(), 0.1),
        )
    except Exception:  # noqa: BLE001 - the try failed: the first reply stands
        return None
    text = reply.content if isinstance(reply.content, str) else ""
    schema_map = {s["function"]["name"]: s["function"].get("parameters") or {} for s in schemas}
    for tool in d.runner.tools:
        schema_map.setdefault(tool, {})
    return text, textcalls.read_calls(text, schema_map, strict=True, round_=round_)
