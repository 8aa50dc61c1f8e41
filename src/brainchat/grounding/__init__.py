"""Checking an answer against the run before it is final (issue #23).

A small model's answer said "load_data: file 'sub-01/1.edf' loaded successfully" after the call
had failed, "Training of CSP+LDA was performed" with no train_model call, and ended with "[1]"
when no source existed. Three checks, all against what the run can show:

- citations: every marker [n] must number a source this run found;
- figures: every number that states a result (a decimal, a percentage, or 10 and above) must
  appear in a tool's arguments or result, a source, the user's messages or the study's summary
  (rounded or as a percentage counts);
- claims: a sentence that presents a tool or an EEG step as done (and does not negate it) must
  match a successful call of this run, or the study's summary (for steps of earlier turns).

Each finding marks its sentence in place and is reported; nothing is removed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from brainchat.events import AnswerChecked, Notice, emit

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


NEGATION = re.compile(
    r"\b(not|no|never|failed|fail|fails|unable|cannot|could ?n[o']t|did ?n[o']t|was ?n[o']t|"
    r"remain|remains|pending|skipped|refused|error|instead|unverified|would|will|should|can|"
    r"could|if|tried|try|attempted)\b|n't\b",
    re.IGNORECASE,
)
CITE = re.compile(r"\[(\d{1,3})\]")
# a figure: not part of a name (sub-01), a range's end (8-30), a marker ([1]) or a clock (14:00)
NUMBER = re.compile(r"(?<![\w.\[/#\-–:])(\d+(?:\.\d+)?)(\s?%)?(?![\w\]:])")
LIST_ITEM = re.compile(r"^\s*\d+[.)]\s")
SUCCESS = re.compile(
    r"\b(success\w*|succeeded|loaded|completed|done|ran|performed|trained|applied|finished|"
    r"filtered|band-?passed|epoched|evaluated|created|split)\b",
    re.IGNORECASE,
)
# An EEG step said to be done, the tools that do it (by name), and the study summary's sign of it
STEPS: dict[str, tuple[re.Pattern[str], str, re.Pattern[str]]] = {
    "loading": (
        re.compile(r"\b(loaded|loading\b[^.]*\b(was|were) (performed|done|completed))", re.I),
        "load",
        re.compile(r"stage=(?!empty)"),
    ),
    "filtering": (
        re.compile(r"\b(band-?passed|filtered|(band-?pass|filter)\w*\b[^.]*\bwas applied)", re.I),
        "filter",
        re.compile(r"band-?pass|filter|notch", re.I),
    ),
    "epoching": (
        re.compile(r"\b(epoched|epochs were (created|made|extracted|cut))\b", re.I),
        "epoch",
        re.compile(r"\bepochs:"),
    ),
    "training": (
        re.compile(r"\b(trained|training\b[^.]*\b(was|were) (performed|done|completed))", re.I),
        "train",
        re.compile(r"\bmodels:"),
    ),
}


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
) -> tuple[str, int]:
    """The final answer, checked against the run and marked where it says what the run does not
    show (the user is told); and how many statements were marked."""
    flags = check_answer(text, ledger, known, tools, figures=figures, claims=claims)
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
) -> list[Flag]:
    """What the answer says that the run cannot show, one finding per sentence and kind."""
    numbers = _numbers(_ledger_texts(ledger.entries, ledger.sources), known)
    context = "\n".join(known)
    flags: list[Flag] = []
    for sentence in sentences(answer):
        flags += _citations(sentence, ledger)
        if figures:
            flags += _figures(sentence, numbers)
        if claims:
            flags += _claims(sentence, ledger.entries, set(tools), context)
    return flags


def sentences(text: str) -> list[str]:
    """The answer's sentences outside code blocks (code quotes, it does not claim)."""
    prose = re.sub(r"```.*?(```|$)", "\n", text, flags=re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", lambda m: m.group(0) if "_" in m.group(0) else "", prose)
    parts = re.split(r"(?<=[.!?])\s+|\n+", prose)
    return [p.strip() for p in parts if p.strip()]


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


def _figures(sentence: str, known: list[tuple[float, bool]]) -> list[Flag]:
    body = LIST_ITEM.sub("", sentence, count=1)  # "1. Load ..." numbers a list, states nothing
    unknown = [
        text + (pct or "").strip()
        for text, pct in NUMBER.findall(body)
        if _states_a_result(text, pct) and not _grounded(text, bool(pct), known)
    ]
    if not unknown:
        return []
    return [
        Flag(
            "figure",
            sentence,
            f"{', '.join(dict.fromkeys(unknown))} appears in no tool result or message",
        )
    ]


def _claims(sentence: str, entries: Sequence[Called], tools: set[str], context: str) -> list[Flag]:
    if NEGATION.search(sentence) or not SUCCESS.search(sentence):
        return []
    low = sentence.lower()
    for name in sorted(tools):
        if name.lower() in low or name.replace("_", " ").lower() in low:
            tried = [e for e in entries if e.name == name]
            if tried and not any(e.status == "success" for e in tried):
                return [Flag("claim", sentence, f"{name} {_outcome(tried[-1])} in this run")]
    for step, (said, stem, shown) in STEPS.items():
        doers = [t for t in tools if stem in t.lower()]
        if not doers or not said.search(sentence):
            continue
        done = any(e.status == "success" and e.name in doers for e in entries)
        if not done and not shown.search(context):
            tried = [e for e in entries if e.name in doers]
            what = f"{tried[-1].name} {_outcome(tried[-1])}" if tried else f"no {step} step ran"
            return [Flag("claim", sentence, f"{what} in this run")]
    return []


def _outcome(entry: Called) -> str:
    if entry.status == "skipped":
        failed = entry.reused is not None and entry.reused.status != "success"
        return "was skipped (a repeat of a call that had failed)" if failed else "was skipped"
    if entry.status == "refused":
        return "was refused"
    return f"failed ({(entry.error or 'no result')[:100]})"


def _ledger_texts(entries: Sequence[Called], sources: list[dict[str, Any]]) -> list[str]:
    texts = []
    for e in entries:
        texts.append(json.dumps(e.args, default=str))
        if e.status == "success":
            texts.append(e.result)
    texts += [f"{s.get('title', '')} {s.get('snippet', '')} {s.get('url', '')}" for s in sources]
    return texts


def _numbers(ledger_texts: list[str], known: Iterable[str]) -> list[tuple[float, bool]]:
    """Every number the run shows, and whether it may be a percentage: one with decimals or a
    % sign (93.5, 93.5 %), never a bare whole number (1 permutation is not 1 %)."""
    found: list[tuple[float, bool]] = []
    for text in [*ledger_texts, *known]:
        for number, pct in re.findall(r"(\d+(?:\.\d+)?)(\s?%)?", text):
            found.append((float(number), "." in number or bool(pct)))
        found += [(float(total), False) for total in _totals(text)]
    return found


# a list of labelled counts ("events: left_hand 10, right_hand 10"): its total is shown too; a
# label starts only where no word goes on before it, so a long pasted word is scanned once, not
# once per letter (20,000 letters took 0.5-0.8 s on the shared event loop)
COUNTS = re.compile(r"(?<![\w-])[A-Za-z_][\w-]* \d+(?![\d.])(?:, [A-Za-z_][\w-]* \d+(?![\d.]))+")


def _totals(text: str) -> list[int]:
    """The totals of the labelled count lists in `text` (#23 golden, eeg-load-both-sessions:
    "Events recorded: 20 (left_hand, right_hand)" for "left_hand 10, right_hand 10" is the
    sum the result shows, and was flagged as made up)."""
    return [sum(int(n) for n in re.findall(r" (\d+)", m.group())) for m in COUNTS.finditer(text)]


def _states_a_result(text: str, pct: str | None) -> bool:
    """A decimal, a percentage, or a whole number from 10 up (not '2 files' or 'step 3')."""
    return "." in text or bool(pct) or float(text) >= 10


def _grounded(text: str, percent: bool, known: list[tuple[float, bool]]) -> bool:
    """`text` is some known value as written: rounded to its decimals, or as a percentage."""
    value = float(text)
    decimals = len(text.split(".")[1]) if "." in text else 0
    tol = 0.5 * 10**-decimals + 1e-9
    forms = [(value, tol), (value / 100, tol / 100)]  # 93.5% is 0.935
    if any(abs(k - v) <= t for k, _ in known for v, t in forms):
        return True
    # 0.935 is 93.5 (%), but only a number that may be a percentage: 0.010 is no '1 permutation'
    return not percent and any(
        may_be_pct and abs(k - value * 100) <= tol * 100 for k, may_be_pct in known
    )
