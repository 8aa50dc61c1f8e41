"""The figures a result rests on, shown under an answer that states none of them.

An answer model asked whether a decoder works may reply "yes, it works" after a cross-validation
and give no score, no chance level and no p-value: true to nothing the reader can check. When the
run's last result (a tool the domain names as producing results: a cross-validation, an
evaluation, an analysis) has figures and the answer states none of them, the result's own lines
follow the answer, marked as brainchat's, so the reader sees what the verdict rests on. Nothing
of the answer is changed or removed.
"""

from __future__ import annotations

from brainchat.agent.context import Deps
from brainchat.agent.state import RunContext
from brainchat.grounding.figures import Shown, figures

SHOWN_LINES = 10  # of the result's lines that measure: its heading, the rows of scores and tests


def shown_under(d: Deps, run: RunContext, answer: str) -> str:
    """What follows the answer: the last result's lines when the answer states none of its
    figures; otherwise nothing."""
    vocab = d.domain.vocabulary
    units = vocab.all_units()
    last = next(
        (e for e in reversed(run.ledger.successful()) if e.name in vocab.result_tools), None
    )
    if last is None or not any("." in f.text for f in figures(last.result, units)):
        return ""  # no result, or one with no measured figure to show
    shown = Shown([last.result], units)
    if any(shown.holds(f) for f in figures(answer, units)):
        return ""
    # the lines that measure (a decimal figure) and a table's rows and header; not the
    # result's notes to the model (a figure "shown to the user", a next-step hint)
    lines = [
        line
        for line in last.result.splitlines()
        if "|" in line or any("." in f.text for f in figures(line, units))
    ][:SHOWN_LINES]
    body = "\n".join(lines)
    return (
        f"\n\n---\n*The answer states none of the figures {last.name} returned; they are, as "
        f"the tool wrote them (added by brainchat):*\n```\n{body}\n```"
    )
