"""Prompt mode's system prompt carries one worked example of a correct call (the domain's safe
first call: listing the data folder), within the context budget: kept when it fits beside room
for the messages, else left out before sending.

Real EEG tools on a synthetic data set, the agent against the scripted server over HTTP; the
model's guidance is minimal here, so the example is the only help its prompt carries.
"""

from __future__ import annotations

import pytest

from brainchat.agent.decide import system_prompt
from brainchat.agent.graph import build_agent
from brainchat.agent.textcalls import read_calls
from brainchat.agent.toolsprompt import MIN_ROOM
from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.replies import call_text
from brainchat.testing.scripted_server import Call, Text
from brainchat.tools.schemas import openai_schema
from brainchat.usage import count_tokens

from support import collect, of, spec

EXAMPLE = '```json\n{"name": "list_data_files", "arguments": {"pattern": "*.edf"}}\n```'


@pytest.fixture
def study(tmp_path) -> Study:
    write_demo_set(tmp_path, subjects=1, sessions=2, trials=8, seed=1)
    return Study(tmp_path)


def agent(server, study, **fc_options):
    fc = spec(server, "fc", tool_calling="prompt", guidance="minimal", **fc_options)
    ans = spec(server, "ans")
    return build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        build_eeg_tools(study),
        AgentLimits(evaluation="model"),
        specs={"function_call": fc, "answer": ans},
        context=study.summary,
        domain=EEG,
    )


def system_of(request) -> str:
    return str(request.messages[0]["content"])


async def test_the_prompt_carries_a_worked_example_of_a_real_call(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text(call_text([Call("list_data_files", {"pattern": "*.edf"})])), Text("Ok."))
    s.queue("ans", Text("Two EDF files."))
    events = await collect(agent(s, study).run("Which EEG files are there?"))
    system = system_of(s.requests_for("fc")[0])
    assert "Example: to use list_data_files, the whole reply is:\n" + EXAMPLE in system
    # the example is a correct call: it passes the real tool's schema
    schemas = {t.name: openai_schema(t)["function"]["parameters"] for t in build_eeg_tools(study)}
    assert read_calls(EXAMPLE, schemas, strict=True).valid
    assert of(events, "tool_finished")[0].status == "success"


async def test_a_small_window_leaves_the_example_out_and_the_run_goes_on(scripted_server, study):
    s = scripted_server
    full = agent(s, study)
    prompt = str(system_prompt(full.deps).content)
    assert EXAMPLE in prompt
    reserve = 256
    # room for the prompt with its example, less than MIN_ROOM beside it
    window = reserve + count_tokens(prompt) + MIN_ROOM - 60
    small = agent(s, study, context_window=window, max_tokens=reserve)
    s.queue("fc", Text(call_text([Call("list_data_files", {"pattern": "*.edf"})])), Text("Ok."))
    s.queue("ans", Text("Two EDF files."))
    events = await collect(small.run("What is in my folder?"))  # no listing by brainchat first
    first = s.requests_for("fc")[0]
    assert EXAMPLE not in system_of(first) and "- list_data_files(" in system_of(first)
    assert of(events, "tool_finished")[0].status == "success"
    assert of(events, "run_finished")[0].reason == "answered"
    # and the request as sent fits the window less the reply's reserve
    sent = sum(count_tokens(str(m["content"])) + 4 for m in first.messages)
    assert sent <= window - reserve, (sent, window)
