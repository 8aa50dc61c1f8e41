"""The decide node: the function-call model's next step (tool calls, or nothing more to do)."""

from __future__ import annotations

import asyncio
import json
import re
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
from brainchat.agent import automode, pace, remind, textcalls
from brainchat.agent.asked import FILTER_TOOLS, asks_crossval, names_filtering
from brainchat.agent.budget import Budget, Fitted, cut_text, fit_run, message_tokens
from brainchat.agent.context import AgentContext, AgentState, Deps, no_room
from brainchat.agent.exits import Exit
from brainchat.agent.plan_run import PlanRun
from brainchat.agent.state import RunContext
from brainchat.events import Evaluation, Notice, ThinkingDone, emit
from brainchat.llm import describe_error
from brainchat.modelclient import ModelClient, ModelTimeout
from brainchat.prompts import load_prompt
from brainchat.tools import mcp_instructions  # #25 hook (mcpclient)
from brainchat.usage import count_message_tokens

NOTE_TOKENS = 400  # the evaluation note beside a round: gists and short errors, never a dump


def system_prompt(d: Deps) -> SystemMessage:
    """The function-call model's instructions: the prompt, the study, and (prompt mode) tools."""
    prompt = load_prompt("function_call", d.prompt_variants.get("function_call"))
    study = d.study_text()
    # #25 hook (mcpclient): MCP servers' initialize instructions, bounded by the budget
    mcp = mcp_instructions.prompt_part(d.runner.tools.values(), d.budget("function_call").tokens)
    extra = f"\n\n{mcp}" if mcp else ""
    if d.tool_calling == "prompt" and (schemas := [s for _, s in d.bound_llm.pairs]):
        # Every tool is described, hidden ones too (a hidden tool stays runnable): a small model
        # sees the real names and arguments of the whole pipeline from its first request, and
        # can write its steps in one reply (issue #23: it called `epoch`, `split`, `train`).
        # The study, which changes with every step, goes after the tools, which do not once data
        # is loaded: a server's prompt cache (llama.cpp) then reuses the prompt and tools of the
        # last round instead of reading ~2,500 tokens again (issue #23: 60-90 s per round on 2
        # busy cores, so the pipeline ran out of time after two steps).
        text = prompt.replace("{study}", "").rstrip() + extra
        room = d.budget("function_call").tokens  # #23 hook: the worked example fits or goes
        tools = textcalls.fitted_tools_prompt(schemas, f"{text}\n\n{study}", room)
        return SystemMessage(f"{text}\n\n{tools}" + (f"\n\n{study}" if study else ""))
    return SystemMessage(prompt.replace("{study}", study) + extra)


async def decide(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Ask the function-call model for its next step: calls go to act, none to the answer."""
    d, run = runtime.context.deps, runtime.context.run
    round_ = state.get("round", 0) + 1
    pending = _run_messages(d, run, state)
    if (listed := _list_first(d, run, state, round_)) is not None:  # #23: no guessed file name
        return listed
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
    pace.keep_for_answer(d, run)  # #23 hook: the answer's time, measured anew
    if d.told is not None:  # the model has read the study's notes: said once, by this request
        d.told(str(system.content))
    if llm.cut_at_limit(reply):
        told, hint = llm.cut_notice_text(d.specs.get("function_call"), d.names["function_call"])
        emit(Notice(kind="info", message=told, hint=hint))
    asked = automode.Asked(system, pending)  # #23: auto's one prompt-mode try asks this again
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
        if not why and (again := remind.asked_steps(d, run, state, round_, ai)) is not None:
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
    and the run goes to the answer (#23 golden run, 25 Nov: after its steps the 1.5B model wrote
    three empty blocks in a row, the loop stop ended the run, and the answer model, told of the
    loop, repeated its instructions). The first empty block still gets the hint: after a load
    and a band-pass the same model wrote one with the pipeline half done."""
    empty = [c for c in calls if str(c.get("invalid") or "").startswith(EMPTY_BLOCK)]
    if not calls or len(empty) < len(calls) or not run.ledger.entries:
        return calls, ""
    last = max(e.round for e in run.ledger.entries)
    before = [e for e in run.ledger.entries if e.round == last]
    if not all(str(e.error or "").startswith(EMPTY_BLOCK) for e in before):
        return calls, ""
    return [], "the model wrote an empty call block again after the hint: it has no more calls"


DATA_QUESTION = re.compile(
    r"\b(files?(?! ?(?:formats?|types?|extensions?))|recordings?|data ?sets?|data|load\w*|edf|"
    r"bdf|fif|subjects?|sessions?)\b",
    re.I,
)
# a question for the web, not about the folder: "Which file formats can MNE read?" was listed
# first, and the 1.5B model then loaded files instead of searching (#23 golden run)
NOT_THE_FOLDER = re.compile(r"\b(search|web|online|cite|sources?|papers?|articles?)\b", re.I)
LISTING = "list_data_files"


def _list_first(d: Deps, run: RunContext, state: AgentState, round_: int) -> AgentState | None:
    """Prompt mode, first round, no study yet, a question about the data: brainchat lists the
    data folder itself before the model's first request (issue #23: a 1.5B model's first call
    guessed `sub-01/sub-01_eeg.edf`, failed, and drifted off to web searches). The listing is a
    real call in the ledger, shown like any other; the model then picks from real names."""
    if d.tool_calling != "prompt" or round_ != 1 or run.ledger.entries:
        return None
    if LISTING not in d.bound_llm.offered() or not DATA_QUESTION.search(run.question):
        return None
    if NOT_THE_FOLDER.search(run.question):
        return None
    facts = d.facts() if d.facts is not None else {}
    if facts.get("stage", "empty") != "empty":
        return None
    emit(
        Notice(
            kind="info",
            message="brainchat listed the data folder first (list_data_files), so the model "
            "picks real file names instead of guessing them.",
        )
    )
    call = {"name": LISTING, "args": {}, "id": "brainchat_list_1"}
    ai = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
    return {
        "round": round_,
        "messages": [*state["messages"], ai],
        "pending_calls": [call],
        "verdict_note": None,
    }


CROSSVAL_STEP = {
    "loaded": "epoch_data, then cross_validate",
    **dict.fromkeys(("epoched", "split", "trained"), "cross_validate (it makes its own folds)"),
}
PIPELINE_QUESTION = re.compile(r"\b(epoch\w*|split\w*|train\w*|accuracy|evaluat\w*)\b", re.I)
NEXT_STEP = {
    "loaded": "bandpass_filter (or other preprocessing the request names), then epoch_data",
    "epoched": "split_dataset",
    "split": "train_model",
    "trained": "evaluate_model",
}


def _next_pipeline_step(d: Deps, run: RunContext, state: AgentState) -> str | None:
    """Prompt mode, a request that names pipeline steps: the study's stage and the tool that
    comes next, as a note after the run's messages (issue #23: with data loaded, the 1.5B model
    called split_dataset and evaluate_model before epoch_data, and clear_study twice)."""
    if d.tool_calling != "prompt" or d.facts is None:
        return None
    question = str(state["messages"][0].content)
    crossval = asks_crossval(question)  # its folds are cross_validate's: no split or training
    if not crossval and not (state.get("round") and PIPELINE_QUESTION.search(question)):
        return None
    facts = d.facts()
    stage = str(facts.get("stage", ""))
    done = any(e.name == "cross_validate" and e.status == "success" for e in run.ledger.entries)
    step = CROSSVAL_STEP.get(stage) if crossval and not done else None
    if step is None and (crossval or stage not in NEXT_STEP):
        return None
    if step is None and stage == "loaded" and _filtered(run, facts, question):
        step = "epoch_data"  # the preprocessing is done: the stage alone still says "loaded"
    return f"(Study stage: {stage}. The next pipeline step for this request: {step or NEXT_STEP[stage]}.)"


FILTER_OPS = ("bandpass", "notch", "reference", "ica")  # the study history's preprocessing


def _filtered(run: RunContext, facts: dict[str, Any], question: str) -> bool:
    """The loaded data needs no (more) preprocessing for this request: it names none, or some
    ran (bench pipeline run 3, 27 Nov: after the band-pass the note still said 'next:
    bandpass_filter', the 1.5B model sent it again, it was skipped, and the run ended with the
    pipeline half done)."""
    if not names_filtering(question):
        return True
    ran = {str(step.get("op")) for step in facts.get("steps", []) if isinstance(step, dict)}
    tools = {e.name for e in run.ledger.entries if e.status == "success"}
    return bool(ran & set(FILTER_OPS)) or bool(tools & set(FILTER_TOOLS))


def _run_messages(d: Deps, run: RunContext, state: AgentState) -> list[BaseMessage]:
    """The run's messages with the last evaluation's note and the plan's progress."""
    messages = list(state["messages"])
    if note := state.get("verdict_note"):
        # The note repeats tool errors and gists: bounded, so it never crowds out the run.
        note = cut_text(note, NOTE_TOKENS)
        messages.append(HumanMessage(f"(Evaluation of your last tool round: {note}.)"))
    if (step := _next_pipeline_step(d, run, state)) is not None:
        messages.append(HumanMessage(step))
    plan = state.get("plan")
    if plan is not None and (progress := PlanRun(d).prompt(plan)):
        messages.append(HumanMessage(progress))
    return messages


def _request(d: Deps, run: RunContext, messages: list[BaseMessage]) -> list[BaseMessage] | Exit:
    """This round's request fitted to the window (system prompt first), or why none is sent."""
    system, budget = system_prompt(d), d.budget("function_call")
    if (full := _no_room(d, run, system, budget)) is not None:
        return full
    plain = textcalls.as_plain if d.tool_calling == "prompt" else None
    fitted = fit_run(system, run.history, messages, budget, shape=plain)
    if not fitted.fits:
        return _context_full(d, run, fitted.tokens, budget)
    _tell_fitted(d, run, fitted)
    return plain(fitted.messages) if plain is not None else fitted.messages


async def _ask(d: Deps, run: RunContext, messages: list[BaseMessage], round_: int) -> BaseMessage:
    client = ModelClient(d.bound_llm(), d.specs.get("function_call"), d.names["function_call"])
    return await client.ask(messages, [run.callback], round_=round_)


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
    reasoning = str(reply.additional_kwargs.get("reasoning_content") or "")
    shown = thought
    if not calls:  # #23 hook: calls written as text, every mode; auto learns (automode.py)
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
