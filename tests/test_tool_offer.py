"""The tools the function-call model sees are chosen per round: EEG analysis only once data is loaded.

The session's rule (session/toolbox.py `eeg_rule`) reads the EEG workflow table
(eeg/guidance/steps.py): while the study is empty only the tools whose step needs nothing loaded
(list, load, describe) are offered beside web search; every tool is still there to run.
"""

from __future__ import annotations

from pathlib import Path

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, of, spec, write_fixture

# the EEG tools an empty study can use: listing, fetching, loading and describing the study
EMPTY_STUDY = {"list_data_files", "fetch_dataset", "load_data", "get_study_state"}
ANALYSIS = {"bandpass_filter", "epoch_data", "train_model", "plot_psd", "ica_fit", "clear_study"}


def agent_session(server, tmp_path: Path) -> Session:
    return Session(
        Settings(
            function_call_model=spec(server, "fc"),
            answer_model=spec(server, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
            search_backend="fixture",
            search_fixture=write_fixture(tmp_path / "fx.json"),
        )
    )


def demo_files(folder: Path) -> list[str]:
    write_demo_set(folder, subjects=1, sessions=1, trials=10, seed=1)
    return sorted(p.name for p in folder.rglob("*.edf"))


def offered(request) -> set[str]:
    return {t["function"]["name"] for t in request.tools or []}


async def test_a_chat_without_data_sends_no_eeg_analysis_schemas(scripted_server, tmp_path):
    session = agent_session(scripted_server, tmp_path)
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "mu rhythm"})]))
    s.queue("ans", Text("The mu rhythm is 8-13 Hz [1]."))
    await collect(session.ask("What is the mu rhythm?"))
    names = offered(s.requests_for("fc")[0])
    assert names == {"web_search", *EMPTY_STUDY}
    assert not names & ANALYSIS
    # every tool is still there to run; only its schema was left out of the request
    assert ANALYSIS <= set(session.last_agent.deps.runner.tools)


async def test_the_round_after_load_data_offers_the_analysis_tools(scripted_server, tmp_path):
    session = agent_session(scripted_server, tmp_path)
    files = demo_files(session.settings.data_dir)
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": files})]))
    s.queue("fc", ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]))
    s.queue("fc", Text("done"))
    s.queue("ans", Text("Loaded and filtered."))
    events = await collect(session.ask("Load the data and band-pass it 8-30 Hz"))
    first, second = s.requests_for("fc")[:2]
    assert not offered(first) & ANALYSIS  # empty study: list, load, state and search only
    assert ANALYSIS <= offered(second)  # the same turn, next round: the study has data
    finished = {(e.name, e.status) for e in of(events, "tool_finished")}
    assert {("load_data", "success"), ("bandpass_filter", "success")} <= finished
    builds = session.agents.builds
    s.queue("fc", Text("no tools"))
    s.queue("ans", Text("Still loaded."))
    await collect(session.ask("Is it loaded?"))
    assert ANALYSIS <= offered(s.requests_for("fc")[-1])
    assert session.agents.builds == builds  # a different subset is no new agent
