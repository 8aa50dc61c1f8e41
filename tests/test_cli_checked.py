"""`brainchat ask` shows what the answer check changed, as the page does: the terminal cannot take
back the streamed answer, so it prints a block added under it, the flags of marked sentences, or
else the checked answer in full (source numbers brainchat placed). Real runs over the scripted
server: one `brainchat ask` process, and agent runs whose events the terminal's printer renders."""

from __future__ import annotations

import pytest

from brainchat.cli import event_text
from brainchat.cli_answer import CheckedAnswer
from brainchat.events import Event
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from test_answer_evidence import CV, answered
from test_cli import run

from support import agent_env

HEADING = "· the answer as brainchat checked it:"


def printed(events: list[Event]) -> str:
    """The terminal's text for a run's events, as `brainchat ask` prints them."""
    answer = CheckedAnswer()
    return "".join(event_text(e) + answer.extra(e) for e in events)


def test_source_numbers_brainchat_placed_are_printed_with_the_answer(
    scripted_server, tmp_path
) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "mne formats"})]))
    s.queue("ans", Text("MNE-Python can read EDF, BDF, FIF, BrainVision and EEGLAB files."))
    env = agent_env(s, tmp_path)
    out = run(["ask", "--mode", "agent", "Which file formats can MNE read?"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    checked = out.stdout.split(HEADING, 1)[1]
    assert "EEGLAB files [4]." in checked and "brainchat added [4]" in checked


@pytest.mark.scripted_lenient("the run may answer after the one result")
async def test_figures_added_under_a_bare_verdict_are_printed_once(scripted_server) -> None:
    shown = printed(await answered(scripted_server, "cross_validate", CV, "Yes, it works."))
    assert shown.count("Yes, it works.") == 1 and HEADING not in shown
    under = shown.split("Yes, it works.", 1)[1]
    assert "added by brainchat" in under and "csp_lda | 0.612 ± 0.041" in under


@pytest.mark.scripted_lenient("the run may answer after the one result")
async def test_marked_sentences_are_listed_not_the_answer_again(scripted_server) -> None:
    said = "Yes, it works: the accuracy was 0.93."
    shown = printed(await answered(scripted_server, "cross_validate", CV, said))
    assert "⚠️ “Yes, it works: the accuracy was 0.93.”" in shown
    assert "not shown by this run" not in shown and HEADING not in shown  # no second copy
