"""Checking an answer against the run before it is final.

Four checks, each against what the run can show, in every language the lexicon knows:

- citations: every marker [n] must number a source this run found;
- figures: every number that states a result (a decimal, a percentage, or 10 and above) must be
  shown, as the same kind of quantity, by a tool's arguments or result, a source, the user's
  messages or the study's summary, or be derived from shown figures (figures.py);
- claims: a sentence that presents a tool or a step as done must match a successful call of
  this run, or the study's summary for an earlier turn; never the user's request (claims.py);
- verdicts: a comparison or judgement of results needs results that this run (or the study)
  produced, naming the same things (claims.py).

Each finding marks its sentence in place and is reported; nothing is removed. Before the
checks, an answer that used the run's sources and cited none gets their numbers after the
sentences drawn from them (attribution.py), and the user is told who placed them. The domain's words
(its steps, quantities and result names) come in a `Vocabulary`; the language markers are in
lexicon.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from brainchat.events import AnswerChecked, Notice, emit
from brainchat.grounding.claims import claim, promise, verdict
from brainchat.grounding.figures import LIST_ITEM, Shown, derived, states_a_result
from brainchat.grounding.figures import figures as figures_in
from brainchat.grounding.lexicon import SENTENCE_END
from brainchat.grounding.vocabulary import EMPTY, StepWords, Vocabulary

__all__ = ["EMPTY", "Flag", "NoTools", "StepWords", "Vocabulary", "check_answer", "ground", "mark"]

Kind = Literal["citation", "figure", "claim"]


class Called(Protocol):
    """One tool call as the run's ledger records it (agent/state.py LedgerEntry)."""

    @property
    def name(self) -> str: ...

    @property
    def args(self) -> dict[str, Any]: ...

    @property
    def status(self) -> str: ...

    @property
    def result(self) -> str: ...

    @property
    def error(self) -> str | None: ...

    @property
    def reused(self) -> Any: ...  # the earlier outcome handed back for a repeat, or None


class Ledger(Protocol):
    """The run's tool calls and the sources they found, numbered."""

    @property
    def entries(self) -> Sequence[Called]: ...

    @property
    def sources(self) -> list[dict[str, Any]]: ...


@dataclass
class NoTools:
    """The ledger of a run without tools (Chat mode)."""

    entries: tuple[Called, ...] = ()
    sources: list[dict[str, Any]] = field(default_factory=list)


CITE = re.compile(r"\[(\d{1,3})\]")


@dataclass(frozen=True)
class Flag:
    kind: Kind
    sentence: str
    why: str  # what the run shows instead


def ground(
    text: str,
    ledger: Ledger,
    known: list[str],
    tools: Iterable[str],
    *,
    figures: bool = True,
    claims: bool = True,
    study: str = "",
    vocabulary: Vocabulary = EMPTY,
) -> tuple[str, int]:
    """The final answer, checked against the run and marked where it says what the run does not
    show (the user is told); and how many statements were marked."""
    flags = check_answer(
        text,
        ledger,
        known,
        tools,
        figures=figures,
        claims=claims,
        study=study,
        vocabulary=vocabulary,
    )
    if not flags:
        return text, 0
    marked = mark(text, flags)
    emit(AnswerChecked(text=marked, flags=[vars(f) for f in flags]))
    emit(
        Notice(
            kind="ungrounded",
            message="The answer says what this run does not show; it is marked (⚠️) where it "
            "does: " + _findings(flags),
            hint="Trust only what the steps above show; ask again to run what is missing.",
        )
    )
    return marked, len(flags)


def _findings(flags: list[Flag]) -> str:
    """Each distinct finding once, with how often the answer has it ("×8")."""
    counts: dict[str, int] = {}
    for f in flags:
        line = f"“{_short(f.sentence)}”: {f.why}"
        counts[line] = counts.get(line, 0) + 1
    return "; ".join(line + (f" (×{n})" if n > 1 else "") for line, n in counts.items())


def _short(sentence: str, limit: int = 90) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def check_answer(
    answer: str,
    ledger: Ledger,
    known: Iterable[str],
    tools: Iterable[str],
    *,
    figures: bool = True,
    claims: bool = True,
    study: str = "",
    vocabulary: Vocabulary = EMPTY,
) -> list[Flag]:
    """What the answer says that the run cannot show, one finding per sentence and kind.

    `known`: texts whose figures count as shown (the user's messages, the study's summary);
    `study`: the study's summary, the only evidence besides this run that a step was done."""
    units = vocabulary.all_units()
    texts = _ledger_texts(ledger.entries, ledger.sources)
    shown = Shown([*texts, *known, study], units)
    results = "\n".join(e.result for e in ledger.entries if e.status == "success")
    numbered = {int(s["n"]) for s in ledger.sources}
    names = set(tools)
    flags: list[Flag] = []
    for sentence in sentences(answer):
        flags += _citations(sentence, ledger)
        if figures:
            flags += _figures(sentence, shown, units)
        if claims:
            why = claim(sentence, ledger.entries, names, study, vocabulary)
            why = why or promise(sentence, ledger.entries, vocabulary)
            why = why or verdict(sentence, ledger.entries, results, study, numbered, vocabulary)
            if why:
                flags.append(Flag("claim", sentence, why))
    return flags


CODE_LINE = re.compile(r"[=(){};]|^\s*(?:import|from|def|class|for|if|return|print)\b|^\s*[$>#]")


def sentences(text: str) -> list[str]:
    """The answer's sentences, in any language. A fenced block's lines that read as code are
    left out (code quotes, it does not claim); its other lines (a table, "Power: 0.04") are
    read like prose, since a small model may put its whole answer in one."""
    prose = FENCE.sub(lambda m: "\n".join(_not_code(m.group(1))) + "\n", text)
    prose = re.sub(r"`[^`\n]*`", lambda m: m.group(0) if "_" in m.group(0) else "", prose)
    parts = SENTENCE_END.split(prose)
    return [p.strip() for p in parts if p and p.strip()]


FENCE = re.compile(r"```[^\n]*\n?(.*?)(?:```|$)", re.DOTALL)


def _not_code(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not CODE_LINE.search(line)]


def mark(answer: str, flags: list[Flag]) -> str:
    """The answer with each flagged sentence followed by what the run shows instead.

    A sentence written several times ("[1]" after every line of a list, as a small model did)
    is marked at each place it is flagged, not eight times after the first: flags come in the
    answer's order, one per kind for each place, so a kind seen again starts the next place."""
    places: list[tuple[str, list[str], set[str]]] = []
    for f in flags:
        if places and places[-1][0] == f.sentence and f.kind not in places[-1][2]:
            places[-1][1].append(f.why)
            places[-1][2].add(f.kind)
        else:
            places.append((f.sentence, [f.why], {f.kind}))
    cursor = 0
    for sentence, whys, _ in places:
        note = f" ⚠️ *(not shown by this run: {'; '.join(whys)})*"
        at = answer.find(sentence, cursor)
        if at < 0:
            at = answer.find(sentence)
        if at >= 0:
            end = at + len(sentence)
            answer = answer[:end] + note + answer[end:]
            cursor = end + len(note)
        else:  # the sentence held inline code, left out when it was read: quote it at the end
            answer += f"\n\n“{sentence}”{note}"
    return answer


def _citations(sentence: str, ledger: Ledger) -> list[Flag]:
    numbered = {int(s["n"]) for s in ledger.sources}
    missing = sorted({int(n) for n in CITE.findall(sentence)} - numbered)
    if not missing:
        return []
    marks = ", ".join(f"[{n}]" for n in missing)
    found = f"this run found {len(numbered)} source(s)" if numbered else "this run found no source"
    return [Flag("citation", sentence, f"{marks} cites nothing: {found}")]


def _figures(sentence: str, shown: Shown, units: dict[str, re.Pattern[str]]) -> list[Flag]:
    body = LIST_ITEM.sub("", sentence, count=1)  # "1. Load ..." numbers a list, states nothing
    own = figures_in(body, units)
    held = [f for f in own if shown.holds(f)]
    unknown = [f for f in own if states_a_result(f) and f not in held and not derived(f, held)]
    if not unknown:
        return []
    said = ", ".join(dict.fromkeys(f.text + ("%" if f.percent else "") for f in unknown))
    why = f"{said} appears in no tool result or message"
    mismatched = [f for f in unknown if f.kind and shown.has_value(f)]
    if mismatched:
        f = mismatched[0]
        kinds = ", ".join(shown.kinds_of(f)) or "another quantity"
        why += f" as {f.kind} (the run shows {f.text} only as {kinds})"
    return [Flag("figure", sentence, why)]


def _ledger_texts(entries: Sequence[Called], sources: list[dict[str, Any]]) -> list[str]:
    texts = []
    for e in entries:
        texts.append(json.dumps(e.args, default=str))
        if e.status == "success":
            texts.append(e.result)
    texts += [f"{s.get('title', '')} {s.get('snippet', '')} {s.get('url', '')}" for s in sources]
    return texts
