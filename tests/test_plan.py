"""Plan mode: a validated plan, steps verified by the ledger and the study, bounded replans,
an answer that may claim only verified steps, and single-step confirmation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brainchat.agent.plan import Plan, PlanStep, unverified_claims, verify
from brainchat.agent.state import LedgerEntry
from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.session import Session
from brainchat.settings import AgentLimits, ConfigError, Settings, load_settings, with_overrides
from brainchat.testing.scripted_server import Call, Fault, Text, ToolCalls

from support import collect, is_record, of, record, spec, text, write_fixture

FILE = "sub-01_ses-01_task-mi_eeg.edf"


def plan_reply(*steps: tuple[str, str]) -> ToolCalls:
    return ToolCalls([Call("submit_plan", {"steps": [{"title": t, "tool": n} for t, n in steps]})])


def session(server: Any, tmp: Path, fc: dict[str, Any] | None = None, **limits: Any) -> Session:
    write_demo_set(tmp, subjects=1, sessions=1, trials=20, seed=1)
    settings = Settings(
        function_call_model=spec(server, "fc", **(fc or {})),
        answer_model=spec(server, "ans"),
        limits=AgentLimits(max_execution_time=120, **{"plan_mode": "always", **limits}),
        data_dir=tmp,
        search_backend="fixture",
        search_fixture=write_fixture(tmp / "fx.json"),
    )
    s = Session(settings)
    s.set_mode("agent")
    return s


def statuses(events: list[Any]) -> list[tuple[int, str]]:
    return [(e.step_id, e.status) for e in of(events, "plan_step_updated")]


async def test_plan_steps_run_verified_against_ledger_and_study(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue(
        "fc",
        plan_reply(("Load sub-01", "load_data"), ("Band-pass 8-30 Hz", "bandpass_filter"),
                   ("Epoch 0.5-2.5 s", "epoch_data")),
        ToolCalls([Call("load_data", {"files": [FILE]})]),
        ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]),
        ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),
    )  # fmt: skip
    s.queue("ans", Text("Loaded sub-01, band-passed 8-30 Hz and epoched 0.5-2.5 s."))
    sess = session(s, tmp_path)
    events = await collect(sess.ask("load sub-01, band-pass 8-30 Hz, then epoch"))
    [created] = of(events, "plan_created")
    assert [st["tool"] for st in created.steps] == ["load_data", "bandpass_filter", "epoch_data"]
    assert statuses(events) == [(1, "running"), (1, "done"), (2, "running"), (2, "done"),
                                (3, "running"), (3, "done")]  # fmt: skip
    band = [e for e in of(events, "plan_step_updated") if e.step_id == 2][-1]
    assert "study shows it" in band.detail
    assert sess.study.stage == "epoched"
    # the planner saw the tools; the function-call model was told the step to do
    assert s.requests_for("fc")[0].tools[0]["function"]["name"] == "submit_plan"
    assert "Now carry out step 2: Band-pass 8-30 Hz" in str(s.requests_for("fc")[2].messages)
    answer_prompt = str(s.requests_for("ans")[0].messages)
    assert "3. Epoch 0.5-2.5 s — VERIFIED" in answer_prompt
    assert of(events, "run_finished")[0].reason == "answered"
    assert not [n for n in of(events, "notice") if n.kind == "unverified_claim"]


async def test_a_prompt_tool_calling_model_plans_in_text_and_runs_the_steps(
    scripted_server, tmp_path
) -> None:
    """A model that cannot call tools (tool_calling "prompt") is sent no tools by the planner
    either: it writes the plan as JSON, and the steps run from JSON calls in its text. Such a
    model is guided, so its record of the request is asked for first (a JSON schema, no
    tools)."""
    import json

    from brainchat.testing.replies import call_text

    s = scripted_server
    plan = {"needs_plan": True, "steps": [{"title": "Load sub-01", "tool": "load_data"},
                                          {"title": "Band-pass 8-30 Hz", "tool": "bandpass_filter"}]}  # fmt: skip
    asked = record(["load", "preprocess"], fixed={"bandpass_filter": {"l_freq": 8, "h_freq": 30}})
    s.queue(
        "fc",
        asked,  # a prompt-mode model is guided: its record of the request comes first
        Text("Here is the plan:\n```json\n" + json.dumps(plan) + "\n```"),
        Text(call_text([Call("load_data", {"files": [FILE]})])),
        Text(call_text([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})])),
    )
    s.queue("ans", Text("Loaded sub-01 and band-passed it 8-30 Hz."))
    sess = session(s, tmp_path)
    sess.apply_settings({"function_call_tool_calling": "prompt"})
    events = await collect(sess.ask("load sub-01 then band-pass 8-30 Hz"))
    [created] = of(events, "plan_created")
    assert [st["tool"] for st in created.steps] == ["load_data", "bandpass_filter"]
    assert statuses(events)[-1] == (2, "done") and sess.study.stage == "loaded"
    assert all(not r.tools for r in s.requests_for("fc"))  # never a `tools` field
    assert is_record(s.requests_for("fc")[0])  # the record
    assert "Reply with only the JSON object" in str(s.requests_for("fc")[1].messages)
    assert of(events, "run_finished")[0].reason == "answered"


async def test_failed_step_replans_then_succeeds(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue(
        "fc",
        plan_reply(("Load", "load_data"), ("Epoch", "epoch_data")),
        ToolCalls([Call("load_data", {"files": [FILE]})]),
        ToolCalls([Call("epoch_data", {"tmin": 2.0, "tmax": 1.0})]),  # invalid: the step fails
        plan_reply(("Epoch 0.5-2.5 s", "epoch_data")),  # the replanner's remaining steps
        ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),
    )
    s.queue("ans", Text("Loaded and epoched (the first epoching attempt failed)."))
    events = await collect(session(s, tmp_path).ask("load and epoch"))
    [replanned] = of(events, "replanned")
    assert replanned.attempt == 1 and replanned.max_attempts == 2
    assert "step 2 (Epoch) failed" in replanned.reason
    assert [st["status"] for st in replanned.steps] == ["done", "failed", "ready"]
    assert (2, "failed") in statuses(events) and statuses(events)[-1] == (3, "done")
    replan_request = str(s.requests_for("fc")[3].messages)
    assert "Progress so far" in replan_request and "2. Epoch: failed" in replan_request
    assert of(events, "run_finished")[0].reason == "answered"
    # the replanned step took over the failed one: the plan is done, no further model call
    assert len(s.requests_for("fc")) == 5 and s.remaining("fc") == 0
    assert of(events, "evaluation")[-1].reason == "all 2 plan steps verified"


async def test_replans_are_bounded_and_the_answer_may_not_claim_a_failed_step(
    scripted_server, tmp_path
) -> None:
    s = scripted_server
    s.queue(
        "fc",
        plan_reply(("Load", "load_data"), ("Train EEGNet", "train_model")),
        ToolCalls([Call("load_data", {"files": [FILE]})]),
        ToolCalls([Call("train_model", {"model": "eegnet"})]),  # no epochs: fails
        plan_reply(("Train EEGNet", "train_model")),
        ToolCalls([Call("train_model", {"model": "eegnet", "epochs": 2})]),  # fails again
    )
    s.queue("ans", Text("I loaded the data and trained EEGNet, which reached 80% accuracy."))
    events = await collect(session(s, tmp_path, max_replans=1).ask("load and train EEGNet"))
    assert len(of(events, "replanned")) == 1  # the limit: 1 replan, then no more
    finished = of(events, "run_finished")[0]
    assert finished.reason == "plan_failed"
    assert any(n.kind == "plan_failed" for n in of(events, "notice"))
    assert "FAILED" in str(s.requests_for("ans")[0].messages)  # the answer model was told
    [claim] = [n for n in of(events, "notice") if n.kind == "unverified_claim"]
    assert "trained EEGNet" in claim.message
    assert "Correction" in finished.answer and "was not done (failed" in finished.answer
    assert "Correction" in text(events)  # streamed to the user too
    assert len(s.requests_for("fc")) == 5  # nothing asked after the last replan's failure


async def test_unusable_plan_falls_back_to_the_ordinary_loop(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue(
        "fc",
        plan_reply(("Do magic", "no_such_tool")),
        ToolCalls([Call("web_search", {"query": "EEGNet"})]),
    )
    s.queue("ans", Text("EEGNet is compact [1]."))
    events = await collect(session(s, tmp_path).ask("what is EEGNet"))
    assert not of(events, "plan_created")
    assert any("no_such_tool" in n.message for n in of(events, "notice"))
    assert [e.name for e in of(events, "tool_call_started")] == ["web_search"]
    assert of(events, "run_finished")[0].reason == "answered"


async def test_auto_mode_skips_the_plan_when_the_model_says_none_is_needed(
    scripted_server, tmp_path
) -> None:
    s = scripted_server
    s.queue(
        "fc", ToolCalls([Call("submit_plan", {"needs_plan": False, "steps": []})]), Text("2+2=4")
    )
    s.queue("ans", Text("4"))
    events = await collect(session(s, tmp_path, plan_mode="auto").ask("what is 2+2"))
    assert not of(events, "plan_created") and not of(events, "notice")
    assert "needs fewer than 2 dependent tool steps" in str(s.requests_for("fc")[0].messages)


async def test_off_mode_makes_no_planner_call(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue("fc", Text("no tools"))
    s.queue("ans", Text("ok"))
    await collect(session(s, tmp_path, plan_mode="off").ask("hi"))
    assert (
        len(s.requests_for("fc")) == 1
        and s.requests_for("fc")[0].tools[0]["function"]["name"] != "submit_plan"
    )


@pytest.mark.scripted_lenient("a rejected next step never asks for its queued call")
@pytest.mark.parametrize("reply", ["once", "reject"])
async def test_single_step_mode_asks_before_each_next_step(
    scripted_server, tmp_path, reply
) -> None:
    s = scripted_server
    s.queue(
        "fc",
        plan_reply(("Load", "load_data"), ("Band-pass", "bandpass_filter")),
        ToolCalls([Call("load_data", {"files": [FILE]})]),
        ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]),
    )
    s.queue("ans", Text("Done what was confirmed."))
    asked: list[str] = []

    async def confirm(name: str, args: dict[str, Any], ask: Any) -> str:
        asked.append(name)
        assert "one planned step per confirmation" in ask.why(name)
        return reply

    sess = session(s, tmp_path, execution_mode="single_step")
    events = await collect(sess.ask("load and filter", confirm=confirm))
    assert asked == ["plan step 2: Band-pass"]
    done = [i for i, st in statuses(events) if st == "done"]
    assert done == ([1, 2] if reply == "once" else [1])
    assert sess.study.stage == "loaded"


def test_verification_trusts_the_study_over_the_ledger() -> None:
    step = PlanStep(1, "Band-pass 8-30 Hz", "bandpass_filter")
    entry = LedgerEntry("c1", "bandpass_filter", {"l_freq": 8, "h_freq": 30}, 1)
    entry.finish("success", "filtered")
    wrong = {
        "stage": "loaded",
        "steps": [{"op": "bandpass", "params": {"l_freq": 1, "h_freq": 40}}],
    }
    status, why, _ = verify(step, [entry], lambda: wrong, EEG.shows)  # the domain's check
    assert status == "failed" and "study does not show it" in why
    right = {
        "stage": "loaded",
        "steps": [{"op": "bandpass", "params": {"l_freq": 8.0, "h_freq": 30.0}}],
    }
    assert verify(step, [entry], lambda: right, EEG.shows)[0] == "done"
    assert verify(step, [entry], lambda: wrong)[0] == "done"  # no domain: the ledger alone


def test_claim_detection_spares_honest_sentences() -> None:
    plan = Plan([PlanStep(1, "Load data", "load_data", "done"),
                 PlanStep(2, "Train EEGNet", "train_model", "failed")])  # fmt: skip
    assert unverified_claims("Training EEGNet failed: there were no epochs.", plan) == []
    assert unverified_claims("EEGNet was not trained.", plan) == []
    [(step, _)] = unverified_claims("The data is loaded. EEGNet trained to 80%.", plan)
    assert step.id == 2


def test_plan_mode_settings() -> None:
    s = load_settings({"AGENT_PLAN_MODE": "auto", "AGENT_MAX_REPLANS": "1"}, dotenv=False)
    assert s.limits.plan_mode == "auto" and s.limits.max_replans == 1
    bad = load_settings({"AGENT_PLAN_MODE": "sometimes"}, dotenv=False)
    assert any(
        e.variable == "AGENT_PLAN_MODE" and "off, auto, always" in str(e) for e in bad.errors
    )
    assert with_overrides(s, {"plan_mode": "always"}).limits.plan_mode == "always"
    with pytest.raises(ConfigError, match="Plan mode"):
        with_overrides(s, {"plan_mode": "maybe"})


@pytest.mark.parametrize(
    "reply, why",
    [
        (Fault(status=500), "the planner call failed"),
        (Text("no plan here"), "did not call submit_plan"),
    ],
)
async def test_a_failed_planner_call_falls_back_to_the_ordinary_loop(
    scripted_server, tmp_path, reply, why
) -> None:
    s = scripted_server
    s.queue("fc", reply, ToolCalls([Call("get_study_state", {})]), Text("done"))
    s.queue("ans", Text("The study is empty."))
    events = await collect(session(s, tmp_path).ask("check my study"))
    assert not of(events, "plan_created") and not of(events, "plan_step_updated")
    assert any(why in n.message for n in of(events, "notice"))
    assert [e.name for e in of(events, "tool_call_started")] == ["get_study_state"]
    assert of(events, "run_finished")[0].reason == "answered"


async def test_the_planner_asks_the_way_decide_does(scripted_server, tmp_path) -> None:
    """The planner call goes through the same request path as decide: a server that refuses
    stream_options still gets a plan made, and "stream_tool_calls": false is honoured."""
    s = scripted_server
    s.reject_stream_options = True
    s.queue(
        "fc",
        plan_reply(("Load sub-01", "load_data"), ("Check the study", "get_study_state")),
        ToolCalls([Call("load_data", {"files": [FILE]})]),
        ToolCalls([Call("get_study_state", {})]),
    )
    s.queue("ans", Text("Loaded sub-01."))
    events = await collect(session(s, tmp_path).ask("load sub-01 then check the study"))
    [created] = of(events, "plan_created")
    assert [st["tool"] for st in created.steps] == ["load_data", "get_study_state"]
    planner = s.requests_for("fc")[:2]
    assert planner[0].outcome == "fault" and planner[1].stream_options is None
    assert planner[1].tools[0]["function"]["name"] == "submit_plan"
    assert of(events, "run_finished")[0].reason == "answered"


async def test_the_planner_honours_stream_tool_calls_false(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue("fc", plan_reply(("Load sub-01", "load_data"), ("Check", "get_study_state")))
    s.queue("fc", Text("done"))
    s.queue("ans", Text("ok"))
    sess = session(s, tmp_path, fc={"stream_tool_calls": False})
    events = await collect(sess.ask("load sub-01 then check the study"))
    assert of(events, "plan_created")
    assert s.requests_for("fc")[0].stream is False  # the planner request was not streamed
