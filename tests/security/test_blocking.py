"""Slow tool bodies run off the event loop: other sessions go on, timeouts hold, listings are bounded."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.agent.graph import build_agent
from brainchat.eeg.io.listing import MAX_LISTED_ENTRIES
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.schemas import NoArgs
from brainchat.eeg.tools.toolkit import READ_ONLY, make_tool
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, of, spec, text

TOP, MID, FILES = 21, 50, 20  # 21 x 50 folders of 20 files: over the 20,000-entry cap


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real data folder of ~22,000 entries; the first folder holds EEG names, the last one too."""
    root = tmp_path_factory.mktemp("big")
    for i in range(TOP):
        for j in range(MID):
            leaf = root / f"d{i:02d}" / f"e{j:02d}"
            leaf.mkdir(parents=True)
            for k in range(FILES):
                (leaf / f"f{k:02d}.txt").touch()
    (root / "d00" / "e00" / "sub-01_ses-01_eeg.edf").touch()
    (root / f"d{TOP - 1:02d}" / "zz_sub-99_eeg.edf").touch()  # past the cap in walk order
    assert TOP * MID * (FILES + 1) > MAX_LISTED_ENTRIES
    return root


def tools_of(study: Study) -> dict:
    return {t.name: t for t in build_eeg_tools(study)}


async def test_a_slow_listing_does_not_freeze_another_session(
    big_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic, not by timing: the listing's walk is held at its first match until the other
    session has finished, which can only happen if the walk is off the event loop. On the loop,
    the hold would wait out its 30 s and the other session would finish second."""
    from brainchat.eeg.io import listing as listing_module

    other_done, held = threading.Event(), threading.Event()
    real = listing_module.infer_subject_session

    def held_at_first_match(path: Path) -> tuple[str, str]:
        if not held.is_set():
            held.set()
            other_done.wait(30)
        return real(path)

    monkeypatch.setattr(listing_module, "infer_subject_session", held_at_first_match)
    slow, other = tools_of(Study(big_tree)), tools_of(Study(big_tree))
    finished: list[str] = []

    async def session(name: str, tool: str) -> str:
        result = await (slow if name == "slow" else other)[tool].ainvoke({})
        finished.append(name)
        return result

    listing = asyncio.create_task(session("slow", "list_data_files"))
    while not held.is_set():  # the walk has reached its first match and waits there
        assert not listing.done(), "the listing ended before its first match"
        await asyncio.sleep(0.01)
    await asyncio.wait_for(session("other", "get_study_state"), 30)
    other_done.set()
    assert "sub-01_ses-01_eeg.edf" in await asyncio.wait_for(listing, 60)
    # today's code globbed on the event loop: the other session waited for the whole walk
    assert finished == ["other", "slow"]


async def test_the_tool_timeout_holds_for_a_slow_sync_body(scripted_server, big_tree: Path) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("list_data_files", {"pattern": "*.edf"})]), Text("ok"))
    s.queue("ans", Text("The listing took too long; the answer goes on."))
    limits = AgentLimits(max_iterations=4, max_execution_time=120, tool_timeout=0.001)
    agent = build_agent(make_chat_model(spec(s, "fc"), "function_call"),
                        make_chat_model(spec(s, "ans"), "answer"),
                        build_eeg_tools(Study(big_tree)), limits)  # fmt: skip
    events = await asyncio.wait_for(collect(agent.run("list my files")), 120)
    done = of(events, "tool_finished")
    assert [(e.name, e.status) for e in done] == [("list_data_files", "error")]
    assert "did not finish within" in (done[0].error or "")
    assert "the answer goes on" in text(events)
    assert of(events, "run_finished")[0].reason == "answered"


async def test_more_than_one_double_star_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "sub-01_eeg.edf").touch()
    tools = tools_of(Study(tmp_path))
    with pytest.raises(ToolException, match=r"at most one '\*\*'"):
        await tools["list_data_files"].ainvoke({"pattern": "**/**/**/**/**/*"})
    one = await tools["list_data_files"].ainvoke({"pattern": "a/**/*.edf"})
    assert "1 file(s)" in one and "sub-01_eeg.edf" in one


async def test_a_tree_over_the_cap_says_the_listing_was_cut(big_tree: Path) -> None:
    listing = await tools_of(Study(big_tree))["list_data_files"].ainvoke({"pattern": "*.edf"})
    assert "sub-01_ses-01_eeg.edf" in listing
    assert "zz_sub-99_eeg.edf" not in listing
    assert "listing was cut" in listing and f"{MAX_LISTED_ENTRIES:,}" in listing
    description = tools_of(Study(big_tree))["list_data_files"].description
    assert f"{MAX_LISTED_ENTRIES:,}" in description


async def test_a_blocking_tool_body_never_holds_the_event_loop() -> None:
    """Deterministic: the sync body waits for the other session, which can only run if the body
    is off the loop. On the loop, it would wait out its 30 s and report it was never released."""
    released = threading.Event()
    order: list[str] = []

    def slow_body(*, stop: threading.Event) -> str:
        ok = released.wait(30)
        order.append("slow")
        return "released" if ok else "never released"

    tool = make_tool(slow_body, "slow_tool", "blocks until released", NoArgs, **READ_ONLY)

    async def other_session() -> None:
        await asyncio.sleep(0)  # a coroutine of another chat: it needs the loop to run
        order.append("other")
        released.set()

    slow = asyncio.create_task(tool.ainvoke({}))
    await asyncio.wait_for(other_session(), 30)
    assert await asyncio.wait_for(slow, 60) == "released"
    assert order == ["other", "slow"]


async def test_a_timed_out_body_is_told_to_stop() -> None:
    stopped = threading.Event()

    def endless(*, stop: threading.Event) -> str:
        while not stop.wait(0.01):
            pass
        stopped.set()
        return "stopped"

    tool = make_tool(endless, "endless", "runs until stopped", NoArgs)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(tool.ainvoke({}), 0.2)
    assert await asyncio.to_thread(stopped.wait, 30)  # the thread ended: nothing left running


async def test_a_pattern_starting_with_a_subfolder_walks_only_that_folder(big_tree: Path) -> None:
    tools = tools_of(Study(big_tree))
    listing = await tools["list_data_files"].ainvoke({"pattern": f"d{TOP - 1:02d}/*.edf"})
    assert listing.startswith("1 file(s) in the data folder:")  # found past the cap of a full walk
    assert f"d{TOP - 1:02d}/zz_sub-99_eeg.edf" in listing and "listing was cut" not in listing
    assert str(big_tree) not in listing  # the folder's place on disk is not the model's business
    deep = await tools["list_data_files"].ainvoke({"pattern": "d00/**/*.edf"})
    assert "d00/e00/sub-01_ses-01_eeg.edf" in deep and "zz_sub-99" not in deep
