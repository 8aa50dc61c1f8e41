"""cross_validate's protocol and pipelines are never rewritten from the request's words.

A small model (Qwen2.5-Coder-1.5B) asked to "compare CSP+LDA with Riemannian MDM" sent the
schema's default pipelines ["csp_lda", "ts_lr"], and for "leave one subject out" sent
cross_session. brainchat does not replace such values behind the model's back: a guided model's
record of the request fixes the values the user stated (agent/record.py), and a call that
contradicts them is sent back once as a correctable error with the suggested call (the
`UserValues` guard, agent/guided.py). The model decides: the suggested call runs as suggested,
the same call sent again runs as it is. A strong model calling tools natively (a minimal
profile) gets no such check: its call runs as sent. Only slips of form are repaired
(agent/repair.py), and cross_validate has none. Replies go through the scripted server over
real HTTP, against the real EEG tools on the demo data.
"""

from __future__ import annotations

import json

import pytest

from brainchat.agent.repair import repaired
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from test_unasked_steps import agent, fenced

from support import collect, of, record

QUESTION = (
    "Leave one subject out and compare CSP+LDA with Riemannian MDM. Is one significantly "
    "better? Tell me the chance levels and the test you used."
)
# the model's call with the schema's default pipelines (permutations 0 here: a quick test)
VERBATIM = {"protocol": "cross_subject", "pipelines": ["csp_lda", "ts_lr"], "folds": 5,
            "permutations": 0, "seed": 0, "epochs": 30}  # fmt: skip
ASKED = record(
    ["cross_validate"],
    fixed={"cross_validate": {"protocol": "cross_subject", "pipelines": ["csp_lda", "mdm"]}},
    comparison=True,
)


@pytest.fixture
async def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=3, sessions=1, trials=12, seed=1)
    study = Study(data)
    tools = {t.name: t for t in build_eeg_tools(study)}
    files = [f"demo/sub-0{i}_ses-01_task-mi_eeg.edf" for i in (1, 2, 3)]
    await tools["load_data"].ainvoke({"files": files})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    return study


def finished(events, name: str = "cross_validate") -> list:
    return [e for e in of(events, "tool_finished") if e.name == name]


def started(events) -> list[dict]:
    return [e.args for e in of(events, "tool_call_started") if e.name == "cross_validate"]


@pytest.mark.parametrize(
    "args",
    [
        VERBATIM,
        {"protocol": "cross_session", "pipelines": ["csp_lda"]},
        {},  # nothing sent: the schema's defaults, as the tool applies them
    ],
)
def test_a_call_is_not_rewritten_before_it_runs(study, args) -> None:
    """No repair of cross_validate: what the call asks stays what the model asked."""
    (tool,) = [t for t in build_eeg_tools(study) if t.name == "cross_validate"]
    call = repaired({"name": "cross_validate", "args": dict(args)}, tool)
    assert call["args"] == args and "repaired" not in call


async def test_pipelines_the_request_fixed_come_back_as_a_suggestion(scripted_server, study):
    s = scripted_server
    suggested = {**VERBATIM, "pipelines": ["csp_lda", "mdm"]}
    s.queue("fc", ASKED, Text(fenced("cross_validate", VERBATIM)))
    s.queue("fc", Text(fenced("cross_validate", suggested)), Text("Done."))
    s.queue("ans", Text("CSP+LDA and MDM across subjects, as cross_validate reports."))
    events = await collect(agent(s, study).run(QUESTION))
    first, second = finished(events)
    assert first.status == "refused"
    assert first.error.startswith(
        'not run yet: the request sets pipelines ["csp_lda", "mdm"] (the call sends '
        '["csp_lda", "ts_lr"]). Suggested call: {"name": "cross_validate", "arguments": '
    )
    assert first.error.endswith("(the same call sent again unchanged runs as it is)")
    sent_back = json.loads(
        first.error.split("Suggested call: ", 1)[1].split(" (the same call", 1)[0]
    )
    assert sent_back == {"name": "cross_validate", "arguments": suggested}
    # the model reads the suggestion, and its own call was never changed behind its back
    assert "Suggested call" in json.dumps(s.requests_for("fc")[2].messages)
    assert started(events) == [VERBATIM, suggested]
    assert second.status == "success" and "mdm" in second.content
    assert "ts_lr" not in study.state.crossval["cross_subject"]["pipelines"]


async def test_the_same_call_sent_again_runs_as_it_is(scripted_server, study):
    """The model keeps its call: it runs as sent, once the conflict was said."""
    s = scripted_server
    s.queue("fc", ASKED, Text(fenced("cross_validate", VERBATIM)))
    s.queue("fc", Text(fenced("cross_validate", VERBATIM)), Text("Done."))
    s.queue("ans", Text("CSP+LDA and TS+LR across subjects, as cross_validate reports."))
    events = await collect(agent(s, study).run(QUESTION))
    assert [e.status for e in finished(events)] == ["refused", "success"]
    assert started(events) == [VERBATIM, VERBATIM]
    assert "ts_lr" in finished(events)[1].content and "mdm" not in finished(events)[1].content
    assert not [n for n in of(events, "notice") if "were fixed before it ran" in n.message]


async def test_a_protocol_the_request_writes_comes_back_as_a_suggestion(scripted_server, study):
    """The request writes cross_subject; a small model sent cross_session, which one-session
    data cannot do: the call is sent back with cross_subject suggested, and the suggested call
    runs."""
    s = scripted_server
    sent = {"protocol": "cross_session", "pipelines": ["csp_lda"], "permutations": 0}
    fixed = {"cross_validate": {"protocol": "cross_subject"}}
    s.queue("fc", record(["cross_validate"], fixed=fixed), Text(fenced("cross_validate", sent)))
    suggested = {**sent, "protocol": "cross_subject"}
    s.queue("fc", Text(fenced("cross_validate", suggested)), Text("Done."))
    s.queue("ans", Text("CSP+LDA across subjects, as cross_validate reports."))
    events = await collect(agent(s, study).run("Cross-validate CSP+LDA with the cross_subject protocol."))  # fmt: skip
    refused, ran = finished(events)
    assert refused.status == "refused" and refused.error.startswith(
        'not run yet: the request sets protocol "cross_subject" (the call sends "cross_session")'
    )
    assert ran.status == "success" and "cross_subject" in study.state.crossval
    assert "cross_session" not in study.state.crossval


async def test_a_protocol_read_from_other_words_guides_but_holds_no_call(scripted_server, study):
    """ "Leave one subject out" writes no protocol: the record's cross_subject is the model's
    reading. It names the next call, but the model's own call is not held to it: it runs, and
    the tool's own error (one session per subject) names the protocols that work."""
    s = scripted_server
    sent = {"protocol": "cross_session", "pipelines": ["csp_lda"], "permutations": 0}
    fixed = {"cross_validate": {"protocol": "cross_subject"}}
    s.queue("fc", record(["cross_validate"], fixed=fixed), Text(fenced("cross_validate", sent)))
    suggested = {**sent, "protocol": "cross_subject"}
    s.queue("fc", Text(fenced("cross_validate", suggested)), Text("Done."))
    s.queue("ans", Text("CSP+LDA across subjects, as cross_validate reports."))
    events = await collect(agent(s, study).run("Leave one subject out with CSP+LDA."))
    first = json.dumps(s.requests_for("fc")[1].messages)
    assert 'cross_validate with {\\"protocol\\": \\"cross_subject\\"}' in first
    failed, ran = finished(events)
    assert failed.status == "error" and "use within_session or cross_subject" in failed.error
    assert ran.status == "success" and "cross_subject" in study.state.crossval


async def test_a_native_model_s_sound_call_runs_as_sent(scripted_server, study):
    """A minimal profile: no record, no suggestion. The pipelines the model chose run although
    the request names others."""
    s = scripted_server
    s.queue("fc", ToolCalls([Call("cross_validate", VERBATIM)]), Text("Done."))
    s.queue("ans", Text("CSP+LDA and TS+LR across subjects, as cross_validate reports."))
    events = await collect(agent(s, study, tool_calling="native").run(QUESTION))
    (ran,) = finished(events)
    assert ran.status == "success" and started(events) == [VERBATIM]
    assert "ts_lr" in ran.content and "mdm" not in ran.content
    assert not any("response_format" in r.params for r in s.requests_for("fc"))


async def test_a_call_holding_every_pipeline_the_request_names_is_not_sent_back(
    scripted_server, study
):
    """The request names CSP+LDA and, in other words, the tangent-space classifier; the small
    model's record has csp_lda only. The model's call compares both: it holds what the request
    writes, so it runs as sent."""
    s = scripted_server
    sent = {"protocol": "cross_subject", "pipelines": ["csp_lda", "ts_lr"], "permutations": 0}
    fixed = {"cross_validate": {"pipelines": ["csp_lda"]}}
    s.queue("fc", record(["cross_validate"], fixed=fixed), Text(fenced("cross_validate", sent)), Text("Done."))  # fmt: skip
    s.queue("ans", Text("Both, as cross_validate reports."))
    events = await collect(agent(s, study).run("CSP+LDA 和切空间分类器跨被试比较，哪个更好？"))
    (ran,) = finished(events)
    assert ran.status == "success" and started(events) == [sent]
