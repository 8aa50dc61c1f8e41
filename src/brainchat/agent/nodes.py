"""The graph's nodes: decide (function_call_llm), act (tools), evaluate (policy), answer (answer_llm)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import re
import time
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)

from brainchat import grounding, llm
from brainchat.agent import automode, echo, modelcall, pace, textcalls
from brainchat.agent.budget import (
    Budget,
    Fitted,
    cut_text,
    fit_history,
    fit_run,
    message_tokens,
)
from brainchat.agent.offer import ToolOffer
from brainchat.agent.plan_run import PlanRun, plan_limits
from brainchat.agent.policy import (
    Evaluator,
    RoundRule,
    RoundVerdict,
    default_round_rule,
    next_step,
)
from brainchat.agent.state import AgentState, RunContext, clip
from brainchat.agent.toolrun import ToolRunner
from brainchat.events import (
    AnswerChecked,
    Citations,
    Evaluation,
    ModelSwitch,
    Notice,
    ThinkingDone,
    emit,
)
from brainchat.llm import describe_error
from brainchat.prompts import load_prompt
from brainchat.repeats import RepeatGuard, repeat_notice_text, without_repeats
from brainchat.settings import AgentLimits, ModelSpec
from brainchat.usage import UsageCallback, count_message_tokens

CURRENT_RUN: contextvars.ContextVar[RunContext] = contextvars.ContextVar("brainchat_run")
CURRENT_DEPS: contextvars.ContextVar[Deps] = contextvars.ContextVar("brainchat_deps")
CITATION = re.compile(r"\[(\d{1,3})\]")
NOTE_TOKENS = 400  # the evaluation note beside a round: gists and short errors, never a dump


@dataclass
class Deps:
    """Everything the nodes need, injected by build_agent."""

    function_call_llm: BaseChatModel
    answer_llm: BaseChatModel
    bound_llm: ToolOffer  # function_call_llm with this round's offered tools bound
    names: dict[str, str]  # role -> model name
    limits: AgentLimits
    runner: ToolRunner
    evaluator: Evaluator
    context: Callable[[], str] | None
    told: Callable[[str], None] | None  # the context text a model has now read (notes in it said)
    prompt_variants: dict[str, str | None]
    budgets: dict[str, Budget]  # role -> what one request may use of the model's window
    specs: dict[str, ModelSpec]  # role -> spec, when known (names and URLs in error messages)
    round_rule: RoundRule = default_round_rule
    tool_calling: str = "native"  # native | prompt | auto (the function-call spec's setting)
    facts: Callable[[], dict[str, Any]] | None = (
        None  # the study's stage and steps, to verify plans
    )

    def budget(self, role: str) -> Budget:
        """What one request of `role` may use now: the function-call model's request carries
        only the tools offered this round, so its budget is taken per request, not per build."""
        if role != "function_call":
            return self.budgets[role]
        return replace(self.budgets[role], tools=self.bound_llm.tokens())


def no_room(d: Deps, role: str, system: int) -> tuple[str, str] | None:
    """When `role`'s prompt (`system` tokens) and offered tools leave no room for a message in
    its window: what takes the room (never the user's text) and what to do, else None."""
    budget = d.budget(role)
    if system + budget.tools + 16 <= budget.window - budget.reserve:
        return None
    if budget.tools >= system:
        part = f"The tool definitions offered take {budget.tools:,} tokens"
        fix = "Pick a model with a larger context window, or connect fewer MCP servers"
    else:
        with_tools = " with the tool descriptions" if d.tool_calling == "prompt" else ""
        part = f"The instructions{with_tools} take {system:,} tokens"
        fix = "Pick a model with a larger context window"
    if (spec := d.specs.get(role)) is not None and spec.max_tokens:
        fix += ", or lower its max_tokens"
    return (
        f"{part} of {d.names[role]}'s {budget.window:,}-token context window, and "
        f"{budget.reserve:,} are kept for the reply: no message fits. Nothing was sent to the "
        "model.",
        fix + ".",
    )


class Nodes:
    """Plain async node functions over AgentState; per-run bookkeeping lives in `ctx`.

    Built without `deps`, the nodes read the running agent's from `CURRENT_DEPS`: one compiled
    graph then serves every agent of the process (compiling cost ~3 ms per agent build).
    """

    def __init__(self, deps: Deps | None = None) -> None:
        self._deps = deps

    @property
    def d(self) -> Deps:
        return self._deps if self._deps is not None else CURRENT_DEPS.get()

    @property
    def planner(self) -> PlanRun:
        return PlanRun(self.d)  # stateless: a run's plan lives in ctx.plan

    @property
    def ctx(self) -> RunContext:
        return CURRENT_RUN.get()

    @property
    def cb(self) -> UsageCallback:
        return self.ctx.callback

    def _study_text(self) -> str:
        if self.d.context is None:
            return ""
        try:
            return "Current EEG study: " + self.d.context()
        except Exception as exc:  # noqa: BLE001 - the summary is a hint, never fatal
            return f"(EEG study summary unavailable: {exc})"

    def _system(self) -> SystemMessage:
        prompt = load_prompt("function_call", self.d.prompt_variants.get("function_call"))
        text = prompt.replace("{study}", self._study_text())
        if self.d.tool_calling == "prompt" and (schemas := self.d.bound_llm.schemas()):
            room = self.d.budget(
                "function_call"
            ).tokens  # #23 hook: the worked example fits or goes
            text += "\n\n" + textcalls.fitted_tools_prompt(schemas, text, room)
        return SystemMessage(text)

    async def plan(self, state: AgentState) -> dict[str, Any]:
        """Plan mode: a validated plan of the request's steps, or none (the ordinary loop)."""
        self.ctx.plan = await self.planner.create(self.ctx)
        return {}

    async def decide(self, state: AgentState) -> dict[str, Any]:
        round_ = state.get("round", 0) + 1
        self.cb.round = round_
        run = list(state["messages"])
        if state.get("verdict_note"):
            # The note repeats tool errors and gists: bounded, so it never crowds out the run.
            note = cut_text(str(state["verdict_note"]), NOTE_TOKENS)
            run.append(HumanMessage(f"(Evaluation of your last tool round: {note}.)"))
        if self.ctx.plan is not None and (progress := self.planner.prompt(self.ctx.plan)):
            run.append(HumanMessage(progress))
        system, budget = self._system(), self.d.budget("function_call")
        if (full := self._no_room(system, budget, round_)) is not None:
            return full
        plain = textcalls.as_plain if self.d.tool_calling == "prompt" else None
        fitted = fit_run(system, self.ctx.history, run, budget, shape=plain)
        if not fitted.fits:
            return self._context_full(fitted.tokens, budget, round_)
        self._tell_fitted(fitted)
        messages = fitted.messages
        if plain is not None:
            messages = plain(messages)
        started = time.perf_counter()
        try:
            reply = await asyncio.wait_for(self._stream(messages), max(self.ctx.remaining(), 0.1))
        except modelcall.ModelTimeout as exc:
            return self._model_failed(exc.error, round_)
        except TimeoutError:
            return self._stop(
                "timeout",
                f"time limit of {self.d.limits.max_execution_time:g} s reached while the model was thinking",
                round_,
            )
        except Exception as exc:  # noqa: BLE001 - API failures stop the run with a message
            return self._model_failed(exc, round_)
        pace.keep_for_answer(self.d, self.ctx)  # #23 hook: the answer's time, measured anew
        if self.d.told is not None:  # the model has read the study's notes: said once
            self.d.told(str(system.content))
        if llm.cut_at_limit(reply):
            told, hint = llm.cut_notice_text(
                self.d.specs.get("function_call"), self.d.names["function_call"]
            )
            emit(Notice(kind="info", message=told, hint=hint))
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
            thought, calls, shown = await automode.text_calls(self, run, thought, round_)
        emit(
            ThinkingDone(
                role="function_call",
                model=self.d.names["function_call"],
                text="\n\n".join(t for t in (reasoning.strip(), shown.strip()) if t),
                round=round_,
                duration=round(time.perf_counter() - started, 4),
                tool_calls=[str(c["name"]) for c in calls],
            )
        )
        ai = AIMessage(
            content=thought,
            tool_calls=[
                {
                    "name": c["name"],
                    "args": c.get("args") or {},
                    "id": c.get("id"),
                    "type": "tool_call",
                }
                for c in calls
            ],
        )
        if not calls:
            emit(
                Evaluation(verdict="answer", reason="the model needs no (more) tools", round=round_)
            )
            return {
                "round": round_,
                "messages": [*state["messages"], ai],
                "route": "answer",
                "last_verdict": None,
            }
        return {
            "round": round_,
            "messages": [*state["messages"], ai],
            "pending_calls": calls,
            "route": "act",
            "verdict_note": None,
        }

    def _no_room(self, system: SystemMessage, budget: Budget, round_: int) -> dict[str, Any] | None:
        """A round whose offered tools fill the window is not sent (the first round is checked
        before the run; a later one may offer more tools): answer from the results, or stop."""
        if message_tokens([system], budget.tokens - 16) + 16 <= budget.tokens:
            return None
        refused = no_room(self.d, "function_call", count_message_tokens([system]))
        if refused is None:
            return None
        message, hint = refused
        gathered = bool(self.ctx.ledger.successful())
        if gathered:
            hint += " The answer below is written from the tool results gathered so far."
        emit(Notice(kind="error", message=message, hint=hint))
        if gathered:  # the answer says the window filled up, not that the model failed
            return {"round": round_, "route": "answer", "stop_reason": "context_full"}
        return {"round": round_, "route": "finish", "stop_reason": "error", "error": message}

    def _tell_fitted(self, fitted: Fitted) -> None:
        """Say what was really done to make the request fit, once per new kind of reduction
        (a later round may cut more than the first one did: the counts are of this request)."""
        done = {
            "digested": f"{fitted.digested} older tool result(s) were shortened to digests",
            "shortened": f"the text of {fitted.shortened} earlier reply(ies) or note(s) was cut "
            "to its head and tail",
            "dropped": f"{fitted.dropped} earlier message(s) of the conversation were left out",
        }
        counts = {"digested": fitted.digested, "shortened": fitted.shortened}
        new = [k for k, n in counts.items() if n and k not in self.ctx.fit_told]
        if not new:
            return
        self.ctx.fit_told.update(new)
        parts = [done[k] for k, n in counts.items() if n]
        if fitted.dropped:
            parts.append(done["dropped"])
        said = "; ".join(parts) + f" so the request fits {self.d.names['function_call']}'s "
        emit(Notice(kind="info", message=said[0].upper() + said[1:] + "context window."))

    def _context_full(self, tokens: int, budget: Budget, round_: int) -> dict[str, Any]:
        """Even cut to the bone the next request exceeds the window: never send it.

        With results gathered, the answer is written from them; with none, the run stops.
        """
        name = self.d.names["function_call"]
        why = (
            f"the next request to {name} needs about {tokens:,} tokens, more than the "
            f"{budget.tokens:,} its context window of {budget.window:,} tokens leaves for input "
            f"(after {budget.reserve:,} kept for the reply"
            + (f" and {budget.tools:,} for the tool definitions" if budget.tools else "")
            + ")"
        )
        emit(Evaluation(verdict="answer", reason=why, round=round_))
        if self.ctx.ledger.successful():
            emit(
                Notice(
                    kind="context_full",
                    message=f"The run stopped gathering: {why}. The answer is written from the "
                    "tool results gathered so far.",
                    hint="Ask a narrower question, or choose a function-call model with a larger "
                    "context window.",
                )
            )
            return {"round": round_, "route": "answer", "stop_reason": "context_full"}
        message = f"Nothing was sent: {why}."
        emit(
            Notice(
                kind="error",
                message=message,
                hint="Shorten the message, or choose a function-call model with a larger context "
                "window.",
            )
        )
        return {"round": round_, "route": "finish", "stop_reason": "error", "error": message}

    def _model_failed(self, exc: BaseException, round_: int) -> dict[str, Any]:
        """The function-call model failed: answer from what was gathered, or stop if nothing was."""
        message = describe_error(
            exc,
            self.d.specs.get("function_call"),
            name=self.d.names["function_call"],
            base_url=_base_url(self.d.function_call_llm),
        )
        gathered = bool(self.ctx.ledger.successful())
        emit(
            Notice(
                kind="error",
                message=message,
                hint="The answer below is written from the tool results gathered before the failure."
                if gathered
                else "Nothing was gathered yet; send the message again in a moment.",
            )
        )
        if gathered:
            return {"round": round_, "route": "answer", "stop_reason": "model_error", "error": None}
        return {"round": round_, "route": "finish", "stop_reason": "error", "error": message}

    async def _stream(self, messages: list[BaseMessage]) -> BaseMessage:
        return await modelcall.ask(
            self.d.bound_llm(),
            messages,
            [self.cb],
            self.d.specs.get("function_call"),
            self.d.names["function_call"],
        )

    def _stop(self, reason: str, why: str, round_: int) -> dict[str, Any]:
        limits = self.d.limits
        emit(Evaluation(verdict="answer", reason=why, round=round_))
        emit(
            Notice(
                kind="timeout",
                message=f"The agent hit its time limit ({limits.max_execution_time:g} s) and answers from what it gathered.",
                hint="Raise the max execution time in the settings, or ask a narrower question.",
            )
        )
        return {"round": round_, "route": "answer", "stop_reason": reason}

    async def act(self, state: AgentState) -> dict[str, Any]:
        round_ = state.get("round", 0)
        messages, entries, looped = await self.d.runner.run_round(
            self.ctx, state.get("pending_calls", []), round_
        )
        if looped:
            self.ctx.loop_hits += 1
        self.ctx.last_round = entries
        return {"messages": [*state["messages"], *messages], "pending_calls": [], "looped": looped}

    async def evaluate(self, state: AgentState) -> dict[str, Any]:
        """Judge the round just run; the verdict routes: enough -> answer, not enough -> decide."""
        round_ = state.get("round", 0)
        entries = self.ctx.last_round
        verdicts = [self.d.evaluator(e) for e in entries]
        verdict, found = self.d.round_rule(entries, verdicts, self.d.limits)
        tool_rounds = state.get("tool_rounds", 0) + (1 if any(v.ok for v in verdicts) else 0)
        plan = self.ctx.plan
        if plan is not None:
            outcome, found = await self.planner.after_round(self.ctx, plan, entries)
            if outcome == "failed":
                return self._plan_failed(found, round_, tool_rounds)
            verdict = cast(RoundVerdict, outcome)
        decision = next_step(
            self.ctx,
            plan_limits(self.d.limits, plan),
            round_,
            tool_rounds,
            verdict,
            found,
            bool(state.get("looped")),
            self.d.runner.tools,  # #23 hook: a loop stop names the next concrete call
        )
        emit(Evaluation(verdict=decision.verdict, reason=decision.reason, round=round_))
        if decision.notice:
            emit(Notice(kind=decision.stop_reason, message=decision.notice, hint=decision.hint))  # type: ignore[arg-type]
        return {
            "tool_rounds": tool_rounds,
            "route": decision.route,
            "stop_reason": decision.stop_reason,
            "verdict_note": found if decision.verdict == "not_enough" else None,
            "last_verdict": decision.verdict,
        }

    def _plan_failed(self, why: str, round_: int, tool_rounds: int) -> dict[str, Any]:
        emit(Evaluation(verdict="answer", reason=why, round=round_))
        emit(
            Notice(
                kind="plan_failed",
                message=f"The plan stopped: {why}. The answer says what was done and what was not.",
                hint="Raise AGENT_MAX_REPLANS, or fix what the failed step needs and ask again.",
            )
        )
        return {
            "tool_rounds": tool_rounds,
            "route": "answer",
            "stop_reason": "plan_failed",
            "last_verdict": "answer",
        }

    async def answer(self, state: AgentState) -> dict[str, Any]:
        ctx = self.ctx
        for entry in ctx.ledger.pending():
            entry.finish("error", error="never received a result")
            emit(
                Notice(
                    kind="error",
                    message=f"The call to {entry.name} never returned a result; it is left out of the answer.",
                )
            )
        name = self.d.names["answer"]
        same = name == self.d.names["function_call"]
        stop = state.get("stop_reason")
        why = (
            f"the tool loop stopped ({stop.replace('_', ' ')})"
            if stop
            else "the evaluation judged the results enough"
            if state.get("last_verdict") == "enough"
            else "the function-call model finished gathering"
        )
        emit(
            ModelSwitch(
                role="answer",
                model=name,
                reason=why + ("; the same model writes the answer" if same else ""),
            )
        )
        messages = self._answer_messages(state)
        if messages is None:
            return {"answer": "", "route": "finish", "stop_reason": "error", "error": ctx.error}
        if (facts := pace.facts_instead(self)) is not None:  # #23 hook: too little time left
            return facts
        parts: list[str] = []
        spec = self.d.specs.get("answer")
        deadline = asyncio.timeout(ctx.answer_remaining())
        try:
            async with deadline:
                try:
                    await self._stream_answer(messages, parts, spec)
                except Exception as exc:
                    if parts or not llm.rejects_stream_options(exc, spec) or spec is None:
                        raise
                    # once more without them; the server is marked only if it takes that
                    await self._stream_answer(messages, parts, spec, usage=False)
                    llm.refuse_stream_usage(spec)
                    emit(modelcall.stream_options_notice(spec, exc, name))
        except TimeoutError as exc:
            if not deadline.expired():  # the model's own timeout, not the run's limit
                return self._answer_failed(exc, parts, name)
            limit = self.d.limits.max_execution_time
            emit(
                Notice(
                    kind="timeout",
                    message=f"The time limit of {limit:g} s ran out while the answer was being written"
                    + (
                        "; the partial answer above is kept."
                        if parts
                        else " and no answer arrived."
                    ),
                    hint="Raise the max execution time in the settings, or ask a narrower question.",
                )
            )
            return {"answer": "".join(parts), "route": "finish", "stop_reason": "timeout"}
        except Exception as exc:  # noqa: BLE001
            return self._answer_failed(exc, parts, name)
        text = "".join(parts)
        pace.remember_speed(self.d, ctx)  # #23 hook: for the next runs' answer reserve
        if ctx.answer_repeated is not None:
            text = without_repeats(text, ctx.answer_repeated)
            told = repeat_notice_text(name, ctx.answer_repeated)
            emit(Notice(kind="info", message=told[0], hint=told[1]))
        elif ctx.answer_cut:
            emit(
                Notice(
                    kind="info", message=(told := llm.cut_notice_text(spec, name))[0], hint=told[1]
                )
            )
        text = self.planner.check_answer(ctx.plan, text, name)
        # the plan check covers claims of plan steps; every run checks citations and figures
        # Figures are checked once a tool was called: an answer from the model's own knowledge,
        # with no tool asked, is not a claim about the run.
        text, unverified = grounding.ground(
            text,
            ctx.ledger,
            [ctx.question, self._study_text(), *(str(m.content) for m in ctx.history)],
            self.d.runner.tools,
            figures=bool(ctx.ledger.entries),
            claims=ctx.plan is None,
        )
        ctx.unverified += unverified
        text = self._not_an_echo(text, state.get("stop_reason"))
        cited = sorted({int(n) for n in CITATION.findall(text)})
        real = [s for s in ctx.ledger.sources if s["n"] in cited]
        if real:
            emit(
                Citations(
                    sources=[{"n": s["n"], "title": s["title"], "url": s["url"]} for s in real]
                )
            )
        return {"answer": text, "route": "finish"}

    async def _stream_answer(
        self,
        messages: list[BaseMessage],
        parts: list[str],
        spec: ModelSpec | None,
        usage: bool = True,
    ) -> None:
        ctx, guard = self.ctx, RepeatGuard()
        kwargs = modelcall.usage_kwargs(spec) if usage else {"stream_usage": False}
        stream: Any = self.d.answer_llm.astream(messages, config={"callbacks": [self.cb]}, **kwargs)
        async with aclosing(stream):  # ended early: the HTTP stream closes now
            async for chunk in stream:
                if isinstance(chunk.content, str) and chunk.content:
                    if ctx.first_answer_token is None:
                        ctx.first_answer_token = time.perf_counter()
                    parts.append(chunk.content)
                    if (repeated := guard.feed(chunk.content)) is not None:
                        ctx.answer_repeated = repeated
                        return
                ctx.answer_cut = ctx.answer_cut or llm.cut_at_limit(chunk)

    def _answer_failed(self, exc: BaseException, parts: list[str], name: str) -> dict[str, Any]:
        message = describe_error(
            exc,
            self.d.specs.get("answer"),
            midstream=bool(parts),
            name=name,
            base_url=_base_url(self.d.answer_llm),
        )
        emit(
            Notice(
                kind="error",
                message=message,
                hint="The tool results above are kept; send the message again to retry the answer."
                if self.ctx.ledger.successful()
                else "Send the message again in a moment.",
            )
        )
        return {
            "answer": "".join(parts),
            "route": "finish",
            "stop_reason": "error",
            "error": message,
        }

    def _not_an_echo(self, text: str, stop: str | None) -> str:
        """An answer that repeats the answer request's instructions is replaced by what the
        ledger shows, written by brainchat, and the user is told why."""
        prompt = load_prompt("answer", self.d.prompt_variants.get("answer"))
        said = echo.echoed(text, [prompt, *LIMIT_STOPS.values(), *NOTHING.values()])
        if said is None:
            return text
        why = "the answer model repeated its instructions instead of answering"
        text = echo.facts_answer(self.ctx.ledger, why)
        flag = {"kind": "instruction", "sentence": said, "why": "an instruction, not an answer"}
        emit(AnswerChecked(text=text, flags=[flag]))
        emit(
            Notice(
                kind="ungrounded",
                message=f"The answer model ({self.d.names['answer']}) repeated brainchat's "
                "instructions instead of answering; the answer shows what the run did, in "
                "brainchat's words.",
                hint="Ask again, or pick another answer model in the settings.",
            )
        )
        self.ctx.unverified += 1
        return text

    def _answer_messages(self, state: AgentState) -> list[BaseMessage] | None:
        """System prompt, the history that fits, and the verified results cut to fit the window.

        Each result's share halves until all fit; below a useful share the newest results are
        kept and older ones listed by name only (the answer model may have a smaller window
        than the function-call model that gathered them). Only when even the newest alone do
        not fit does the run stop with a message.
        """
        budget = self.d.budgets["answer"]
        system = SystemMessage(load_prompt("answer", self.d.prompt_variants.get("answer")))
        stop = state.get("stop_reason")
        cap, keep = budget.per_result, None
        total = len(self.ctx.ledger.entries) + len(self.ctx.ledger.sources)
        while True:
            question = HumanMessage(self._answer_input(stop, cap, keep))
            fixed = message_tokens([system, question], budget.tokens)
            if fixed <= budget.tokens:
                break
            if cap > MIN_ANSWER_SHARE:
                cap = max(cap // 2, MIN_ANSWER_SHARE)  # each result a smaller share
            elif keep != 0:
                keep = (total if keep is None else keep) // 2  # older results by name only
            else:
                self.ctx.error = (
                    f"The request is too long for {self.d.names['answer']}'s context window "
                    f"({budget.window:,} tokens): even with every tool result left out it needs "
                    f"about {fixed:,} of the {budget.tokens:,} tokens left for input."
                )
                emit(Notice(kind="error", message=self.ctx.error, hint="Ask a narrower question."))
                return None
        return [system, *fit_history(self.ctx.history, fixed, budget.tokens), question]

    def _answer_input(
        self, stop_reason: str | None = None, cap: int = 3000, keep: int | None = None
    ) -> str:
        """The question plus only the results that really exist (the ledger's successes).

        `cap` is each result's share in tokens; `keep`, when set, is how many of the newest
        sources, results and failures are shown (older ones are counted by name only).
        """
        ledger = self.ctx.ledger
        chars = max(cap, 60)  # arguments, titles and URLs scale with the share too
        lines = [f"User request: {self.ctx.question}", ""]
        sources, old_sources = _newest(ledger.sources, keep)
        if ledger.sources:
            lines.append("Web sources (cite as [n]):")
            lines += [
                f"[{s['n']}] {clip(s['title'], min(chars, 200))} — {clip(s['url'], min(chars, 300))}"
                f"\n    {cut_text(s['snippet'], max(cap // 4, 50))}"
                for s in sources
            ]
            if old_sources:
                lines.append(f"({len(old_sources)} earlier source(s) omitted to fit the window.)")
            lines.append("")
        others, old = _newest([e for e in ledger.successful() if not e.sources], keep)
        if others or old:
            lines.append("Tool results:")
            if old:
                lines.append(f"({len(old)} earlier result(s) omitted to fit: {_names(old)}.)")
            for e in others:
                args = clip(json.dumps(e.args, default=str), min(chars, 500))
                lines.append(f"- {e.name}({args}):\n{cut_text(e.result, cap)}")
            lines.append("")
        failed, old_failed = _newest(
            [e for e in ledger.entries if e.status in ("error", "refused")], keep
        )
        if failed or old_failed:
            lines.append("Tool calls that failed (do not use them as evidence):")
            if old_failed:
                lines.append(f"- ({len(old_failed)} earlier failure(s): {_names(old_failed)})")
            lines += [f"- {e.name}: {clip(e.error or e.status, min(chars, 300))}" for e in failed]
        if self.ctx.plan is not None:
            lines.append(self.planner.answer_input(self.ctx.plan))
        if stop_reason in LIMIT_STOPS:
            gathered = any(e.status == "success" for e in self.ctx.ledger.entries)
            lines += ["", LIMIT_STOPS[stop_reason] if gathered else NOTHING[stop_reason]]
        if len(lines) == 2:  # #23 hook: a request that needed tools is not 'your own knowledge'
            lines.append(automode.no_tools_line(self.ctx.question))
        return "\n".join(lines)


MIN_ANSWER_SHARE = 100  # tokens per result below which dropping older results reads better


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


def _base_url(model: Any) -> str | None:
    """The model's base URL when it has one (ChatOpenAI's `openai_api_base`), for error text."""
    return getattr(model, "openai_api_base", None) or getattr(model, "base_url", None)
