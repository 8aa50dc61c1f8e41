"""Calls written as text in every mode, and `auto` tool calling that learns per model.

Every mode reads call-shaped text. In `auto`, a first reply that calls no tool makes brainchat
ask the function-call model for its record of the request (agent/record.py, a JSON-schema
request, made only then): when the record says the request needs tools, the same request is
asked once more in prompt mode, and a model that then calls a tool is switched to prompt mode
and remembered (agent/automode.py). A model in prompt mode is guided (agent/profile.py): each
later run starts with its record. A failed call's structured fix (tools/errors.py ToolError's
`next_call`) names the next concrete call.

The replies are a real small model's (Qwen2.5-Coder-1.5B-Instruct on llama-server), replayed
verbatim through the scripted server over real HTTP, against the real EEG tools on a synthetic
data set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainchat.agent import habits
from brainchat.agent.graph import build_agent
from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.session.study_slot import study_facts
from brainchat.settings import AgentLimits
from brainchat.testing.replies import call_text
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import collect, is_record, of, record, spec

LIMITS = AgentLimits(evaluation="model", max_execution_time=120)
# verbatim: native and auto mode, "Which EEG files are there?"
NO_ACCESS = (
    "As an AI language model, I don't have access to your files or the ability to browse your "
    "computer's file system. However, you can use the following command in your terminal to list "
    "all EEG files in a directory:\n\n```bash\nls *.edf\n```"
)
# verbatim form: several calls one per line in one fence, one of them to a tool that does not exist
MIXED = (
    "```json\n"
    '{"name": "list_data_files", "arguments": {"pattern": "*.edf"}}\n'
    '{"name": "read_eeg_files", "arguments": {"path": "sub-01/1.edf"}}\n'
    "```"
)


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    """The app's state folder, named at its start (ui/persistence.install), where habits are kept."""
    folder = tmp_path / "state"
    folder.mkdir()
    monkeypatch.setattr(habits, "FOLDER", folder)
    return folder


@pytest.fixture
def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data, subjects=1, sessions=2, trials=8, seed=1)
    return Study(data)


def agent(server, study, tool_calling="auto", limits=LIMITS):
    fc, ans = spec(server, "fc", tool_calling=tool_calling), spec(server, "ans")
    return build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        build_eeg_tools(study),
        limits,
        specs={"function_call": fc, "answer": ans},
        context=study.summary,
        facts=lambda: study_facts(study),
        domain=EEG,
    )


def started(events):
    return [(e.name, e.args) for e in of(events, "tool_call_started")]


def notices(events, kind):
    return [n for n in of(events, "notice") if n.kind == kind]


def records(server) -> list:
    """The function-call model's record requests (those with a JSON schema)."""
    return [r for r in server.requests_for("fc") if is_record(r)]


def answer_request(server) -> str:
    return str(server.requests_for("ans")[-1].messages[-1]["content"])


# -- call-shaped text is never dropped ---------------------------------------------------------


async def test_native_mode_runs_a_call_written_as_text(scripted_server, study, state):
    """Before: taken as the final reply; no tool ran and the answer model read 'No tools were
    used; answer from your own knowledge'."""
    s = scripted_server
    s.queue("fc", Text(call_text([Call("list_data_files", {"pattern": "*.edf"})])), Text("Listed."))
    s.queue("ans", Text("There are two EDF files."))
    events = await collect(agent(s, study, "native").run("Which EEG files are there?"))
    assert started(events) == [("list_data_files", {"pattern": "*.edf"})]
    assert of(events, "tool_finished")[0].status == "success"
    told = notices(events, "tool_calling")
    assert len(told) == 1 and "as text" in told[0].message and "1 valid" in told[0].message
    assert all(r.tools for r in s.requests_for("fc"))  # native stays native: never switched
    assert "No tools were used" not in answer_request(s)
    assert not (state / habits.FILE).exists()


async def test_auto_runs_the_valid_calls_and_hints_the_unknown_one(scripted_server, study, state):
    """Before: the unknown read_eeg_files dropped both calls of the reply, with no hint and no
    notice, and the answer model was told 'No tools were used'."""
    s = scripted_server
    s.queue("fc", Text(MIXED), Text("Done."))
    s.queue("ans", Text("There are two EDF files."))
    events = await collect(agent(s, study).run("Which EEG files are there?"))
    assert [n for n, _ in started(events)] == ["list_data_files", "read_eeg_files"]
    ok, bad = of(events, "tool_finished")
    assert ok.status == "success" and bad.status == "error"
    assert "no tool named 'read_eeg_files'" in bad.error and "list_data_files" in bad.error
    hint = json.dumps(s.requests_for("fc")[1].messages)  # the model reads the repair hint
    assert "no tool named 'read_eeg_files'" in hint
    asked = answer_request(s)
    assert "No tools were used" not in asked
    assert "read_eeg_files" in asked and "failed" in asked  # the answer model is told


async def test_a_schema_breaking_call_gets_the_allowed_values(scripted_server, study, state):
    s = scripted_server
    bad = call_text([Call("split_dataset", {"by": "trials"})])
    s.queue("fc", Text(bad), Text("Stopping."))
    s.queue("ans", Text("The split failed."))
    events = await collect(agent(s, study, "native").run("split the epochs"))
    (done,) = of(events, "tool_finished")
    assert done.status == "error" and "'trials' is not one of" in done.error
    assert "'trial'" in done.error  # the allowed values are named


async def test_json_that_is_data_not_a_call_stays_the_reply(scripted_server, study, state):
    s = scripted_server
    s.queue("fc", Text('Here: {"name": "Ada", "age": 36} is the record.'))
    s.queue("ans", Text("Ada is 36."))
    events = await collect(agent(s, study, "native").run("What is in the record?"))
    assert not started(events) and not notices(events, "tool_calling")


# -- auto learns per model ---------------------------------------------------------------------


async def test_auto_asks_once_in_prompt_mode_then_switches_and_remembers(
    scripted_server, study, state
):
    """Before: auto kept offering native tools; the model answered 'As an AI language model'
    and no tool ever ran. Now the first reply that calls nothing makes the record, which says
    the request needs tools, and the same request is asked once in prompt mode."""
    s = scripted_server
    s.queue(
        "fc",
        Text(NO_ACCESS),
        record(["list"], listing=True),  # made only now: the first reply called nothing
        Text(call_text([Call("list_data_files", {"pattern": "*"})])),
        Text("Found the files."),
    )
    s.queue("ans", Text("There are two EDF files."))
    a = agent(s, study)
    events = await collect(a.run("Which EEG files are there?"))
    first, made, trial, after = s.requests_for("fc")
    assert first.tools and "response_format" not in first.params
    assert is_record(made) and not made.tools
    assert trial.tools is None and after.tools is None
    assert "- list_data_files(" in trial.messages[0]["content"]  # the tools are in the prompt
    assert started(events) == [("list_data_files", {"pattern": "*"})]
    (told,) = notices(events, "tool_calling")
    assert "answered without calling a tool" in told.message and "list_data_files" in told.message
    assert "prompt tool calling" in told.message and "never changed" in told.hint
    stored = json.loads((state / habits.FILE).read_text())
    assert stored == {f"{s.base_url}|fc": {"tool_calling": "prompt"}}

    # the same agent's next turn, and an agent built after a restart, start in prompt mode,
    # guided: each run's first request is the record
    s.queue("fc", record([]), Text(call_text([Call("list_data_files", {})])), Text("Done."))
    s.queue("ans", Text("Two files."))
    await collect(a.run("And now?"))
    assert is_record(s.requests_for("fc")[4])
    # brainchat lists first for a guided model; the model's listing again adds nothing, and the
    # asked step is done: the answer
    s.queue("fc", record(["list"], listing=True), Text(call_text([Call("list_data_files", {})])))
    s.queue("ans", Text("Two files."))
    events = await collect(agent(s, study).run("Which EEG files are there?"))
    assert all(r.tools is None for r in s.requests_for("fc")[4:])
    assert len(records(s)) == 3
    assert [(e.name, e.status) for e in of(events, "tool_finished")] == [
        ("list_data_files", "success"), ("list_data_files", "skipped")
    ]  # fmt: skip
    assert not notices(events, "tool_calling")


async def test_a_failed_prompt_try_keeps_auto_and_is_asked_once(scripted_server, study, state):
    s = scripted_server
    s.queue(
        "fc",
        Text(NO_ACCESS),
        record(["list"], listing=True),
        Text("I still cannot access files."),
    )
    s.queue("ans", Text("I could not list the files."))
    events = await collect(agent(s, study).run("Which EEG files are there?"))
    assert len(s.requests_for("fc")) == 3 and len(records(s)) == 1 and not started(events)
    (told,) = notices(events, "tool_calling")
    assert "still called none" in told.message and "stays auto" in told.message
    assert not (state / habits.FILE).exists()
    asked = answer_request(s)  # not 'answer from your own knowledge': it would list files
    assert "own knowledge" not in asked and "do not invent files" in asked
    assert "although the request needs tools" in asked  # the record said it does


async def test_a_set_mode_is_never_overridden(scripted_server, study, state):
    s = scripted_server
    habits.remember(spec(s, "fc"), tool_calling="prompt")  # learned while it was on auto
    s.queue("fc", Text(NO_ACCESS))
    s.queue("ans", Text("No files."))
    events = await collect(agent(s, study, "native").run("Which EEG files are there?"))
    (only,) = s.requests_for("fc")
    assert only.tools and not notices(events, "tool_calling")


async def test_auto_does_not_retry_a_question_that_needs_no_tools(scripted_server, study, state):
    s = scripted_server
    s.queue("fc", Text("The alpha band is 8-13 Hz."), record([], needs_tools=False))
    s.queue("ans", Text("Alpha is 8-13 Hz."))
    events = await collect(agent(s, study).run("What frequency range is the alpha band?"))
    # the reply and the record that says no tool is needed: no prompt-mode try
    assert len(s.requests_for("fc")) == 2 and len(records(s)) == 1
    assert not notices(events, "tool_calling") and not (state / habits.FILE).exists()
    assert "No tools were used; answer from your own knowledge." in answer_request(s)


async def test_auto_with_native_calls_stays_auto(scripted_server, study, state):
    s = scripted_server
    s.queue("fc", ToolCalls([Call("list_data_files", {})]), Text("Done."))
    s.queue("ans", Text("Two files."))
    events = await collect(agent(s, study).run("Which EEG files are there?"))
    assert all(r.tools for r in s.requests_for("fc")) and not notices(events, "tool_calling")
    assert not records(s)  # a first reply that calls a tool needs no record
    assert not (state / habits.FILE).exists()


# -- a loop stop names the next concrete call --------------------------------------------------


async def test_a_failing_load_repeated_is_told_the_next_call(scripted_server, study, state):
    """Verbatim (prompt mode): the model guessed 'sub-01/1.edf', it failed, it sent the same call
    again and again until the loop stop. The model reads the error's closest names (the error
    carries no one fix when several names are close: the model picks among them), the repeat is
    told it would fail again, and the user reads what failed."""
    s = scripted_server
    guess = Text(call_text([Call("load_data", {"files": ["sub-01/1.edf"]})]))
    # a guided model: the record first; the loop stop ends the run, no fourth guess
    s.queue("fc", record(["load"], files=["sub-01"]), guess, guess, guess)
    s.queue("ans", Text("The file could not be loaded."))
    events = await collect(agent(s, study, "prompt").run("Load the recordings of sub-01"))
    statuses = [e.status for e in of(events, "tool_finished")]  # brainchat's listing runs first
    assert statuses == ["success", "error", "skipped", "skipped"]
    told = json.dumps(s.requests_for("fc")[3].messages)  # after the first repeat
    assert "it would fail again. Next: call load_data with different arguments" in told
    assert "closest names: 'sub-01_ses-01_task-mi_eeg.edf'" in told  # the error's own words
    (loop,) = notices(events, "loop")
    assert "load_data(files=['sub-01/1.edf'])" in loop.message
    assert "not found in the data folder" in loop.message  # what failed, with its error
    assert loop.hint.startswith("Next step: call load_data with different arguments")
    assert "ephrase" not in loop.hint and "Chat mode" not in loop.hint


async def test_a_bad_argument_names_the_allowed_values(scripted_server, study, state):
    s = scripted_server
    s.queue("fc", ToolCalls([Call("split_dataset", {"by": "trials"})]), Text("Stop."))
    s.queue("ans", Text("The split failed."))
    events = await collect(agent(s, study, "native").run("split the epochs"))
    (done,) = of(events, "tool_finished")
    assert done.status == "error" and "'trial'" in done.error and "'session'" in done.error


async def test_a_short_tool_name_is_told_the_tool_it_meant(scripted_server, study, state):
    """From the real-model bench: the model called `epoch`, `split`, `train`, `evaluate`; the
    error listed 23 tools. Both paths (a native call, a call written as text) name the one meant."""
    s = scripted_server
    s.queue("fc", ToolCalls([Call("epoch", {"tmin": 0.5, "tmax": 2.5})]), Text("Stop."))
    s.queue("ans", Text("Epoching failed."))
    events = await collect(agent(s, study, "native").run("epoch 0.5-2.5 s"))
    (done,) = of(events, "tool_finished")
    assert done.status == "error"
    assert "unknown tool 'epoch' (did you mean 'epoch_data'?)" in done.error
    assert "did you mean 'epoch_data'" in json.dumps(s.requests_for("fc")[1].messages)
    # prompt mode is guided: its record first (naming no step, so nothing is listed first)
    train = Text(call_text([Call("train", {"model": "csp_lda"})]))
    s.queue("fc", record([], needs_tools=True), train, Text("Stop."))
    s.queue("ans", Text("Training failed."))
    events = await collect(agent(s, study, "prompt").run("train CSP+LDA"))
    (done,) = of(events, "tool_finished")  # a name written as text runs as the one tool it means
    assert done.name == "train_model"  # (tests/test_prompt_pipeline.py), failing here: no data
    assert done.status == "error" and "load" in done.error.lower()


def test_a_key_in_the_base_url_is_not_kept_in_the_habits_file():
    """A model is named by where it is served, never by credentials written into its URL."""
    from brainchat.settings import ModelSpec

    spec = ModelSpec(model="m", base_url="https://user:sk-secret@llm.lab:8443/v1/?key=sk-q#f")
    assert habits.model_key(spec) == "https://llm.lab:8443/v1|m"


def test_next_call_reads_the_fix_the_error_carries():
    """A tool's error carries its fix as data (tools/errors.py ToolError's `next_call`); the
    error's prose is never read back."""
    from brainchat.agent.policy import next_call
    from brainchat.tools.errors import call

    tools = {"load_data", "list_data_files", "resample_data", "epoch_data", "split_dataset"}
    assert next_call("epoch_data", call("resample_data"), tools) == "call resample_data next"
    fixed = call("split_dataset", {"by": "trial"})
    assert next_call("split_dataset", fixed, tools) == (
        'send the corrected call {"name": "split_dataset", "arguments": {"by": "trial"}}'
    )
    other = call("epoch_data", {"tmin": 0.5, "tmax": 2.5})  # another tool, with arguments
    assert next_call("load_data", other, tools).startswith('send the corrected call {"name": "epoch_data"')  # fmt: skip
    generic = "call load_data with different arguments, or another tool, or stop and answer"
    assert next_call("load_data", None, tools) == generic  # no fix: another try or another way
    assert next_call("load_data", call("plot_raw"), tools) == generic  # not a tool of this run


def test_a_call_with_a_wrong_argument_name_is_told_the_arguments():
    """{"q": ...} for web_search was told only "'query' is a required property"."""
    from brainchat.agent.textcalls import read_calls

    schema = {
        "type": "object",
        "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}},
        "required": ["query"],
        "additionalProperties": False,
    }
    found = read_calls('{"name": "web_search", "arguments": {"q": "EEG"}}', {"web_search": schema},
                       strict=True)  # fmt: skip
    why = found.calls[0]["invalid"]
    assert "its arguments: query (string, required), max_results (integer)" in why
