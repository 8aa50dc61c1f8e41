"""One reminder per run of the asked steps never run (issue #23, bench pipeline run 3 of 27 Nov):
a function-call model that stops calling tools before any step of its load-and-analyse
request has run is asked once more, with the steps and the next call named; the graph routes
decide back to decide (graph.after_decide)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from brainchat.agent import asked
from brainchat.agent.context import AgentState, Deps
from brainchat.agent.state import RunContext
from brainchat.events import Evaluation, emit


def asked_steps(
    d: Deps, run: RunContext, state: AgentState, round_: int, ai: AIMessage
) -> AgentState | None:
    """Once per run: the model stopped calling tools while steps its pipeline request names
    never succeeded (bench pipeline run 3, 27 Nov: after the listing and a refused clear_study
    the 1.5B model wrote prose, and the answer model made up a band-pass, an epoching and a
    training). Only for a pipeline not begun: a request to load data and go on with it (a
    question that names 'accuracy' in passing, answered from a search, is none) of which no
    step has succeeded, with a model call and time to spare. A model that stops halfway has
    shown it can call the tools; the answer is told which asked steps never ran."""
    if state.get("reminded") or not run.ledger.entries or round_ >= d.limits.max_iterations:
        return None
    missing = asked.not_run(run.question, run.ledger.entries)
    named = asked.named_steps(run.question)
    if "load_data" not in named or len(named) < 2 or missing != named:
        return None
    if run.remaining() < run.answer_reserve:  # the answer's own reserve stays kept besides:
        return None  # another model call needs about as long as the answer's
    steps = ", ".join(missing)
    emit(
        Evaluation(
            verdict="continue",
            reason=f"the request's {steps} never ran: the model is reminded once",
            round=round_,
        )
    )
    note = HumanMessage(
        f"(Not done yet: the request also asks for {steps}, and no call of "
        f"{'it' if len(missing) == 1 else 'them'} has succeeded. Call {missing[0]} now, with "
        "arguments from the results above; if it cannot be done, say why in one sentence.)"
    )
    return {
        "round": round_,
        "messages": [*state["messages"], ai, note],
        "reminded": True,
        "verdict_note": None,  # the reminder is the newest word
    }
