"""No answer claims what the run cannot show: answers a real small model wrote (Qwen2.5-Coder-1.5B,
llama-server) replayed verbatim through the scripted server, against the real EEG tools; each
unverifiable statement is marked in place, said, and counted.

The check (brainchat/grounding/) knows languages, not EEG: the agent hands it the EEG domain's
vocabulary (eeg/guidance/vocabulary.py), which names the steps an answer can claim as done and
the quantities a figure can be ("22 events" is not shown by "22 ch")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainchat.agent.graph import build_agent
from brainchat.chat import stream_chat
from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.grounding import NoTools, check_answer
from brainchat.llm import make_chat_model
from brainchat.session.study_slot import study_facts
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, of, spec, write_fixture

# What the model answered after load_data failed and two identical calls were skipped
FAILED_LOAD = (
    "Steps done (successful tool calls):\n\n"
    "- load_data: file 'sub-01/1.edf' loaded successfully.\n"
    "- Training of CSP+LDA was performed, with a test accuracy of 0.97 [1]."
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg")
    write_demo_set(root, subjects=1, sessions=2, trials=12, seed=3)
    return root


def eeg_agent(server, study: Study, tools=None):
    return build_agent(
        make_chat_model(spec(server, "fc"), "function_call"),
        make_chat_model(spec(server, "ans"), "answer"),
        tools if tools is not None else build_eeg_tools(study),
        AgentLimits(),
        context=study.summary,
        facts=lambda: study_facts(study),
        domain=EEG,
    )


async def test_claims_of_a_failed_load_and_an_unrun_training_are_marked(scripted_server, data_dir):
    s = scripted_server
    guess = ToolCalls([Call("load_data", {"files": ["sub-01/1.edf"]})])
    s.queue("fc", guess, guess, guess)
    s.queue("ans", Text(FAILED_LOAD))
    events = await collect(eeg_agent(s, Study(data_dir)).run("Load sub-01 and train CSP+LDA"))
    assert [e.status for e in of(events, "tool_finished")] == ["error", "skipped", "skipped"]
    (checked,) = of(events, "answer_checked")
    flags = {(f["kind"], f["sentence"][:40]) for f in checked.flags}
    assert flags == {
        ("claim", "- load_data: file 'sub-01/1.edf' loaded "),
        ("claim", "- Training of CSP+LDA was performed, wit"),
        ("figure", "- Training of CSP+LDA was performed, wit"),
        ("citation", "- Training of CSP+LDA was performed, wit"),
    }
    why = {f["kind"]: f["why"] for f in checked.flags if "Training" in f["sentence"]}
    assert why["claim"] == "no training step ran in this run"
    assert why["figure"] == "0.97 appears in no tool result or message"
    assert why["citation"] == "[1] cites nothing: this run found no source"
    load = next(f["why"] for f in checked.flags if "load_data" in f["sentence"])
    assert load.startswith("load_data was skipped (a repeat of a call that had failed)")
    # marked in place: the sentence stays, the mark follows it, in the text the user keeps
    answer = of(events, "run_finished")[0].answer
    assert answer == checked.text
    assert "loaded successfully. ⚠️ *(not shown by this run: load_data was skipped" in answer
    notice = next(n for n in of(events, "notice") if n.kind == "ungrounded")
    assert "does not show" in notice.message and "no training step ran" in notice.message
    assert of(events, "stats")[-1].unverified == 4
    assert json.loads(json.dumps(of(events, "stats")[-1].to_dict()))["unverified"] == 4


async def test_a_grounded_answer_is_left_alone(scripted_server, data_dir):
    """Figures from the tool results (rounded, or as a percentage), steps that ran, sources that
    exist: nothing is marked."""
    s = scripted_server
    study = Study(data_dir)
    files = sorted(p.name for p in data_dir.glob("*.edf"))
    s.queue("fc", ToolCalls([Call("load_data", {"files": files})]), Text("Loaded."))
    events_probe: list = []
    s.queue("ans", Text("placeholder"))
    events_probe = await collect(eeg_agent(s, study).run("Load both sessions"))
    result = next(e for e in of(events_probe, "tool_finished") if e.name == "load_data").content
    sfreq = next(
        w
        for w in result.replace(",", " ").split()
        if w.replace(".", "").isdigit() and float(w) >= 100
    )
    s.queue("fc", Text("No tools needed."))
    s.queue(
        "ans",
        Text(
            f"Both sessions were loaded ({len(files)} files) at {sfreq} Hz; the band-pass you "
            "asked for, 8-30 Hz, is not applied yet."
        ),  # fmt: skip
    )
    events = await collect(eeg_agent(s, study).run("What did you load? I want 8-30 Hz later."))
    assert not of(events, "answer_checked")
    assert of(events, "stats")[-1].unverified == 0
    assert not [n for n in of(events, "notice") if n.kind == "ungrounded"]


async def test_web_answers_cite_only_sources_that_exist(scripted_server, tmp_path):
    from brainchat.tools.search import FixtureBackend, make_search_tool

    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet"})]), Text("Enough."))
    s.queue("ans", Text("EEGNet is a compact CNN [1][2]. It was proposed in a paper [7]."))
    agent = build_agent(
        make_chat_model(spec(s, "fc"), "function_call"),
        make_chat_model(spec(s, "ans"), "answer"),
        [search],
        AgentLimits(evaluation="model"),
    )
    events = await collect(agent.run("What is EEGNet?"))
    (checked,) = of(events, "answer_checked")
    assert [(f["kind"], f["sentence"]) for f in checked.flags] == [
        ("citation", "It was proposed in a paper [7].")
    ]
    assert "[7] cites nothing: this run found 4 source(s)" in checked.flags[0]["why"]


async def test_chat_marks_a_citation_with_no_source(scripted_server) -> None:
    """'Which files are there' answered in Chat mode ended with '[1]' although nothing exists."""
    scripted_server.queue("chat-m", Text("I cannot list your files, but EDF is common [1]."))
    events = await collect(stream_chat(spec(scripted_server, "chat-m"), [], "which files?"))
    (checked,) = of(events, "answer_checked")
    assert checked.flags[0]["why"] == "[1] cites nothing: this run found no source"
    assert of(events, "run_finished")[0].answer.endswith("this run found no source)*")
    assert of(events, "stats")[-1].unverified == 1


async def test_a_marker_repeated_on_every_line_is_marked_at_each_line_once(
    scripted_server,
) -> None:
    """Real 1.5B model, quiet bench run (25 Nov): the answer ended eight lines with "[1]" and
    the run found no source. All eight findings were put after the first line, each repeating
    the reason, and the notice listed them eight times. Now each line carries its own mark, and
    the notice names the finding once, with how often."""
    lines = ["- **Loading:** 2 files loaded. [1]", "- **Epoching:** 192 epochs. [1]",
             "- **Testing:** accuracy as computed. [1]"]  # fmt: skip
    scripted_server.queue("chat-m", Text("\n".join(lines)))
    events = await collect(stream_chat(spec(scripted_server, "chat-m"), [], "results?"))
    answer = of(events, "run_finished")[0].answer
    why = "⚠️ *(not shown by this run: [1] cites nothing: this run found no source)*"
    assert answer.splitlines() == [f"{line} {why}" for line in lines]
    assert of(events, "stats")[-1].unverified == 3  # each place still counts
    (notice,) = [n for n in of(events, "notice") if n.kind == "ungrounded"]
    assert notice.message.count("cites nothing") == 1 and "(×3)" in notice.message


# load_data's line for a recording, as the golden run's answer model read it
LOADED = (
    "- demo/sub-01_ses-01_task-mi_eeg.edf: subject 01, session 01, 22 ch @ 250 Hz, 154 s, "
    "events: left_hand 10, right_hand 10"
)


@pytest.mark.parametrize(
    ("answer", "known", "flagged"),
    [
        ("Accuracy was 93.5%.", ["test accuracy 0.9351"], False),
        ("Accuracy was 0.94.", ["test accuracy 0.9351"], False),
        ("Accuracy was 0.97.", ["test accuracy 0.9351"], True),
        ("1. Load the data.\n2. Filter 8-30 Hz.", ["filter 8 to 30"], False),
        ("There are 4 files and 2 sessions.", [], False),  # small counts are not figures
        ("Sampling rate: 250 Hz.", ["sfreq 250.0"], False),
        ("Sampling rate: 512 Hz.", ["sfreq 250.0"], True),
        ("14:00 in London is 22:00 in Tokyo.", [], False),  # clock times are not results
        ("```python\nacc = 0.123\n```\nSee above.", [], False),  # code quotes, it does not claim
        # a p-value no tool gave is not a count of 1 read as 1 %: 0.010 is no "1 permutation"
        ("The permutation test gave p = 0.010.", ["1 permutation, p = 0.5"], True),
        ("Accuracy was 0.935.", ["accuracy 93.5 %"], False),  # a percentage, as a fraction
        ("Accuracy was 0.935.", ["accuracy 93.5"], False),  # a decimal may be a percentage
        # a labelled count list's total is shown too
        ("- Events recorded: 20 (left_hand, right_hand)", [LOADED], False),
        ("- Events recorded: 30 (left_hand, right_hand)", [LOADED], True),
        # 22 is the recording's channel count ("22 ch"), not a number of events: a figure is
        # shown only as the same kind of quantity
        ("- 22 events recorded (left_hand, right_hand)", [LOADED], True),
        ("There were 22 trials.", [LOADED], True),
        ("- Events recorded: 22 (left_hand, right_hand)", [LOADED], True),  # a label before it
        ("- 22 channels (EEG)", [LOADED], False),  # 22 ch, as shown
        ("- Channels: 22 (EEG)", [LOADED], False),
        ("- Events recorded: 12", [LOADED], True),  # no sum of a label list and another number
    ],
)
def test_figures(answer: str, known: list[str], flagged: bool) -> None:
    flags = check_answer(answer, NoTools(), known, [], claims=False, vocabulary=EEG.vocabulary)
    assert bool(flags) is flagged, flags


ECHO = (
    "Say plainly which steps were done (the successful tool calls above) and which steps of the "
    'request remain, and tell the user they can reply "continue" to go on from here.\n\n'
    "Steps done (successful tool calls):\n\n- Load"
)


async def test_an_answer_that_echoes_its_instructions_is_replaced_by_the_facts(
    scripted_server, data_dir
):
    """After a stop with nothing gathered, the small model echoed the answer request's own
    instruction as its answer: brainchat states what the run shows instead, and the
    request does not point at 'the successful tool calls above' when there are none."""
    s = scripted_server
    guess = ToolCalls([Call("load_data", {"files": ["sub-01/1.edf"]})])
    s.queue("fc", guess, guess, guess)
    s.queue("ans", Text(ECHO))
    events = await collect(eeg_agent(s, Study(data_dir)).run("Load sub-01"))
    assert of(events, "run_finished")[0].reason == "loop"
    asked = s.requests_for("ans")[0].messages[-1]["content"]
    assert "successful tool calls above" not in asked
    assert "before any tool call succeeded" in asked and "nothing could be gathered" in asked
    answer = of(events, "run_finished")[0].answer
    assert answer.startswith("brainchat writes this answer itself: the answer model repeated")
    assert "- load_data error: file 'sub-01/1.edf' not found" in answer
    assert "No tool call succeeded, so nothing was gathered." in answer
    assert "Say plainly" not in answer
    checked = of(events, "answer_checked")[-1]
    assert checked.text == answer and checked.flags[0]["kind"] == "instruction"
    notice = [n for n in of(events, "notice") if "repeated brainchat's instructions" in n.message]
    assert notice and notice[0].kind == "ungrounded"


def test_a_flagged_sentence_with_inline_code_is_still_marked() -> None:
    """Inline code is left out when sentences are read; the mark must not be lost with it."""
    from brainchat.grounding import mark

    answer = "Run `raw.filter` first; accuracy was 0.97."
    flags = check_answer(answer, NoTools(), [], [], claims=False)
    assert [f.kind for f in flags] == ["figure"]
    marked = mark(answer, flags)
    assert marked.startswith(answer) and "0.97 appears in no tool result or message" in marked
