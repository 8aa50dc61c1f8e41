"""An answer that used the run's web sources and cited none gets their numbers after the
sentences drawn from them, placed by brainchat and said so; an answer that cites, or that says
what no source says, is left as written. Over real HTTP with the scripted server."""

from __future__ import annotations

import pytest

from brainchat.agent.graph import build_agent
from brainchat.grounding import sentences
from brainchat.grounding.attribution import attribute
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.search import FixtureBackend, make_search_tool

from support import SEARCH_RESULTS, collect, of, spec, write_fixture

SOURCES = [dict(s, n=i + 1) for i, s in enumerate(SEARCH_RESULTS)]


def models(server):
    return (
        make_chat_model(spec(server, "fc"), "function_call"),
        make_chat_model(spec(server, "ans"), "answer"),
    )


@pytest.fixture
def search(tmp_path):
    return make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})


async def run(server, search, question: str, answer: str):
    server.queue("fc", ToolCalls([Call("web_search", {"query": "mne formats"})]), Text("done"))
    server.queue("ans", Text(answer))
    return await collect(build_agent(*models(server), [search]).run(question))


@pytest.mark.scripted_lenient("a search round that found sources ends the loop")
async def test_an_uncited_answer_drawn_from_a_source_gets_its_number(
    scripted_server, search
) -> None:
    events = await run(
        scripted_server,
        search,
        "Which file formats can MNE read?",
        "MNE-Python can read EDF, BDF, FIF, BrainVision and EEGLAB files.",
    )
    finished = of(events, "run_finished")[0]
    assert finished.answer == "MNE-Python can read EDF, BDF, FIF, BrainVision and EEGLAB files [4]."
    assert [s["n"] for s in of(events, "citations")[0].sources] == [4]
    assert of(events, "answer_checked")[0].text == finished.answer  # the page shows it too
    told = [n.message for n in of(events, "notice") if "brainchat added [4]" in n.message]
    assert told and "cited no source" in told[0]


@pytest.mark.scripted_lenient("a search round that found sources ends the loop")
async def test_a_chinese_answer_is_attributed_the_same_way(scripted_server, search) -> None:
    events = await run(
        scripted_server,
        search,
        "MNE 能读取哪些文件格式？",
        "MNE-Python 可以读取 EDF、BDF、FIF、BrainVision 和 EEGLAB 文件。",
    )
    assert of(events, "run_finished")[0].answer.endswith("EEGLAB 文件 [4]。")


@pytest.mark.scripted_lenient("a search round that found sources ends the loop")
async def test_an_answer_that_cites_is_left_as_its_model_wrote_it(scripted_server, search) -> None:
    said = "MNE-Python reads EDF and FIF files [4]. It also reads EEGLAB files."
    events = await run(scripted_server, search, "Which file formats can MNE read?", said)
    assert of(events, "run_finished")[0].answer == said
    assert not [n for n in of(events, "notice") if "brainchat added" in n.message]


def test_a_sentence_no_source_says_gets_no_number() -> None:
    said = "EEGNet is a neural network. I am not sure what else to say about it here."
    assert attribute(said, sentences(said), SOURCES, "What is EEGNet?") == (said, [])


def test_the_requests_own_words_and_words_every_source_has_show_no_source() -> None:
    # every word this sentence shares with source [1] is the request's own
    said = "EEGNet is a compact CNN for EEG-based BCIs."
    asked = "Is EEGNet a compact CNN for EEG-based BCIs?"
    assert attribute(said, sentences(said), SOURCES, asked) == (said, [])
    # two sources alike: the words they share tell neither apart
    twins = [dict(SOURCES[3], n=1), dict(SOURCES[3], n=2, url="https://example.org/mirror")]
    said = "MNE-Python reads EDF, BDF, FIF, BrainVision and EEGLAB files."
    assert attribute(said, sentences(said), twins, "formats?") == (said, [])


def test_a_sentence_using_two_sources_alike_is_not_given_either() -> None:
    said = "EEGNet uses depthwise convolutions, and CSP maximises variance between two classes."
    assert attribute(said, sentences(said), SOURCES, "compare") == (said, [])
