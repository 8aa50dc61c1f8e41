"""A truncated recording never loads silently: what is missing reaches the tool result and the step."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.agent.graph import build_agent
from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from gdf_writer import write_raw_gdf
from support import collect, of, spec


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 724 s recording as EDF, FIF and GDF, each whole and cut short, in one data folder."""
    root = tmp_path_factory.mktemp("trunc")
    raw = make_recording(1, 1)  # 96 trials: 724 s at 250 Hz, 22 channels
    for ext in ("edf", "fif"):
        whole = root / f"sub-01_whole_eeg.{ext}"
        write_raw(raw, whole)
        data = whole.read_bytes()
        cut = 500_000 if ext == "edf" else len(data) // 2 + 3  # the 500 KB; a FIF mid-block
        (root / f"sub-01_cut_eeg.{ext}").write_bytes(data[:cut])
    gdf = write_raw_gdf(raw, root / "sub-01_whole_eeg.gdf", record_samples=125)  # 0.5 s records
    (root / "sub-01_cut_eeg.gdf").write_bytes(gdf.read_bytes()[:500_000])  # no event table either
    (root / "sub-02_stub_eeg.gdf").write_bytes(gdf.read_bytes()[: 256 * 23 + 100])  # header only
    (root / "sub-02_stub_eeg.fif").write_bytes((root / "sub-01_whole_eeg.fif").read_bytes()[:3000])
    return root


async def load(root: Path, name: str) -> tuple[str, Study]:
    study = Study(root)
    tools = {t.name: t for t in build_eeg_tools(study)}
    return await tools["load_data"].ainvoke({"files": [name]}), study


async def test_a_truncated_edf_says_what_its_header_promised(recordings: Path) -> None:
    result, study = await load(recordings, "sub-01_cut_eeg.edf")
    assert result.splitlines()[0] == "loaded 1 file(s)"
    warning = result.splitlines()[1]
    assert warning.startswith("warning: 'sub-01_cut_eeg.edf': header says 724 s, the file holds")
    held = study.state.raws[0].n_times / study.state.raws[0].info["sfreq"]
    assert 0 < held < 100 and f"the file holds {held:.0f} s: it looks truncated" in warning
    state = await {t.name: t for t in build_eeg_tools(study)}["get_study_state"].ainvoke({})
    assert "damaged: 'sub-01_cut_eeg.edf': header says 724 s" in state  # kept with the study


async def test_a_truncated_gdf_loads_what_it_holds_and_says_what_its_header_promised(
    recordings: Path,
) -> None:
    """MNE sizes a GDF by its header alone: without the crop to whole records it fails outright."""
    result, study = await load(recordings, "sub-01_cut_eeg.gdf")
    assert result.splitlines()[0] == "loaded 1 file(s)"
    (raw,) = study.state.raws
    records = (500_000 - 256 * 23) // (22 * 125 * 2)  # whole 0.5 s records of 22 int16 channels
    assert raw.n_times == records * 125
    held = raw.n_times / raw.info["sfreq"]
    assert result.splitlines()[1] == (
        f"warning: 'sub-01_cut_eeg.gdf': header says 724 s, the file holds {held:.0f} s: "
        f"it looks truncated (only those {held:.0f} s were loaded)"
    )


async def test_a_gdf_cut_inside_its_first_record_is_refused_by_name(recordings: Path) -> None:
    study = Study(recordings)
    tools = {t.name: t for t in build_eeg_tools(study)}
    with pytest.raises(ToolException, match=r"could not read 'sub-02_stub_eeg.gdf' as GDF.*trunc"):
        await tools["load_data"].ainvoke({"files": ["sub-02_stub_eeg.gdf"]})
    assert study.stage == "empty"


async def test_a_whole_edf_fif_and_gdf_load_without_a_warning(recordings: Path) -> None:
    for name in ("sub-01_whole_eeg.edf", "sub-01_whole_eeg.fif", "sub-01_whole_eeg.gdf"):
        result, study = await load(recordings, name)
        assert "warning" not in result and "damaged" not in result, name
        assert study.state.raws[0].times[-1] > 720


async def test_a_fif_cut_short_loads_its_intact_blocks_and_says_the_rest_is_missing(
    recordings: Path,
) -> None:
    result, study = await load(recordings, "sub-01_cut_eeg.fif")
    held = study.state.raws[0].times[-1]
    assert 300 < held < 400  # about half of the 724 s
    assert "warning: 'sub-01_cut_eeg.fif' ends early: it looks cut short" in result
    assert "the rest of the recording is missing" in result


async def test_a_fif_cut_inside_its_header_is_refused_by_name(recordings: Path) -> None:
    study = Study(recordings)
    tools = {t.name: t for t in build_eeg_tools(study)}
    with pytest.raises(ToolException, match=r"could not read 'sub-02_stub_eeg.fif' as FIF.*trunc"):
        await tools["load_data"].ainvoke({"files": ["sub-02_stub_eeg.fif"]})
    assert study.stage == "empty"


async def test_the_truncation_reaches_the_agent_step(scripted_server, recordings: Path) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": ["sub-01_cut_eeg.edf"]})]), Text("ok"))
    s.queue("ans", Text("The file looks truncated."))
    limits = AgentLimits(max_iterations=4, max_execution_time=120)
    agent = build_agent(make_chat_model(spec(s, "fc"), "function_call"),
                        make_chat_model(spec(s, "ans"), "answer"),
                        build_eeg_tools(Study(recordings)), limits)  # fmt: skip
    events = await collect(agent.run("load sub-01_cut_eeg.edf"))
    done = of(events, "tool_finished")
    assert [(e.name, e.status) for e in done] == [("load_data", "success")]
    assert "header says 724 s" in done[0].content and "looks truncated" in done[0].content
    # and the model's next request carries it, so the answer can tell the user
    assert any("header says 724 s" in str(r) for r in s.requests_for("fc")[1:])


@pytest.mark.parametrize("name", ["sub-01_cut_eeg.edf", "sub-01_cut_eeg.fif", "sub-01_cut_eeg.gdf"])
def test_an_exported_script_reads_a_cut_recording_as_brainchat_did(
    recordings: Path, name: str
) -> None:
    """The exported script's reader (its text is script_helpers.py) must load the same samples
    brainchat analysed, or the script of a study on a cut file fails or differs."""
    import numpy as np

    from brainchat.eeg.export import script_helpers
    from brainchat.eeg.io.loading import read_raw

    path = recordings / name
    ours = read_raw(path)
    theirs = script_helpers.read_raw(path, name.rsplit(".", 1)[1])
    assert theirs.n_times == ours.n_times < 724 * 250
    assert np.array_equal(theirs.get_data(), ours.get_data())
