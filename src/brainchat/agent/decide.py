"""The decide node: the function-call model's next step (tool calls, or nothing more to do)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langgraph.runtime import Runtime

from brainchat import llm
from brainchat.agent import automode, habits, made, pace, textcalls
from brainchat.agent.budget import Budget, Fitted, cut_text, fit_run, message_tokens
from brainchat.agent.context import AgentContext, AgentState, Deps, no_room
from brainchat.agent.exits import Exit
from brainchat.agent.guards import NONE, in_force
from brainchat.agent.plan_run import PlanRun
from brainchat.agent.state import RunContext
from brainchat.agent.toolsprompt import done_text, fitted_tools_prompt, reply_schema
from brainchat.events import Evaluation, Notice, ThinkingDone, emit
from brainchat.llm import describe_error
from brainchat.modelclient import ModelClient, ModelTimeout
from brainchat.prompts import load_prompt
from brainchat.tools import mcp_instructions
from brainchat.usage import count_message_tokens

NOTE_TOKENS = 400  # the evaluation note beside a round: gists and short errors, never a dump


def system_prompt(d: Deps, guide: str = "") -> SystemMessage:
    """The function-call model's instructions: the prompt, the guards' guide (worked examples),
    the study, and in prompt mode the tools offered this round."""
    # a guided model reads a short prompt of its own, unless the user chose a variant
    variant = d.prompt_variants.get("function_call") or ("guided" if d.profile.guided else None)
    prompt = load_prompt("function_call", variant)
    study = "" if study_last(d) else d.study_text()
    # MCP servers' initialize instructions, bounded by the budget
    mcp = mcp_instructions.prompt_part(d.runner.tools.values(), d.budget("function_call").tokens)
    extra = "".join(f"\n\n{part}" for part in (mcp, guide) if part)
    if d.tool_calling == "prompt" and (schemas := d.bound_llm.schemas()):
        # The tools offered this round are described. The study, which changes with every
        # step, goes after the tools, so a server's prompt cache (llama.cpp) reuses the prompt
        # and the tools of the last round instead of reading them again.
        text = prompt.replace("{study}", "").rstrip() + extra
        room = d.budget("function_call").tokens  # the worked call fits, or it goes
        worked, held = d.domain.worked_call(), constrained(d)
        tools = fitted_tools_prompt(schemas, f"{text}\n\n{study}", room, worked, constrained=held)
        return SystemMessage(f"{text}\n\n{tools}" + (f"\n\n{study}" if study else ""))
    return SystemMessage(prompt.replace("{study}", study) + extra)


def study_last(d: Deps) -> bool:
    """A guided prompt-mode model reads the study in a note after the run's messages, not in its
    system prompt: everything before the newest result is then the same request to request, and
    a server's prompt cache (llama.cpp) reads only what is new."""
    return d.tool_calling == "prompt" and d.profile.guided


async def decide(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Ask the function-call model for its next step: calls go to act, none to the answer."""
    d, run = runtime.context.deps, runtime.context.run
    round_ = state.get("round", 0) + 1
    guards = in_force(d)
    # what this request offers: the session's rule, narrowed by the guards for this run
    d.bound_llm.narrow = None if guards is NONE else (lambda names: guards.offer(d, run, names))
    d.bound_llm.shape = None if guards is NONE else (lambda schemas: guards.shape(d, run, schemas))
    pending = _run_messages(d, run, state)
    if round_ == 1 and (opening := in_force(d).opening(d, run)):
        return made.opening(state, round_, opening)
    messages = _request(d, run, pending)
    if isinstance(messages, Exit):
        return messages.take(round_)
    system = messages[0]
    started = time.perf_counter()
    try:
        reply = await asyncio.wait_for(_ask(d, run, messages, round_), max(run.remaining(), 0.1))
    except ModelTimeout as exc:
        return _model_failed(d, run, exc.error).take(round_)
    except TimeoutError:
        limit = d.limits.max_execution_time
        return Exit(
            "timeout",
            f"The agent hit its time limit ({limit:g} s) and answers from what it gathered.",
            "Raise the max execution time in the settings, or ask a narrower question.",
            why=f"time limit of {limit:g} s reached while the model was thinking",
        ).take(round_)
    except Exception as exc:  # noqa: BLE001 - API failures stop the run with a message
        return _model_failed(d, run, exc).take(round_)
    pace.keep_for_answer(d, run)  # the answer's time, measured anew
    if d.told is not None:  # the model has read the study's notes: said once, by this request
        d.told(str(system.content) + (d.study_text() if study_last(d) else ""))
    if llm.cut_at_limit(reply):
        told, hint = llm.cut_notice_text(d.specs.get("function_call"), d.names["function_call"])
        emit(Notice(kind="info", message=told, hint=hint))
    asked = automode.Asked(system, pending)  # auto's one prompt-mode try asks this again
    calls, thought = await _calls(d, run, reply, round_, started, asked)
    calls, why = _empty_again(run, calls)
    ai = AIMessage(
        content=thought,
        tool_calls=[
            {"name": c["name"], "args": c.get("args") or {}, "id": c.get("id"), "type": "tool_call"}
            for c in calls
        ],
    )
    if not calls:
        if not why and (closing := in_force(d).closing(d, run)):
            return made.closing(state, round_, ai, closing)
        if not why and (again := made.remind(d, run, state, round_, ai)) is not None:
            return again
        why = why or "the model needs no (more) tools"
        emit(Evaluation(verdict="answer", reason=why, round=round_))
        return {"round": round_, "messages": [*state["messages"], ai], "last_verdict": None}
    return {
        "round": round_,
        "messages": [*state["messages"], ai],
        "pending_calls": calls,
        "verdict_note": None,
    }


EMPTY_BLOCK = "your ```json block was empty"  # textcalls' hint for "```json\n```"


def _empty_again(run: RunContext, calls: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """An empty ```json block right after the hint about one: the model has no call to make,
    and the run goes to the answer (not to a loop stop, whose note an answer model may echo).
    The first empty block still gets the hint: a small model writes one with a pipeline half
    done too."""
    empty = [c for c in calls if str(c.get("invalid") or "").startswith(EMPTY_BLOCK)]
    if not calls or len(empty) < len(calls) or not run.ledger.entries:
        return calls, ""
    last = max(e.round for e in run.ledger.entries)
    before = [e for e in run.ledger.entries if e.round == last]
    if not all(str(e.error or "").startswith(EMPTY_BLOCK) for e in before):
        return calls, ""
    return [], "the model wrote an empty call block again after the hint: it has no more calls"


def _run_messages(d: Deps, run: RunContext, state: AgentState) -> list[BaseMessage]:
    """The run's messages with the last evaluation's note, the guards' notes and the plan's
    progress."""
    messages = list(state["messages"])
    if note := state.get("verdict_note"):
        # The note repeats tool errors and gists: bounded, so it never crowds out the run.
        note = cut_text(note, NOTE_TOKENS)
        messages.append(HumanMessage(f"(Evaluation of your last tool round: {note}.)"))
    if study_last(d) and (study := d.study_text()):
        messages.append(HumanMessage(f"({study})"))
    messages += [HumanMessage(note) for note in in_force(d).notes(d, run)]
    plan = state.get("plan")
    if plan is not None and (progress := PlanRun(d).prompt(plan)):
        messages.append(HumanMessage(progress))
    return messages


def _request(d: Deps, run: RunContext, messages: list[BaseMessage]) -> list[BaseMessage] | Exit:
    """This round's request fitted to the window (system prompt first), or why none is sent."""
    system, budget = system_prompt(d, in_force(d).guide(d, run)), d.budget("function_call")
    if (full := _no_room(d, run, system, budget)) is not None:
        return full
    plain = textcalls.as_plain if d.tool_calling == "prompt" else None
    fitted = fit_run(system, run.history, messages, budget, shape=plain)
    if not fitted.fits:
        return _context_full(d, run, fitted.tokens, budget)
    _tell_fitted(d, run, fitted)
    return plain(fitted.messages) if plain is not None else fitted.messages


def constrained(d: Deps) -> bool:
    """A guided prompt-mode model's replies are held to a JSON schema (grammar-constrained),
    unless its spec says no or its server refused a schema before (remembered per model)."""
    spec = d.specs.get("function_call")
    if d.tool_calling != "prompt" or not d.profile.guided:
        return False
    if spec is not None and not spec.response_format:
        return False
    return habits.recall(spec).get("reply_format") != "text"


async def _ask(d: Deps, run: RunContext, messages: list[BaseMessage], round_: int) -> BaseMessage:
    spec, name = d.specs.get("function_call"), d.names["function_call"]
    if not constrained(d):
        return await ModelClient(d.bound_llm(), spec, name).ask(messages, [run.callback], round_=round_)  # fmt: skip
    import openai

    schema = reply_schema(d.bound_llm.schemas())
    fmt = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    held = ModelClient(d.bound_llm().bind(response_format=fmt), spec, name)
    try:
        return await held.ask(messages, [run.callback], round_=round_, stream=False)
    except openai.BadRequestError as exc:
        habits.remember(spec, reply_format="text")  # this server takes no schema: text from now on
        emit(
            Notice(
                kind="tool_calling",
                message=f"{name} refused a JSON schema for its reply ({describe_error(exc, spec, name=name)}); "
                "its calls are read from its text from now on.",
                hint='Set "response_format": false in its spec to skip the first try.',
            )
        )
    messages = [system_prompt(d, in_force(d).guide(d, run)), *messages[1:]]  # the text form
    return await ModelClient(d.bound_llm(), spec, name).ask(messages, [run.callback], round_=round_)


async def _calls(
    d: Deps,
    run: RunContext,
    reply: BaseMessage,
    round_: int,
    started: float,
    asked: automode.Asked,
) -> tuple[list[dict[str, Any]], str]:
    """The reply's tool calls (broken ones flagged for the model) and its text; says it."""
    calls = [dict(c) for c in getattr(reply, "tool_calls", [])]
    if isinstance(reply, AIMessageChunk):
        _flag_broken_json(calls, reply)
    for bad in getattr(reply, "invalid_tool_calls", []):
        calls.append(
            {
                "name": bad.get("name") or "?",
                "args": {},
                "id": bad.get("id"),
                "invalid": f"the arguments were not valid JSON: {str(bad.get('args'))[:200]}",
            }
        )
    thought = reply.content if isinstance(reply.content, str) else ""
    if (done := done_text(thought)) is not None:  # a constrained reply that calls nothing
        thought = done
    reasoning = str(reply.additional_kwargs.get("reasoning_content") or "")
    shown = thought
    if not calls:  # calls written as text, every mode; auto learns (automode.py)
        thought, calls, shown = await automode.text_calls(d, run, asked, thought, round_)
    emit(
        ThinkingDone(
            role="function_call",
            model=d.names["function_call"],
            text="\n\n".join(t for t in (reasoning.strip(), shown.strip()) if t),
            round=round_,
            duration=round(time.perf_counter() - started, 4),
            tool_calls=[str(c["name"]) for c in calls],
        )
    )
    return calls, thought


def _no_room(d: Deps, run: RunContext, system: SystemMessage, budget: Budget) -> Exit | None:
    """A round whose offered tools fill the window is not sent (the first round is checked
    before the run; a later one may offer more tools): answer from the results, or stop."""
    if message_tokens([system], budget.tokens - 16) + 16 <= budget.tokens:
        return None
    refused = no_room(d, "function_call", count_message_tokens([system]))
    if refused is None:
        return None
    message, hint = refused
    if not run.ledger.successful():
        return Exit("error", message, hint)
    # the answer says the window filled up, not that the model failed
    hint += " The answer below is written from the tool results gathered so far."
    return Exit("context_full", message, hint, kind="error")


def _tell_fitted(d: Deps, run: RunContext, fitted: Fitted) -> None:
    """Say what was really done to make the request fit, once per new kind of reduction
    (a later round may cut more than the first one did: the counts are of this request)."""
    done = {
        "digested": f"{fitted.digested} older tool result(s) were shortened to digests",
        "shortened": f"the text of {fitted.shortened} earlier reply(ies) or note(s) was cut "
        "to its head and tail",
        "dropped": f"{fitted.dropped} earlier message(s) of the conversation were left out",
    }
    counts = {"digested": fitted.digested, "shortened": fitted.shortened}
    new = [k for k, n in counts.items() if n and k not in run.fit_told]
    if not new:
        return
    run.fit_told.update(new)
    parts = [done[k] for k, n in counts.items() if n]
    if fitted.dropped:
        parts.append(done["dropped"])
    said = "; ".join(parts) + f" so the request fits {d.names['function_call']}'s "
    emit(Notice(kind="info", message=said[0].upper() + said[1:] + "context window."))


def _context_full(d: Deps, run: RunContext, tokens: int, budget: Budget) -> Exit:
    """Even cut to the bone the next request exceeds the window: never send it.

    With results gathered, the answer is written from them; with none, the run stops.
    """
    why = (
        f"the next request to {d.names['function_call']} needs about {tokens:,} tokens, more "
        f"than the {budget.tokens:,} its context window of {budget.window:,} tokens leaves for "
        f"input (after {budget.reserve:,} kept for the reply"
        + (f" and {budget.tools:,} for the tool definitions" if budget.tools else "")
        + ")"
    )
    if run.ledger.successful():
        return Exit(
            "context_full",
            f"The run stopped gathering: {why}. The answer is written from the tool results "
            "gathered so far.",
            "Ask a narrower question, or choose a function-call model with a larger context "
            "window.",
            why=why,
        )
    return Exit(
        "error",
        f"Nothing was sent: {why}.",
        "Shorten the message, or choose a function-call model with a larger context window.",
        why=why,
    )


def _model_failed(d: Deps, run: RunContext, exc: BaseException) -> Exit:
    """The function-call model failed: answer from what was gathered, or stop if nothing was."""
    message = describe_error(
        exc,
        d.specs.get("function_call"),
        name=d.names["function_call"],
        base_url=base_url(d.function_call_llm),
    )
    if run.ledger.successful():
        hint = "The answer below is written from the tool results gathered before the failure."
        return Exit("model_error", message, hint, kind="error")
    return Exit("error", message, "Nothing was gathered yet; send the message again in a moment.")


def _flag_broken_json(calls: list[dict[str, Any]], reply: AIMessageChunk) -> None:
    """Streaming parsers forgive broken JSON (it becomes {}); the model should hear it was broken."""
    raw = {c.get("id"): c.get("args") or "" for c in reply.tool_call_chunks}
    for call in calls:
        args = raw.get(call.get("id"), "")
        if not args.strip():
            continue
        try:
            json.loads(args)
        except json.JSONDecodeError:
            call["invalid"] = f"the arguments were not valid JSON: {args[:200]}"


def base_url(model: Any) -> str | None:
    """The model's base URL when it has one (ChatOpenAI's `openai_api_base`), for error text."""
    return getattr(model, "openai_api_base", None) or getattr(model, "base_url", None)
