"""What the answer model is asked: a citation only where web sources exist, and the figures to
state only after the result that holds them (issue #23, golden and bench runs of 27 Nov with
Qwen2.5-Coder-1.5B as the answer model: primed with "cite as [n]" for every answer it numbered
a file list [1]..[4] with no source at all, and told "after an evaluation: the accuracy ... and
the split" for every answer it gave a web search's answer an accuracy and a split). Through the
scripted server over real HTTP, against the real search and EEG tools."""

from __future__ import annotations

import pytest

from brainchat.agent.answer_input import STATE, state_line
from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.prompts import load_prompt
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.search import FixtureBackend, make_search_tool
from test_prompt_epoch_args import BANDPASS, fenced
from test_prompt_pipeline import LOAD, PIPELINE, agent

from support import collect, of, spec, write_fixture


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
    s.queue("fc", Text("The files are listed."))
    s.queue("ans", Text("Two files: sub-01 ses-01 and ses-02."))
    await collect(agent(s, study).run("Which EEG files are in my data folder?"))
    text = asked(s)
    assert STATE["list_data_files"] in text
    assert "[n]" not in text and "cite" not in text.lower()
    assert "accuracy" not in text.lower()


async def test_an_evaluation_asks_for_its_figures_after_its_result(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})),
            Text(fenced("split_dataset", {"by": "trial"})),
            Text(fenced("train_model", {"model": "csp_lda"})),
            Text(fenced("evaluate_model", {"model": "csp_lda"})), Text("Done."))  # fmt: skip
    s.queue("ans", Text("CSP+LDA scored as the evaluation says."))
    await collect(agent(s, study).run(PIPELINE))
    text = asked(s)
    result = text.index("- evaluate_model(")
    assert text.index(STATE["evaluate_model"]) > result  # said after the result it is about
    assert text.count("(State from this result") == 1  # and after no other result


async def test_an_answer_that_repeats_a_figures_line_is_an_echo(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text("The files are listed."))
    s.queue("ans", Text(f"Here you go. {STATE['list_data_files']}"))
    events = await collect(agent(s, study).run("Which EEG files are in my data folder?"))
    (notice,) = [n for n in of(events, "notice") if n.kind == "ungrounded"]
    assert "repeated brainchat's instructions" in notice.message


# the first line of the cross_validate result of the golden run of 27 Nov
# (eeg-crossval-across-sessions, one pipeline): its answer gave "a W of 0.404 and a p of 0.053"
ONE_PIPELINE = (
    "cross_validate cross_session (leave-one-out: each session held out in turn, seed 0): 80 "
    "epochs (left_hand/right_hand), 2 subject(s), 4 subject-session group(s); score ROC AUC "
    "(chance ~0.5)\npipeline | mean ± sd over subjects | permutation chance, p | per subject 01 02"
    "\ncsp_lda | 0.61 ± 0.04 | 0.502, p=0.048 (20 perms) | 0.57 0.65\n"
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
        "the score's name (balanced accuracy)" in two and "the paired test with its W and p" in two
    )
    assert state_line("load_data", "loaded 2 file(s)") == STATE["load_data"]
