"""Claims: sentences that say a tool or a step ran, or judge results, checked against the run.

- A tool named as done (its name, or its name with spaces) must have succeeded in this run or,
  for a step of an earlier turn, show in the study's summary; one never called is flagged as
  surely as one that failed.
- A step named as done ("the data were band-passed", "已完成带通滤波") likewise.
- A verdict (better, separable, significant, 优于, 显著 ...) needs a result to rest on: with no
  result-producing tool successful in this run and none in the study, a verdict is flagged when
  the run used tools (the request was about what they gather) or it names the user's data; with
  results, each thing the verdict names (a pipeline, a model) must appear in them. A verdict that
  cites a source rests on the source, and one whose words the run's results use themselves (a
  source's "separable convolutions") repeats them.

- A call the user did not approve never runs in this run: a sentence that names it (or its
  step) without denying it is flagged, a promise ("I will clear the study", "我会清空") as much
  as a claim.

The user's own words are never evidence that something ran: asking for a band-pass does not
make one. Sentences that deny, hedge, plan or ask claim nothing (lexicon.NEGATION).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from brainchat.grounding.lexicon import (
    COMPARISON,
    CONDITION,
    DENIAL,
    NEGATION,
    SUCCESS,
    VERDICT,
)
from brainchat.grounding.vocabulary import Vocabulary

CITE = re.compile(r"\[(\d{1,3})\]")
QUESTION = ("?", "？")


CLAUSE = re.compile(r"[，,；;、]|\s(?:and|but|then|und|et|y)\s|然后|然後|并且|並且|接着|接著")


def claim(
    sentence: str,
    entries: Sequence[Any],
    tools: set[str],
    study: str,
    vocab: Vocabulary,
) -> str | None:
    """Why `sentence` claims a call or a step that the run does not show (None: it does not).

    A claim is a tool's or a step's name beside a word of success in one clause: "数据已加载，
    下一步是带通滤波" claims the loading, not the band-pass."""
    if NEGATION.search(sentence) or sentence.rstrip().endswith(QUESTION):
        return None  # denied, hedged or asked: no claim
    for clause in CLAUSE.split(sentence):
        if not clause:
            continue
        success = bool(SUCCESS.search(clause))
        why = _tool_claim(clause, entries, tools, study, vocab) if success else None
        why = why or _step_claim(clause, success, entries, tools, study, vocab)
        if why:
            return why
    return None


def promise(sentence: str, entries: Sequence[Any], vocab: Vocabulary) -> str | None:
    """Why `sentence` speaks of a call the user did not approve as done or to be done (None:
    it names none, denies it, or asks or sets a condition: "if you approve it, ...")."""
    declined = {e.name for e in entries if getattr(e, "declined", False)}
    declined -= {e.name for e in entries if e.status == "success"}
    if not declined or DENIAL.search(sentence) or CONDITION.search(sentence):
        return None
    if sentence.rstrip().endswith(QUESTION):
        return None
    low = sentence.lower()
    named = [n for n in sorted(declined) if n in low or n.replace("_", " ") in low]
    named += [min(set(s.tools) & declined) for s in vocab.steps if set(s.tools) & declined and s.said.search(sentence)]  # fmt: skip
    return f"{named[0]} was not approved, and did not run" if named else None


def _tool_claim(
    clause: str, entries: Sequence[Any], tools: set[str], study: str, vocab: Vocabulary
) -> str | None:
    low = clause.lower()
    for name in sorted(tools, key=len, reverse=True):
        if name.lower() not in low and name.replace("_", " ").lower() not in low:
            continue
        tried = [e for e in entries if e.name == name]
        if any(e.status == "success" for e in tried) or _shown_in_study(name, study, vocab):
            continue
        if tried:
            return f"{name} {outcome(tried[-1])} in this run"
        return f"{name} was not called in this run"
    return None


def _step_claim(
    clause: str,
    success: bool,
    entries: Sequence[Any],
    tools: set[str],
    study: str,
    vocab: Vocabulary,
) -> str | None:
    for step in vocab.steps:
        doers = [t for t in step.tools if t in tools]
        said = success and step.said.search(clause)
        if not doers or not (said or (step.done is not None and step.done.search(clause))):
            continue
        if any(e.status == "success" and e.name in doers for e in entries):
            continue
        if step.shown.search(study):
            continue
        tried = [e for e in entries if e.name in doers]
        if tried:
            return f"{tried[-1].name} {outcome(tried[-1])} in this run"
        return f"no {step.name} step ran in this run"
    return None


def _shown_in_study(tool: str, study: str, vocab: Vocabulary) -> bool:
    """An earlier turn's call of `tool`, as the study's summary shows its step."""
    return any(tool in s.tools and s.shown.search(study) for s in vocab.steps)


def verdict(
    sentence: str,
    entries: Sequence[Any],
    results: str,
    study: str,
    sources: set[int],
    vocab: Vocabulary,
) -> str | None:
    """Why `sentence` judges results that the run did not produce (None: it does not)."""
    if NEGATION.search(sentence) or {int(n) for n in CITE.findall(sentence)} & sources:
        return None  # denied or hedged; or a verdict a source makes, cited
    named = [i for i, words in vocab.entities.items() if words.search(sentence)]
    if not VERDICT.search(sentence) and not (named and COMPARISON.search(sentence)):
        return None
    said = {m.group(0).casefold() for m in VERDICT.finditer(sentence)}
    if said and all(w in results.casefold() for w in said):
        return None  # the run's own results use the word ("separable convolutions" in a source)
    produced = any(e.status == "success" and e.name in vocab.result_tools for e in entries)
    in_study = any(words.search(study) for words in vocab.entities.values())
    if not produced and not in_study:
        # a run that used tools answers about what they gathered; one that used none answers
        # from knowledge, unless the verdict is about the user's own data
        about_data = vocab.data_refs is not None and vocab.data_refs.search(sentence)
        if entries or about_data:
            return "no tool produced a result to judge in this run"
        return None
    missing = [i for i in named if not vocab.entities[i].search(results + "\n" + study)]
    if missing:
        return f"no result for {', '.join(missing)} in this run"
    return None


def outcome(entry: Any) -> str:
    if entry.status == "skipped":
        failed = entry.reused is not None and entry.reused.status != "success"
        return "was skipped (a repeat of a call that had failed)" if failed else "was skipped"
    if entry.status == "refused":
        return "was refused"
    return f"failed ({(entry.error or 'no result')[:100]})"
