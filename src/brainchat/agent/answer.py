"""The answer node: the answer model writes from what the run really gathered, checked after."""

from __future__ import annotations

import asyncio
import re
import time

from langgraph.runtime import Runtime

from brainchat import grounding, llm
from brainchat.agent import echo, evidence, pace
from brainchat.agent.answer_input import LIMIT_STOPS, NOTHING, answer_messages, no_tools_line
from brainchat.agent.context import AgentContext, AgentState, Deps
from brainchat.agent.decide import base_url
from brainchat.agent.exits import Exit
from brainchat.agent.plan_run import PlanRun
from brainchat.agent.state import RunContext
from brainchat.events import AnswerChecked, Citations, ModelSwitch, Notice, emit
from brainchat.grounding import attribution
from brainchat.llm import describe_error
from brainchat.modelclient import ModelClient, Streamed
from brainchat.prompts import load_prompt

CITATION = re.compile(r"\[(\d{1,3})\]")


async def answer(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Write the answer from the ledger's results; a failure keeps what arrived."""
    d, run = runtime.context.deps, runtime.context.run
    for entry in run.ledger.pending():
        entry.finish("error", error="never received a result")
        emit(
            Notice(
                kind="error",
                message=f"The call to {entry.name} never returned a result; it is left out of the answer.",
            )
        )
    name, stop = d.names["answer"], state.get("stop_reason")
    _switch(d, name, stop, state.get("last_verdict"))
    messages = answer_messages(d, run, state.get("plan"), stop)
    if isinstance(messages, str):  # said already: nothing fits
        return {"answer": "", "stop_reason": "error", "error": messages}
    if (facts := pace.facts_instead(d, run)) is not None:  # too little time left to write
        return facts
    left = run.answer_remaining()
    spec, out = d.specs.get("answer"), Streamed(stop_at=time.perf_counter() + left)
    deadline = asyncio.timeout(left)
    try:
        async with deadline:
            await ModelClient(d.answer_llm, spec, name).text(messages, [run.callback], out)
    except TimeoutError as exc:
        if not deadline.expired():  # the model's own timeout, not the run's limit
            return _failed(d, run, exc, out)
        return _out_of_time(d, run, name, out)
    except Exception as exc:  # noqa: BLE001
        # The HTTP stack may turn the limit's cancellation into its own error (a closed
        # stream): once the limit has fired, the limit is what ended the answer.
        return _out_of_time(d, run, name, out) if deadline.expired() else _failed(d, run, exc, out)
    finally:
        if run.first_answer_token is None:
            run.first_answer_token = out.first_token
    if out.stopped or deadline.expired():  # read to the limit, or its cancellation swallowed
        return _out_of_time(d, run, name, out)
    pace.remember_speed(d, run)  # for the next runs' answer reserve
    if out.repeated is None and out.cut:
        told, hint = llm.cut_notice_text(spec, name)
        emit(Notice(kind="info", message=told, hint=hint))
    return {"answer": _checked(d, run, state, out.text)}


def _out_of_time(d: Deps, run: RunContext, name: str, out: Streamed) -> AgentState:
    """The run's time limit ended the answer: what arrived is kept and the user is told."""
    limit = d.limits.max_execution_time
    kept = "; the partial answer above is kept." if out.parts else " and no answer arrived."
    text = "".join(out.parts)
    if not out.parts and run.ledger.successful():  # never an empty answer after results
        kept = (
            " and no answer arrived; the answer is brainchat's own list of what the run gathered."
        )
        text = echo.facts_answer(run.ledger, f"{name} wrote no answer within the time limit")
    exit_ = Exit(
        "timeout",
        f"The time limit of {limit:g} s ran out while the answer was being written{kept}",
        "Raise the max execution time in the settings, or ask a narrower question.",
    )
    return exit_.ended(text)


def _switch(d: Deps, name: str, stop: str | None, verdict: str | None) -> None:
    """Say that the answer model takes over, and why."""
    same = name == d.names["function_call"]
    why = (
        f"the tool loop stopped ({stop.replace('_', ' ')})"
        if stop
        else "the evaluation judged the results enough"
        if verdict == "enough"
        else "the function-call model finished gathering"
    )
    reason = why + ("; the same model writes the answer" if same else "")
    emit(ModelSwitch(role="answer", model=name, reason=reason))


def _checked(d: Deps, run: RunContext, state: AgentState, text: str) -> str:
    """The answer after the plan check, grounding, the echo check, with its citations said."""
    plan = state.get("plan")
    text = PlanRun(d).check_answer(plan, text, d.names["answer"])
    text = _attributed(d, run, text)
    # the plan check covers claims of plan steps; every run checks citations and figures
    # Figures are checked once a tool was called: an answer from the model's own knowledge,
    # with no tool asked, is not a claim about the run.
    study = d.study_text()
    text, unverified = grounding.ground(
        text,
        run.ledger,
        [run.question, study, *(str(m.content) for m in run.history)],  # figures they give
        d.runner.tools,
        figures=bool(run.ledger.entries),
        claims=plan is None,
        study=study,  # an earlier turn's steps; never the request: asking is not doing
        vocabulary=d.domain.vocabulary,
    )
    run.unverified += unverified
    text = _not_an_echo(d, run, text)
    if under := evidence.shown_under(d, run, text):
        text += under
        emit(AnswerChecked(text=text, flags=[]))
    cited = sorted({int(n) for n in CITATION.findall(text)})
    real = [s for s in run.ledger.sources if s["n"] in cited]
    if real:
        sources = [{"n": s["n"], "title": s["title"], "url": s["url"]} for s in real]
        emit(Citations(sources=sources))
    return text


def _attributed(d: Deps, run: RunContext, text: str) -> str:
    """An answer that used the run's sources and cited none gets their numbers after the
    sentences drawn from them; the user is told that brainchat placed them."""
    sources = run.ledger.sources
    text, placed = attribution.attribute(text, grounding.sentences(text), sources, run.question)
    if placed:
        emit(AnswerChecked(text=text, flags=[]))
        marks = ", ".join(f"[{n}]" for n in dict.fromkeys(placed))
        emit(
            Notice(
                kind="info",
                message=f"{d.names['answer']} cited no source; brainchat added {marks} after "
                "the sentences whose words come from that source.",
                hint="Open the source to check what it says.",
            )
        )
    return text


def _failed(d: Deps, run: RunContext, exc: BaseException, out: Streamed) -> AgentState:
    message = describe_error(
        exc,
        d.specs.get("answer"),
        midstream=bool(out.parts),
        name=d.names["answer"],
        base_url=base_url(d.answer_llm),
    )
    hint = (
        "The tool results above are kept; send the message again to retry the answer."
        if run.ledger.successful()
        else "Send the message again in a moment."
    )
    return Exit("error", message, hint).ended("".join(out.parts))


def _not_an_echo(d: Deps, run: RunContext, text: str) -> str:
    """An answer that repeats the answer request's instructions is replaced by what the
    ledger shows, written by brainchat, and the user is told why."""
    prompt = load_prompt("answer", d.prompt_variants.get("answer"))
    told = [d.domain.state_line(e.name, e.result) for e in run.ledger.successful()]
    lines = [prompt, *LIMIT_STOPS.values(), *NOTHING.values(), no_tools_line(run.record)]
    said = echo.echoed(text, [*lines, *(line for line in told if line)])
    if said is None:
        return text
    text = echo.facts_answer(
        run.ledger, "the answer model repeated its instructions instead of answering"
    )
    flag = {"kind": "instruction", "sentence": said, "why": "an instruction, not an answer"}
    emit(AnswerChecked(text=text, flags=[flag]))
    emit(
        Notice(
            kind="ungrounded",
            message=f"The answer model ({d.names['answer']}) repeated brainchat's "
            "instructions instead of answering; the answer shows what the run did, in "
            "brainchat's words.",
            hint="Ask again, or pick another answer model in the settings.",
        )
    )
    run.unverified += 1
    return text
