"""epoch_data's arguments: errors that name what is allowed and a corrected call, slips of form
that run, and values that are valid but unlikely to be meant, sent back to a guided model.

A small model writes a baseline outside its own epoch, a baseline as the text "None", a
rejection threshold of a few µV that drops every epoch, or a split other than the one asked for.
Three different answers, none a silent rewrite:

- a call the tool cannot run fails with the tool's own rule, the allowed values and a corrected
  call (`Corrected call: {...}`), whatever the request says;
- a slip with one meaning (a baseline "None", [null], []) is fixed before the check, and said to
  the user and the model (eeg/tools/repairs.py);
- a valid call that contradicts the request's record, or that the EEG domain would look at twice
  (a threshold under EEG's usual amplitude the user did not set), is not run but sent back with a
  suggested call (agent/guided.py UserValues); the model decides, and the same call sent again
  runs as it is. A model calling tools natively is not second-guessed.

The replies are a 1.5B coder model's, in the form it writes them (one ```json block), through
the scripted server over real HTTP, against the real EEG tools on a synthetic data set.
"""

from __future__ import annotations

import json

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from test_prompt_pipeline import FIXED, LOAD, PIPELINE, agent, understood

from support import collect, of, record


def fenced(name: str, arguments: dict) -> str:
    """One call as the 1.5B model writes it at temperature 0."""
    return f"```json\n{json.dumps({'name': name, 'arguments': arguments})}\n```"


def call(name: str, arguments: dict) -> str:
    """A call as a tool's error or a suggestion writes it."""
    return json.dumps({"name": name, "arguments": arguments})


BANDPASS = fenced("bandpass_filter", {"l_freq": 8, "h_freq": 30})
BAD_BASELINE = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5, "baseline": [0.0, 0.5]})
CORRECTED = '{"name": "epoch_data", "arguments": {"tmin": 0.5, "tmax": 2.5}}'
EPOCHING = "Load the first two files, band-pass 8-30 Hz and epoch 0.5-2.5 s."
EPOCH_VALUES = {"epoch_data": {"tmin": 0.5, "tmax": 2.5}}


def epoching():
    """The record of EPOCHING: three steps, the files by place, the band and the epoch fixed."""
    return record(
        ["load", "preprocess", "epoch"],
        positions=[1, 2],
        fixed={"bandpass_filter": FIXED["bandpass_filter"], **EPOCH_VALUES},
    )


@pytest.fixture
def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(data)


def epochs_of(events):
    return [e for e in of(events, "tool_finished") if e.name == "epoch_data"]


def started_epochs(events):
    return [e.args for e in of(events, "tool_call_started") if e.name == "epoch_data"]


def tool_messages(server, n: int) -> list[str]:
    """The tool results of the `n`th function-call request (prompt mode: <tool_result> blocks
    in user messages), last one last."""
    texts = [str(m["content"]) for m in server.requests_for("fc")[n].messages]
    return [b.split(">", 1)[1] for t in texts for b in t.split("<tool_result ")[1:]]


async def test_a_baseline_outside_the_epoch_names_the_rule_and_a_corrected_call(
    scripted_server, study
):
    """MNE's own words ('Baseline interval [0.0, 0.5] sec is outside of epochs data [0.5, 2.5]
    sec') say what is wrong, not what to write: the error says what is allowed and which call
    to send, and the model's copy of that call epochs."""
    s = scripted_server
    s.queue("fc", epoching(), Text(LOAD), Text(BANDPASS), Text(BAD_BASELINE), Text(CORRECTED))
    s.queue("fc", Text("Done."))
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study).run(EPOCHING))
    bad, good = epochs_of(events)
    assert bad.status == "error" and good.status == "success"
    assert "baseline [0.0, 0.5] is outside the epoch 0.5..2.5 s" in bad.error
    assert "Allowed: leave baseline out (null: no baseline correction" in bad.error
    assert "0.5 <= start <= end <= 2.5" in bad.error
    assert bad.error.endswith(f"Corrected call: {CORRECTED}")
    assert "Value error" not in bad.error
    told = tool_messages(s, 4)[-1]  # the record, then one request a step: the bad call's result
    assert CORRECTED in told
    assert study.state.stage == "epoched"
    steps = [st.op for st in study.state.history]
    assert steps.count("bandpass") == 1


# a 1.5B model's epoch_data call after load and band-pass, for a request that asks for no
# baseline: a baseline the model made up, outside its own epoch, and a threshold
MADE_UP = fenced(
    "epoch_data",
    {
        "tmin": 0.5,
        "tmax": 2.5,
        "events": ["left_hand", "right_hand"],
        "baseline": [0.0, 0.0],
        "reject_uv": 100.0,
    },  # fmt: skip
)
MADE_UP_CORRECTED = call(
    "epoch_data",
    {"tmin": 0.5, "tmax": 2.5, "events": ["left_hand", "right_hand"], "reject_uv": 100.0},
)


ASKS_BASELINE = EPOCHING.replace("0.5-2.5 s", "0.5-2.5 s with baseline correction")


@pytest.mark.parametrize("question", [EPOCHING, ASKS_BASELINE])
async def test_a_made_up_baseline_is_an_error_with_a_corrected_call_whatever_the_request(
    scripted_server, study, question
):
    """Asked for or not, a baseline outside the epoch is not dropped behind the model's back:
    the call fails with the corrected call (the model's own arguments less the baseline), and
    the model sends it."""
    s = scripted_server
    s.queue("fc", epoching(), Text(LOAD), Text(BANDPASS), Text(MADE_UP))
    s.queue("fc", Text(f"```json\n{MADE_UP_CORRECTED}\n```"), Text("Done."))
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study).run(question))
    bad, good = epochs_of(events)
    assert bad.status == "error" and good.status == "success"
    assert "baseline [0.0, 0.0] is outside the epoch 0.5..2.5 s" in bad.error
    assert bad.error.endswith(f"Corrected call: {MADE_UP_CORRECTED}")
    first, second = started_epochs(events)
    assert first["baseline"] == [0.0, 0.0]  # what ran is what was sent
    assert "baseline" not in second and second["reject_uv"] == 100.0
    assert study.state.stage == "epoched"
    assert not [n for n in of(events, "notice") if "left out" in n.message]


@pytest.mark.parametrize("written", ["None", "null", [None], []])
async def test_a_baseline_meaning_none_runs_as_null_and_says_so(scripted_server, study, written):
    """A value with one meaning ("None", as a schema that said 'None: no correction' led the
    model to write) runs as null instead of failing the JSON schema; the user and the model are
    told."""
    s = scripted_server
    slip = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5, "baseline": written})
    s.queue("fc", epoching(), Text(LOAD), Text(BANDPASS), Text(slip), Text("Done."))
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study).run(EPOCHING))
    (ran,) = epochs_of(events)
    assert ran.status == "success" and study.state.stage == "epoched"
    assert started_epochs(events)[0]["baseline"] is None  # the ledger holds what ran
    shown = json.dumps(written)
    (notice,) = [n for n in of(events, "notice") if "was read as null" in n.message]
    assert notice.message == (
        f"epoch_data's arguments were fixed before it ran: baseline {shown} was read as null "
        "(no baseline correction)."
    )
    told = tool_messages(s, 4)[-1].strip()
    assert told.startswith(f"(brainchat fixed your arguments before running it: baseline {shown}")
    assert "epoched 0.5..2.5 s" in told


async def test_native_mode_fixes_the_same_slip(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text(LOAD))
    s.queue("fc", ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5, "baseline": "None"})]))
    s.queue("fc", Text("Done."))
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study, "native").run(PIPELINE))
    assert [e.status for e in epochs_of(events)] == ["success"]
    assert [n for n in of(events, "notice") if "was read as null" in n.message]


@pytest.mark.parametrize(
    ("written", "why"),
    [([0.2], "baseline [0.2] is not an interval"), ("abc", 'baseline "abc" is not an interval')],
)
async def test_an_ambiguous_baseline_is_refused_with_the_allowed_forms(
    scripted_server, study, written, why
):
    """[0.2] could be a start or an end: not guessed. The refusal is the tool's own rule (the
    allowed forms and a corrected call), not the JSON schema's '[0.2] is too short'."""
    s = scripted_server
    epoch = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5, "baseline": written})
    s.queue("fc", epoching(), Text(LOAD), Text(epoch), Text("Stop."))
    s.queue("fc", Text("Stop."))  # after the one reminder that the epoching never ran
    s.queue("ans", Text("Not epoched."))
    events = await collect(agent(s, study).run(EPOCHING))
    (bad,) = epochs_of(events)
    assert bad.status == "error" and why in bad.error
    assert "Allowed: leave baseline out" in bad.error and CORRECTED in bad.error
    assert study.state.stage == "loaded"


async def test_swapped_times_and_unknown_events_name_a_corrected_call(scripted_server, study):
    """The record fixes no epoch here (PIPELINE's), so the tool's own check speaks."""
    s = scripted_server
    swapped = fenced("epoch_data", {"tmin": 2.5, "tmax": 0.5})
    events_bad = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5, "events": ["left", "right"]})
    task = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5, "events": ["mi"]})
    s.queue("fc", understood(), Text(LOAD), Text(swapped), Text(events_bad), Text(task))
    s.queue("fc", Text("Stop."), Text("Stop."))  # the second after the one reminder
    s.queue("ans", Text("Not epoched."))
    events = await collect(agent(s, study).run(PIPELINE))
    first, second, third = epochs_of(events)
    assert first.error.endswith(f"must be before tmax (0.5 s). Corrected call: {CORRECTED}")
    assert "unknown event(s) ['left', 'right']; available: left_hand, right_hand" in second.error
    assert second.error.endswith(f"Corrected call: {CORRECTED}")
    # a recording's label (task-mi) named as an event: an error that says so, not a silent
    # switch to every event
    assert third.status == "error"
    assert "(mi is a label of the recordings' file names, not an event)" in third.error
    assert third.error.endswith(f"Corrected call: {CORRECTED}")
    assert study.state.stage == "loaded"


def test_the_prompt_schema_says_null_not_none():
    """The slim schema the model reads said 'None: no correction'; the model wrote "None"."""
    from brainchat.agent.toolsprompt import tools_prompt
    from brainchat.eeg.tools.tools import build_eeg_tools
    from brainchat.tools.schemas import openai_schema

    tools = build_eeg_tools(Study("."))
    text = tools_prompt([openai_schema(t) for t in tools if t.name == "epoch_data"])
    assert "None:" not in text and "null (default): no baseline correction" in text


# a 1.5B model's epoch_data call: a rejection threshold of 2 µV nobody asked for, which drops
# every epoch
TINY = {"tmin": 0.5, "tmax": 2.5, "events": ["left_hand", "right_hand"], "baseline": None,
        "reject_uv": 2.0}  # fmt: skip
TINY_REJECT = fenced("epoch_data", TINY)
WITHOUT = call("epoch_data", {k: v for k, v in TINY.items() if k != "reject_uv"})
SENT_BACK = (
    "not run yet: reject_uv 2 µV is under EEG's usual peak-to-peak amplitude (50-150 µV), so it "
    f"would drop most epochs or all, and the request sets no threshold. Suggested call: {WITHOUT} "
    "(the same call sent again unchanged runs as it is)"
)


@pytest.mark.parametrize("taken", [True, False])
async def test_a_threshold_under_eeg_peak_to_peak_is_sent_back_for_the_model_to_decide(
    scripted_server, study, taken
):
    """Not run the first time, and not rewritten: the model reads why and the call without the
    threshold. The suggested call epochs without rejection; the same call sent again runs as
    it is, threshold and all."""
    s = scripted_server
    again = WITHOUT if taken else TINY_REJECT.split("\n")[1]
    s.queue("fc", epoching(), Text(LOAD), Text(BANDPASS), Text(TINY_REJECT))
    s.queue("fc", Text(f"```json\n{again}\n```"), Text("Done."))
    if not taken:
        s.queue("fc", Text("Stop."))  # after the one reminder that the epoching never succeeded
    s.queue("ans", Text("Epoched."))
    events = await collect(agent(s, study).run(EPOCHING))
    first, second = epochs_of(events)
    assert first.status == "refused" and first.error == SENT_BACK
    assert f"Suggested call: {WITHOUT}" in tool_messages(s, 4)[-1]
    assert not [n for n in of(events, "notice") if "arguments were fixed" in n.message]
    sent = started_epochs(events)
    assert sent[0] == TINY  # not rewritten
    if taken:
        assert "reject_uv" not in sent[1] and second.status == "success"
        assert study.state.stage == "epoched"
    else:  # it ran as sent: the tool itself says what the threshold did
        assert sent[1] == TINY and second.status == "error"
        assert "reject_uv=2 µV dropped all 16 epoch(s)" in second.error
        assert study.state.stage == "loaded"


@pytest.mark.parametrize(
    ("question", "made", "tool_calling"),
    [
        (  # the user set the threshold: theirs to set
            "Load the first two files, band-pass 8-30 Hz and epoch 0.5-2.5 s, rejecting epochs "
            "over 2 µV.",
            record(["load", "preprocess", "epoch"], positions=[1, 2],
                   fixed={"bandpass_filter": FIXED["bandpass_filter"],
                          "epoch_data": {"tmin": 0.5, "tmax": 2.5, "reject_uv": 2}}),
            "prompt",
        ),
        (EPOCHING, None, "native"),  # a strong model: not second-guessed
    ],
)  # fmt: skip
async def test_a_threshold_the_user_set_or_a_native_model_sent_runs_as_sent(
    scripted_server, study, question, made, tool_calling
):
    s = scripted_server
    if made is not None:
        s.queue("fc", made, Text(LOAD), Text(BANDPASS), Text(TINY_REJECT), Text("Done."))
        s.queue("fc", Text("Stop."))  # after the one reminder that the epoching never succeeded
    else:
        files = json.loads(LOAD.split("\n")[1])["arguments"]
        s.queue("fc", ToolCalls([Call("load_data", files)]))
        s.queue("fc", ToolCalls([Call("bandpass_filter", FIXED["bandpass_filter"])]))
        s.queue("fc", ToolCalls([Call("epoch_data", TINY)]), Text("Done."))
    s.queue("ans", Text("No epochs were left."))
    events = await collect(agent(s, study, tool_calling).run(question))
    (ran,) = epochs_of(events)
    assert started_epochs(events) == [TINY]  # run at once, as sent: the tool says what it did
    assert ran.status == "error" and "reject_uv=2 µV dropped all" in ran.error
    assert not [e for e in of(events, "tool_finished") if e.status == "refused"]


# a 1.5B model's split for "... split by trial, train CSP+LDA, test accuracy?": a session split,
# whose test set is other trials than those asked for
SESSION = {"by": "session", "test_ratio": 0.2, "val_ratio": 0.2, "seed": 0}
SESSION_SPLIT = fenced("split_dataset", SESSION)
BY_TRIAL = call("split_dataset", {**SESSION, "by": "trial"})
EPOCH = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})


def splits(events):
    return [e for e in of(events, "tool_finished") if e.name == "split_dataset"]


@pytest.mark.parametrize("taken", [True, False])
async def test_a_split_other_than_the_one_asked_for_is_sent_back_not_replaced(
    scripted_server, study, taken
):
    """The record fixes `by: trial`; the model splits by session. The call comes back naming
    the conflict and the suggested call: the model's choice runs, the suggested call or its own
    sent again."""
    s = scripted_server
    again = BY_TRIAL if taken else SESSION_SPLIT.split("\n")[1]
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS), Text(EPOCH), Text(SESSION_SPLIT))
    s.queue(
        "fc", Text(f"```json\n{again}\n```"), Text("Stop."), Text("Stop.")
    )  # the last after the one reminder
    s.queue("ans", Text("Split."))
    events = await collect(agent(s, study).run(PIPELINE))
    first, second = splits(events)
    assert first.status == "refused" and first.error == (
        'not run yet: the request sets by "trial" (the call sends "session"). Suggested call: '
        f"{BY_TRIAL} (the same call sent again unchanged runs as it is)"
    )
    assert second.status == "success"
    assert study.state.split is not None
    assert study.state.split.by == ("trial" if taken else "session")
    sent = [e.args["by"] for e in of(events, "tool_call_started") if e.name == "split_dataset"]
    assert sent == ["session", "trial" if taken else "session"]  # what ran is what was sent
    assert not [n for n in of(events, "notice") if "was replaced by" in n.message]


@pytest.mark.parametrize(
    ("question", "made"),
    [
        (  # the model's choice is the user's
            "Load the files, epoch, split by session and train CSP+LDA",
            record(["load", "epoch", "split", "train"], fixed={"split_dataset": {"by": "session"}}),
        ),
        (  # no split named: the model decides
            "Load the files, epoch them and train CSP+LDA",
            record(["load", "epoch", "split", "train"]),
        ),
    ],
)
async def test_a_split_the_request_names_or_leaves_open_is_left_as_sent(
    scripted_server, study, question, made
):
    s = scripted_server
    s.queue("fc", made, Text(LOAD), Text(EPOCH), Text(SESSION_SPLIT), Text("Done."))
    s.queue("fc", Text("Stop."))  # after the one reminder that the training never ran
    s.queue("ans", Text("Split."))
    events = await collect(agent(s, study).run(question))
    (split,) = splits(events)
    assert split.status == "success" and study.state.split.by == "session"
    assert not [n for n in of(events, "notice") if "split_dataset" in n.message]
