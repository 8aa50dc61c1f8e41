"""brainchat's own answer (a run out of time, an answer model that wrote nothing) names what the
run found: a search's results by title and address without [n] markers (the answer cites
nothing, so a marker would be a citation with no source), and identical calls' results once.

From the real-model bench (#23, web task run 2): a 1.5B model sent five identical web searches,
ran out of time, and the facts answer was five lines of "- web_search: [1] EEGNet: ...".
"""

from __future__ import annotations

from brainchat.agent.echo import facts_answer
from brainchat.agent.state import ToolLedger
from brainchat.agent.textcalls import BROKEN
from brainchat.grounding import NoTools, check_answer

RESULTS = [
    {"title": "EEGNet: a compact CNN for EEG-based BCIs", "url": "https://example.org/eegnet",
     "snippet": "EEGNet uses depthwise and separable convolutions."},
    {"title": "CSP filters for motor imagery", "url": "https://example.org/csp", "snippet": "..."},
]  # fmt: skip


def test_repeated_searches_are_named_once_by_title_and_address_without_markers() -> None:
    ledger = ToolLedger()
    for k in range(5):
        entry = ledger.open(f"c{k}", "web_search", {"query": "EEGNet convolutions"}, 1)
        entry.sources = ledger.number_sources(RESULTS)
        entry.finish("success", result="[1] EEGNet: a compact CNN for EEG-based BCIs\n...")
    ledger.open("c9", "load_data", {"files": ["x.edf"]}, 2).finish("error", error="no x.edf")
    text = facts_answer(ledger, "the time ran out")
    assert text.count("web_search") == 1, text
    assert "- web_search: 2 result(s): (the same, 5 times)" in text, text
    assert "  - EEGNet: a compact CNN for EEG-based BCIs (https://example.org/eegnet)" in text
    assert "  - CSP filters for motor imagery (https://example.org/csp)" in text
    assert "- load_data error: no x.edf" in text
    assert "[1]" not in text and "[2]" not in text
    # the answer carries no citation marker the run cannot back
    assert not [f for f in check_answer(text, NoTools(), [], []) if f.kind == "citation"]


def test_a_listing_still_names_its_items() -> None:
    ledger = ToolLedger()
    listing = "2 file(s) in the data folder:\ndemo/a.edf (1 MB)\ndemo/b.edf (1 MB)"
    ledger.open("c1", "list_data_files", {}, 1).finish("success", result=listing)
    text = facts_answer(ledger, "the answer model wrote nothing")
    assert "- list_data_files: 2 file(s) in the data folder:" in text
    assert "  - demo/a.edf (1 MB)" in text and "  - demo/b.edf (1 MB)" in text
    assert "(the same" not in text


def test_an_unreadable_call_is_said_without_its_made_up_name_or_repair_hint() -> None:
    """brainchat's own answer listed 'invalid_tool_call error: ... Reply with one ```json
    block ...' to the user: no tool of that name exists, and the hint was meant for the model."""
    ledger = ToolLedger()
    hint = (
        "your tool call was not valid JSON (Expecting ',' delimiter at line 1 column 63, near "
        '\'x\'). Reply with one ```json block holding {"name": "<tool name>", ...}'
    )
    entry = ledger.open("c1", BROKEN, {}, 1)
    entry.error, entry.invalid = hint, True
    entry.finish("error", error=hint)
    text = facts_answer(ledger, "the answer model repeated its instructions")
    assert "- a reply whose tool call could not be read (not valid JSON (Expecting ','" in text
    assert BROKEN not in text and "Reply with" not in text
