"""The EEG tools driven through the agent graph by scripted tool calls over real HTTP."""

from __future__ import annotations

from pathlib import Path

from brainchat.agent.graph import build_agent
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, of, spec

PNG = b"\x89PNG\r\n\x1a\n"
LIMITS = AgentLimits(max_iterations=12, max_auto_rounds=12, max_execution_time=300)


def agent_for(server, study: Study, confirm=None):
    fc = make_chat_model(spec(server, "fc"), "function_call")
    ans = make_chat_model(spec(server, "ans"), "answer")
    return build_agent(fc, ans, build_eeg_tools(study), LIMITS, confirm=confirm,
                       context=study.summary)  # fmt: skip


async def test_full_pipeline_through_the_agent(scripted_server, tmp_path: Path) -> None:
    write_demo_set(tmp_path, subjects=1, sessions=2, trials=40, seed=2)
    files = edf_names(tmp_path)
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls([Call("list_data_files", {"pattern": "*.edf"})]),
        ToolCalls([Call("load_data", {"files": files})]),
        ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]),
        ToolCalls([Call("epoch_data", {"tmin": 2.0, "tmax": 1.0})]),  # bad: the model retries
        ToolCalls([Call("resample_data", {"sfreq": 125}), Call("plot_psd", {})]),
        ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),
        ToolCalls([Call("split_dataset", {"by": "session", "test_ratio": 0.5, "val_ratio": 0.2})]),
        ToolCalls([Call("train_model", {"model": "eegnet", "epochs": 3, "seed": 0})]),
        ToolCalls([Call("evaluate_model", {"model": "eegnet"})]),
        Text("Done: EEGNet trained and evaluated."),
    )
    s.queue("ans", Text("EEGNet reached the accuracy shown in the confusion matrix."))
    study = Study(tmp_path)
    events = await collect(agent_for(s, study).run("load, band-pass 8-30 Hz, epoch, train EEGNet"))
    finished = {(e.name, e.status) for e in of(events, "tool_finished")}
    assert ("epoch_data", "error") in finished
    for name in ("list_data_files", "load_data", "bandpass_filter", "resample_data", "plot_psd",
                 "epoch_data", "split_dataset", "train_model", "evaluate_model"):  # fmt: skip
        assert (name, "success") in finished, name
    bad = next(e for e in of(events, "tool_finished") if e.status == "error")
    assert "tmin (2 s) must be before tmax (1 s)" in (bad.error or bad.content)
    images = of(events, "tool_image")
    assert {i.title for i in images} >= {"PSD per channel group 1-45 Hz", "eegnet confusion matrix",
                                          "eegnet training curves"}  # fmt: skip
    assert all(i.png.startswith(PNG) for i in images)
    calls = {e.call_id: e.name for e in of(events, "tool_call_started")}
    assert all(calls[i.call_id] == i.name for i in images)
    progress = of(events, "tool_progress")
    epochs = [p for p in progress if p.data.get("epoch")]  # besides them: the phases (#40)
    assert [p.data["epoch"] for p in epochs] == [1, 2, 3]
    assert all(calls[p.call_id] == "train_model" for p in epochs)
    assert [p.phase for p in progress if calls[p.call_id] == "train_model"][:3] == [
        "preparing", "building", "training"
    ]  # fmt: skip
    assert of(events, "study_changed")[-1].stage == "trained"
    assert study.stage == "trained" and "eegnet" in study.state.results
    # the function-call model saw the study's summary in its prompt each turn
    prompts = ["".join(str(m["content"]) for m in r.messages if m["role"] == "system")
               for r in s.requests_for("fc")]  # fmt: skip
    assert "EEG study: empty" in prompts[1] and "stage=loaded" in prompts[2]
    assert "stage=split" in prompts[7] and "stage=trained" in prompts[8]
    assert of(events, "run_finished")[0].reason == "answered"


async def test_clear_study_asks_first(scripted_server, tmp_path: Path) -> None:
    write_demo_set(tmp_path, subjects=1, sessions=1, trials=10, seed=2)
    s = scripted_server
    study = Study(tmp_path)
    for _ in range(2):
        s.queue("fc", ToolCalls([Call("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})]),
                ToolCalls([Call("clear_study", {})]), Text("ok"))  # fmt: skip
        s.queue("ans", Text("ok"))
    asked: list[str] = []

    async def reject(name, args):
        asked.append(name)
        return False

    events = await collect(agent_for(s, study, confirm=reject).run("clear"))
    assert asked == ["clear_study"] and study.stage == "loaded"
    assert of(events, "tool_finished")[-1].status == "refused"

    async def approve(name, args):
        return True

    study2 = Study(tmp_path)
    events = await collect(agent_for(s, study2, confirm=approve).run("clear"))
    assert of(events, "tool_finished")[-1].status == "success" and study2.stage == "empty"


def edf_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.edf"))
