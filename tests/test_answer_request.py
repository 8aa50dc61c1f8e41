"""What the answer model is asked: a citation only where web sources exist, the figures to state
only right after the result that holds them, and closing lines that say what may be answered
without tools and in which language.

A small answer model takes every instruction it reads as something to do: primed in general with
"cite as [n]" it numbers a file list [1]..[4] with no source at all, and told in general to state
"the accuracy and the split" it gives a web search's answer an accuracy and a split. So the
request asks for citations only beside the numbered sources, and the EEG domain's line on what to
state from a result (eeg/guidance/answers.py) follows that result alone. Through the scripted
server over real HTTP, against the real search and EEG tools.
"""

from __future__ import annotations

import pytest

from brainchat.agent.graph import build_agent
from brainchat.eeg.guidance.answers import STATE, state_line
from brainchat.llm import make_chat_model
from brainchat.prompts import load_prompt
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.search import FixtureBackend, make_search_tool
from test_prompt_epoch_args import BANDPASS, fenced
from test_prompt_pipeline import LOAD, PIPELINE, agent, understood

from support import collect, of, record, spec, write_fixture

LISTING = record(["list"], listing=True)  # "Which EEG files are in my data folder?"


def asked(server) -> str:
    """The answer request's last message: the request and the results."""
    return str(server.requests_for("ans")[-1].messages[-1]["content"])


def test_the_system_prompt_asks_for_no_citation_marker_of_its_own() -> None:
    prompt = load_prompt("answer")
    assert "[n]" not in prompt and "after an evaluation" not in prompt.lower()
    assert "never state a figure that no tool result gives" in prompt


async def test_a_search_asks_for_citations_and_for_no_evaluation_figures(
    scripted_server, tmp_path
) -> None:
    s = scripted_server
    search = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})
    s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet"})]), Text("Enough."))
    s.queue("ans", Text("EEGNet is a compact CNN [1]."))
    fc = make_chat_model(spec(s, "fc"), "function_call")
    ans = make_chat_model(spec(s, "ans"), "answer")
    limits = AgentLimits(evaluation="model")
    await collect(build_agent(fc, ans, [search], limits).run("What is EEGNet? Cite sources."))
    text = asked(s)
    assert "Web sources (cite as [n], with these numbers only" in text
    assert "accuracy" not in text.lower() and "split" not in text.lower()


@pytest.fixture
def study(tmp_path):
    from brainchat.eeg.io.synthetic import write_demo_set
    from brainchat.eeg.study.study import Study

    write_demo_set(tmp_path / "data" / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(tmp_path / "data")


async def test_a_listing_asks_for_the_files_by_name_and_for_no_citation(scripted_server, study):
    s = scripted_server
    s.queue("fc", LISTING, Text("The files are listed."))  # brainchat lists the folder first
    s.queue("ans", Text("Two files: sub-01 ses-01 and ses-02."))
    await collect(agent(s, study).run("Which EEG files are in my data folder?"))
    text = asked(s)
    assert text.index(STATE["list_data_files"]) > text.index("- list_data_files(")
    assert "[n]" not in text and "cite" not in text.lower()
    assert "accuracy" not in text.lower()


async def test_an_evaluation_asks_for_its_figures_after_its_result(scripted_server, study):
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})),
            Text(fenced("split_dataset", {"by": "trial"})),
            Text(fenced("train_model", {"model": "csp_lda"})),
            Text(fenced("evaluate_model", {"model": "csp_lda"})), Text("Done."))  # fmt: skip
    s.queue("ans", Text("CSP+LDA scored as the evaluation says."))
    await collect(agent(s, study).run(PIPELINE))
    text = asked(s)
    result = text.index("- evaluate_model(")
    # said after the result it is about; a split by trial of two sessions asks for its note too
    assert text.index(STATE["evaluate_model"].removesuffix(".)")) > result
    assert "and what its 'split note:' says the test scores can show" in text
    assert text.count("(State from this result") == 1  # and after no other result


async def test_without_the_eeg_domain_no_result_gets_a_line_on_what_to_state(
    scripted_server, study
):
    """The lines are the EEG domain's: an agent built without it (a field brainchat knows
    nothing of) gets the results alone."""
    from brainchat.eeg.tools.tools import build_eeg_tools

    s = scripted_server
    s.queue("fc", ToolCalls([Call("list_data_files", {})]), Text("Listed."))
    s.queue("ans", Text("Two files."))
    fc = make_chat_model(spec(s, "fc"), "function_call")
    ans = make_chat_model(spec(s, "ans"), "answer")
    bare = build_agent(fc, ans, build_eeg_tools(study), AgentLimits(evaluation="model"))
    await collect(bare.run("Which EEG files are in my data folder?"))
    text = asked(s)
    assert "- list_data_files(" in text and STATE["list_data_files"] not in text


async def test_an_answer_that_repeats_a_figures_line_is_an_echo(scripted_server, study):
    s = scripted_server
    s.queue("fc", LISTING, Text("The files are listed."))
    s.queue("ans", Text(f"Here you go. {STATE['list_data_files']}"))
    events = await collect(agent(s, study).run("Which EEG files are in my data folder?"))
    (notice,) = [n for n in of(events, "notice") if n.kind == "ungrounded"]
    assert "repeated brainchat's instructions" in notice.message


KNOWLEDGE = "No tools were used; answer from your own knowledge."
NEEDED = "No tool was called, although the request needs tools"
NEUTRAL = "No tool was called in this run."


@pytest.mark.parametrize(
    ("question", "made", "line", "not_said"),
    [
        ("What is the mu rhythm?", record(needs_tools=False), KNOWLEDGE, (NEEDED, NEUTRAL)),
        ("Search the web for this year's mu rhythm papers.", record(web=True), NEEDED,
         (KNOWLEDGE, NEUTRAL)),
    ],
)  # fmt: skip
async def test_with_no_tool_run_the_record_says_whether_knowledge_may_answer(
    scripted_server, study, question, made, line, not_said
):
    """Own knowledge is allowed only when the record says the request needs no tool; a request
    that needed tools and got none is to be answered as such, with nothing made up."""
    s = scripted_server
    s.queue("fc", made, Text("No tools needed."))
    s.queue("ans", Text("Here is the answer."))
    events = await collect(agent(s, study).run(question))
    assert not of(events, "tool_call_started")
    text = asked(s)
    assert line in text and not any(other in text for other in not_said)
    if line == NEEDED:
        assert "do not invent files, data, results or sources" in text


async def test_with_no_tool_run_and_no_record_both_cases_are_named(scripted_server, study):
    """A model calling tools natively makes no record: the answer model is told what to do in
    either case, never that no tools were needed."""
    s = scripted_server
    s.queue("fc", Text("No tools needed."))
    s.queue("ans", Text("Hello."))
    await collect(agent(s, study, "native").run("Hello, who are you?"))
    text = asked(s)
    assert NEUTRAL in text and KNOWLEDGE not in text and NEEDED not in text
    assert "invent no files, data, results or sources" in text


@pytest.mark.parametrize(
    ("language", "question", "line"),
    [
        ("zh", "你好", "Write the answer in Chinese, the language of the user's request; keep "
         "tool names, file names, figures and the results' names of measures, tests and methods "
         "as they are written."),
        ("de", "Hallo, wer bist du?", "Write the answer in German, the language of the user's "
         "request;"),
        ("", "Hallo, wer bist du?", "Write the answer in the language of the user's request."),
    ],
)  # fmt: skip
async def test_the_answer_request_ends_with_the_language_of_the_request(
    scripted_server, study, language, question, line
):
    """The record names the request's language, in any language; without one, a request in
    Latin letters is answered in its own language, as the model reads it."""
    s = scripted_server
    s.queue("fc", record(language=language, needs_tools=False), Text("No tools needed."))
    s.queue("ans", Text("Hello."))
    await collect(agent(s, study).run(question))
    assert asked(s).rstrip().splitlines()[-1].startswith(line)


# the first line of a cross_validate result of one pipeline, whose answer gave a Wilcoxon W and
# p that no test had computed
ONE_PIPELINE = (
    "cross_validate cross_session (leave-one-out: each session held out in turn, seed 0): 80 "
    "epochs (left_hand/right_hand), 2 subject(s), 4 subject-session group(s); score ROC AUC "
    "(chance ~0.5)\npipeline | mean ± sd over subjects | permutation test | per subject 01 02"
    "\ncsp_lda | 0.61 ± 0.04 | chance 0.502, p=0.048 (20 perms) | 0.57 0.65\n"
    "paired test: none (one pipeline; a Wilcoxon test compares two pipelines)"
)
TWO = ONE_PIPELINE.replace("score ROC AUC", "score balanced accuracy").replace(
    "paired test: none (one pipeline; a Wilcoxon test compares two pipelines)",
    "Wilcoxon signed-rank csp_lda vs ts_lr over 2 subjects: W=0.0, p=0.500",
)


def test_a_cross_validation_asks_for_its_score_by_name_and_only_a_test_that_ran() -> None:
    one = state_line("cross_validate", ONE_PIPELINE)
    assert "the score's name (ROC AUC)" in one  # the within-session answer left it out
    assert "W and p" not in one and "no paired test ran, so state none" in one
    two = state_line("cross_validate", TWO)
    assert (
        "the score's name (balanced accuracy)" in two
        and "the paired test by its name with its W and p" in two
    )
    assert state_line("load_data", "loaded 2 file(s)") == STATE["load_data"]
