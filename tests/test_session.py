"""The headless Session: mode dispatch, search cache across turns, light imports."""

from __future__ import annotations

import subprocess
import sys

from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, of, spec, wait_for_event, write_fixture


def agent_session(server, tmp_path, **kw) -> Session:
    settings = Settings(
        function_call_model=spec(server, "fc"),
        answer_model=spec(server, "ans"),
        default_mode="agent",
        data_dir=tmp_path / "data",
        search_backend="fixture",
        search_fixture=write_fixture(tmp_path / "fx.json"),
        **kw,
    )
    return Session(settings)


async def test_repeated_query_is_served_from_session_cache(scripted_server, tmp_path) -> None:
    session = agent_session(scripted_server, tmp_path)
    s = scripted_server
    for _ in range(2):
        s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet accuracy"})]))
        s.queue("ans", Text("answer [1]"))
    first = await collect(session.ask("q1"))
    (tmp_path / "fx.json").write_text("[]")  # a real backend call now would find nothing
    second = await collect(session.ask("q2"))
    assert of(first, "tool_finished")[0].cache_hit is False
    hit = of(second, "tool_finished")[0]
    assert hit.cache_hit is True and hit.result_count == 4 and "(from cache)" in hit.summary
    assert len(session.history) == 4  # both agent turns became context


async def test_cache_can_be_switched_off(scripted_server, tmp_path) -> None:
    from brainchat.settings import AgentLimits

    session = agent_session(scripted_server, tmp_path, limits=AgentLimits(enable_cache=False))
    s = scripted_server
    for _ in range(2):
        s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet accuracy"})]))
        s.queue("ans", Text("answer"))
    await collect(session.ask("q1"))
    second = await collect(session.ask("q2"))
    assert of(second, "tool_finished")[0].cache_hit is False


async def test_mode_switch_dispatches_to_chat_or_agent(scripted_server, tmp_path) -> None:
    session = agent_session(scripted_server, tmp_path)
    scripted_server.queue("fc", Text("no tools"))
    scripted_server.queue("ans", Text("agent answer"))
    events = await collect(session.ask("hello"))
    assert of(events, "run_started")[0].mode == "agent"
    session.set_mode("chat")
    scripted_server.queue("fc", Text("chat answer"))
    events = await collect(session.ask("hello again"))
    assert (
        of(events, "run_started")[0].mode == "chat"
        and of(events, "run_finished")[0].answer == "chat answer"
    )


def test_core_imports_stay_light() -> None:
    code = "import sys, brainchat.session, brainchat.cli, brainchat.agent.graph, brainchat.session.agent_cache; print(','.join(m for m in ('torch', 'mne', 'matplotlib', 'sklearn', 'chainlit') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


async def test_usage_so_far_covers_the_call_still_streaming(scripted_server, tmp_path) -> None:
    import asyncio

    session = agent_session(scripted_server, tmp_path)
    scripted_server.queue("fc", Text("no tools"))
    scripted_server.queue("ans", Text(" ".join(f"w{i}" for i in range(100)), token_delay=0.05))
    seen: list = []

    async def consume() -> None:
        async for event in session.ask("long"):
            seen.append(event)

    task = asyncio.create_task(consume())
    await wait_for_event(seen, "answer_token", 5)
    rows = {r.role: r for r in session.usage_so_far()}
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    reported = scripted_server.requests_for("fc")[0].usage
    assert rows["function_call"].input_tokens == reported["prompt_tokens"]
    assert rows["function_call"].estimated is False
    assert rows["answer"].estimated is True and rows["answer"].output_tokens >= 5
    assert rows["answer"].input_tokens > 0


async def test_an_edited_message_rewinds_the_history_in_both_modes(scripted_server, tmp_path):
    from brainchat.settings import Settings

    s = scripted_server
    session = Session(Settings(chat_model=spec(s, "chat"), function_call_model=spec(s, "fc"),
                               data_dir=tmp_path / "data"))  # fmt: skip
    s.set_default(
        None, Text("An answer.")
    )  # every chat turn and agent answer: history is the point
    await collect(session.ask("Question A", message_id="m-a"))
    await collect(session.ask("Question B", message_id="m-b"))
    await collect(session.ask("Question C", message_id="m-a"))  # A edited into C
    seen = [m["content"] for m in s.requests[-1].messages if m["role"] == "user"]
    assert seen == ["Question C"]  # no ghost of A or B
    session.set_mode("agent")
    s.queue("fc", Text("no tools"), Text("no tools"))
    await collect(session.ask("Question D", message_id="m-d"))
    await collect(session.ask("Question E", message_id="m-d"))  # D edited into E
    decide = s.requests_for("fc")[-2]  # the last is the answer request (one model, two roles)
    seen = [str(m["content"]) for m in decide.messages if m["role"] == "user"]
    assert seen == ["Question C", "Question E"]


async def test_an_edit_past_eeg_work_says_the_study_is_not_rolled_back(scripted_server, tmp_path):
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=10, seed=1)
    session = agent_session(scripted_server, tmp_path)
    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})]),
            Text("loaded"), Text("no tools"))  # fmt: skip
    s.set_default("ans", Text("Done."))  # the answer model answers both turns
    first = await collect(session.ask("load my file", message_id="m-1"))
    assert of(first, "study_changed")
    edited = await collect(session.ask("just say hi", message_id="m-1"))
    notice = of(edited, "notice")[0]
    assert notice.kind == "info" and "not rolled back" in notice.message
    assert session.study.stage == "loaded"  # as the notice says


async def test_the_agent_is_built_once_and_rebuilt_when_settings_or_tools_change(
    scripted_server, tmp_path
):
    from langchain_core.tools import StructuredTool

    session = agent_session(scripted_server, tmp_path)
    s = scripted_server
    s.set_default("ans", Text("An answer."))  # the turns after the first three
    for i in range(3):
        s.queue("fc", Text("no tools"))
        s.queue("ans", Text(f"answer {i}"))
        await collect(session.ask(f"q{i}"))
    first = session.last_agent
    assert session.agents.builds == 1  # three turns, one agent (schemas bound, graph compiled)
    session.apply_settings({"max_iterations": 3})
    s.queue("fc", Text("no tools"))
    await collect(session.ask("after a settings change"))
    assert session.agents.builds == 2 and session.last_agent is not first
    assert session.last_agent.deps.limits.max_iterations == 3

    async def ping() -> str:
        return "pong"

    session.add_user_tools("mine", [StructuredTool.from_function(coroutine=ping, name="ping",
                                                                 description="ping")])  # fmt: skip
    s.queue("fc", Text("no tools"))
    await collect(session.ask("after a connect"))
    assert session.agents.builds == 3 and "ping" in session.last_agent.deps.runner.tools
    s.queue("fc", Text("no tools"))
    await collect(session.ask("same again"))
    assert session.agents.builds == 3


async def test_after_the_study_is_emptied_the_next_function_call_request_carries_the_note(
    scripted_server, tmp_path, monkeypatch
) -> None:
    """The run that emptied the study ended before another decide round (here: the iteration
    limit; in the browser: a Stop), so the next turn's first request must tell the model. Its
    pre-flight size check reads the study's context too, and used to consume the note."""
    import shutil

    from brainchat.eeg.io.synthetic import write_demo_set
    from brainchat.eeg.preprocessing import preprocessing
    from brainchat.settings import AgentLimits

    data = tmp_path / "data"
    write_demo_set(data, subjects=1, sessions=2, trials=12, seed=1)
    files = sorted(p.name for p in data.glob("*.edf"))[:2]
    session = agent_session(
        scripted_server, tmp_path, limits=AgentLimits(max_iterations=2, evaluation="model")
    )
    real = preprocessing.apply_step

    def half_then_fail(raws, step):
        real(raws[:1], step)
        shutil.move(data / files[1], data / "moved.edf")
        raise RuntimeError("disk on fire")

    monkeypatch.setenv("BRAINCHAT_KERNELS", "inline")  # the patch below is in this process
    monkeypatch.setattr(preprocessing, "apply_step", half_then_fail)
    s = scripted_server
    s.queue(
        "fc",
        ToolCalls([Call("load_data", {"files": files})]),
        ToolCalls([Call("resample_data", {"sfreq": 100})]),
    )
    s.queue("ans", Text("The resampling failed."))
    await collect(session.ask("load and resample"))
    assert session.study.stage == "empty"
    s.queue("fc", Text("no tools"), Text("no tools"))
    s.queue("ans", Text("ok"), Text("ok"))
    await collect(session.ask("what happened?"))
    await collect(session.ask("and now?"))

    def system(request) -> str:
        return "".join(str(m["content"]) for m in request.messages if m["role"] == "system")

    first, second = (system(r) for r in s.requests_for("fc")[2:])
    assert "Note for the user: the study was emptied" in first
    assert "Note for the user" not in second  # said once


async def test_a_resumed_study_offers_the_tools_of_its_stage_before_it_is_replayed(
    scripted_server, tmp_path
) -> None:
    """After a restart the study is only a saved log until its first EEG call; the model must
    see it as it will be (stage, steps, tools), or it is offered load_data alone and a load of
    the files already in the log is refused ("a study is already loaded")."""
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=10, seed=1)
    first = agent_session(scripted_server, tmp_path)
    s = scripted_server
    name = "sub-01_ses-01_task-mi_eeg.edf"
    s.queue("fc", ToolCalls([Call("load_data", {"files": [name]}),
                             Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),
            Text("done"))  # fmt: skip
    s.queue("ans", Text("Loaded and epoched."))
    await collect(first.ask("load and epoch my file"))
    assert first.study.stage == "epoched"

    second = agent_session(scripted_server, tmp_path)  # the app restarted: a fresh session
    second.restore(first.snapshot())
    assert second.study.pending and second.study.stage == "epoched"
    assert second.study_facts()["stage"] == "epoched"
    s.queue("fc", ToolCalls([Call("load_data", {"files": [name]})]), Text("no tools"))
    s.queue("ans", Text("It is loaded."))
    events = await collect(second.ask("load my file again"))
    request = s.requests_for("fc")[-2]
    offered = {t["function"]["name"] for t in request.tools or []}
    assert {"split_dataset", "cross_validate", "epoch_data"} <= offered
    assert "stage=epoched" in "".join(str(m["content"]) for m in request.messages)
    result = of(events, "tool_finished")[0]
    assert result.status == "success", result.summary  # the same files: nothing to do, no error
    assert "already loaded" in result.summary and second.study.stage == "epoched"
