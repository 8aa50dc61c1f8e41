"""Repeats that are not back to back, and the same unusable reply again, are loops.

A small model's run can go: load, band-pass, epoch_data with a bad argument (an error), the
band-pass again, the bad epoch_data again ... until the time limit. The runner judges a repeat on
the study's state: a state-changing call sent again with the study unchanged since (a failed call
changes nothing) is not run again, so the study's history never reads 'band-pass 8-30 Hz,
band-pass 8-30 Hz'; the model is told why, and a third copy stops the run with a notice that
names what repeated, what failed in between and the next call (a tool error's structured fix,
tools/errors.py). A repeat of the request's last step after everything asked is done ends the
tool loop as done, with the ordinary answer request. These rules are the runner's and the
guided profile's; the replies are replayed in the form a 1.5B coder model writes them, through
the scripted server over real HTTP, against the real EEG tools.
"""

from __future__ import annotations

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Text
from test_prompt_epoch_args import BAD_BASELINE, BANDPASS, CORRECTED, fenced, tool_messages
from test_prompt_pipeline import LOAD, PIPELINE, agent, understood

from support import collect, of, record

ROOMY = AgentLimits(evaluation="model", max_execution_time=120, max_auto_rounds=20)

# epoch_data calls that fail with the corrected call as data: event names that are not the
# recordings' (the tool's ToolError), and a baseline outside the epoch (the argument check's
# CorrectedCall, kept by pydantic in the ValidationError)
UNKNOWN_EVENTS = fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5, "events": ["left", "right"]})
FAILING = [
    pytest.param(UNKNOWN_EVENTS, "events=['left', 'right']", id="unknown-events"),
    pytest.param(BAD_BASELINE, "baseline=[0.0, 0.5]", id="baseline"),
]


@pytest.fixture
def study(tmp_path) -> Study:
    data = tmp_path / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=8, seed=1)
    return Study(data)


def ran(events, name):
    return [e.status for e in of(events, "tool_finished") if e.name == name]


def bandpasses(study):
    return [s.op for s in study.state.history].count("bandpass")


async def test_a_band_pass_sent_again_after_a_failed_call_is_not_applied_twice(
    scripted_server, study
):
    """Band-pass, a failing epoch_data, the same band-pass: the copy is not run (the study is the
    same as after the first), the model is told why, and its next reply (the corrected
    epoch_data) goes on from there."""
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS), Text(BAD_BASELINE), Text(BANDPASS))
    s.queue("fc", Text(CORRECTED), Text("Done."), Text("Stop."))  # the last after the one reminder
    s.queue("ans", Text("Filtered once and epoched."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert ran(events, "bandpass_filter") == ["success", "skipped"]
    assert bandpasses(study) == 1 and study.state.stage == "epoched"
    skipped = [e for e in of(events, "tool_finished") if e.status == "skipped"][0]
    assert "changed the study, which is the same since" in skipped.summary
    assert "would apply it twice" in skipped.summary
    told = tool_messages(s, 5)[-1]  # the record, then a request per reply: after the copy
    assert "You already ran bandpass_filter with these arguments" in told
    assert "(a failed call changes nothing)" in told and "It was not run again" in told
    assert of(events, "run_finished")[0].reason == "answered"


async def test_the_same_step_after_the_study_changed_runs_again(scripted_server, study):
    """Not a loop: a different band-pass in between changed the study, so the first one sent
    again is a new step (the user may well want 8-30 Hz after 1-40 Hz)."""
    s = scripted_server
    question = "Load the first two files and band-pass them 8-30 Hz, then 1-40 Hz, then 8-30 Hz."
    made = record(["load", "preprocess"], positions=[1, 2])  # no one band to fix
    other = fenced("bandpass_filter", {"l_freq": 1, "h_freq": 40})
    s.queue("fc", made, Text(LOAD), Text(BANDPASS), Text(other), Text(BANDPASS), Text("Filtered."))
    s.queue("ans", Text("Filtered three times."))
    events = await collect(agent(s, study, limits=ROOMY).run(question))  # room for 5 rounds
    assert ran(events, "bandpass_filter") == ["success", "success", "success"]
    assert bandpasses(study) == 3


@pytest.mark.parametrize(("failing", "shown"), FAILING)
async def test_the_loop_stop_names_the_repeated_step_what_failed_and_the_next_call(
    scripted_server, study, failing, shown
):
    """Band-pass, a failing epoch, band-pass, band-pass. The stop says what repeated (the
    band-pass, 3 times by the ledger), that it was not applied again, what failed in between,
    and the call that fixes it."""
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS), Text(failing), Text(BANDPASS))
    s.queue("fc", Text(BANDPASS))
    s.queue("ans", Text("The band-pass ran."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert of(events, "run_finished")[0].reason == "loop"
    assert bandpasses(study) == 1
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert notice.message.startswith(
        "The agent asked for bandpass_filter(l_freq=8, h_freq=30) 3 times; it had already run"
    )
    assert "the study had not changed since, so it was not applied again" in notice.message
    assert f"In between, epoch_data(tmin=0.5, tmax=2.5, {shown}) failed:" in notice.message
    assert notice.hint == f"Next step: send the corrected call {CORRECTED}. You can ask for that directly."  # fmt: skip
    assert "ephrase" not in notice.hint and "searching" not in notice.message


async def test_an_unreadable_reply_in_between_is_not_the_step_the_loop_stop_names(
    scripted_server, study
):
    """Band-pass, a failing epoch_data, a split that fails for want of epochs, an empty ```json
    block, then the band-pass twice: the stop names the last real failure and the call its error
    points to, never the empty block's made-up tool ('call invalid_tool_call with different
    arguments')."""
    s = scripted_server
    split = fenced("split_dataset", {"by": "trial", "test_ratio": 0.2, "val_ratio": 0.2})
    empty = "```json\n\n```"
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS), Text(BAD_BASELINE), Text(split))
    s.queue("fc", Text(empty), Text(BANDPASS), Text(BANDPASS))
    s.queue("ans", Text("The band-pass ran."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert of(events, "run_finished")[0].reason == "loop" and bandpasses(study) == 1
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert "In between, split_dataset(by='trial'" in notice.message
    assert "no epochs yet: call epoch_data first" in notice.message
    assert notice.hint == "Next step: call epoch_data next. You can ask for that directly."
    assert "invalid_tool_call" not in notice.message + notice.hint


@pytest.mark.parametrize(("failing", "shown"), FAILING)
async def test_the_same_bad_epoch_call_twice_points_to_the_corrected_call(
    scripted_server, study, failing, shown
):
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(failing), Text(failing), Text(failing))
    s.queue("ans", Text("Epoching failed."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert ran(events, "epoch_data") == ["error", "skipped", "skipped"]
    assert f"Next: send the corrected call {CORRECTED}." in tool_messages(s, 4)[-1]
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert notice.message.startswith(
        f"The agent repeated epoch_data(tmin=0.5, tmax=2.5, {shown}) 3 times although"
    )
    assert notice.hint.startswith(f"Next step: send the corrected call {CORRECTED}")


# a call cut short (the closing brace of "arguments" missing), and one breaking split_dataset's
# schema: the two ways a 1.5B model's replies broke the same way round after round
UNREADABLE = '```json\n{"name": "epoch_data", "arguments": {"tmin": 0.5, "tmax": 2.5}\n```'
OFF_SCHEMA = fenced("split_dataset", {"by": "trial", "test_ratio": 2})


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (UNREADABLE, "a tool call that is not valid JSON, refused each time with: “your tool call"),
        (
            OFF_SCHEMA,
            "split_dataset(by='trial', test_ratio=2), refused each time with: “the arguments do not "
            "match split_dataset's schema: test_ratio: 2 is greater than",
        ),
    ],
)
async def test_the_same_unusable_reply_is_a_loop_and_the_stop_says_so(
    scripted_server, study, reply, what
):
    """The same invalid reply again and again: the second is answered as a repeat, the third
    stops the run, and the stop says the model's reply was unusable, not 'the agent repeated
    invalid_tool_call()' with 'call invalid_tool_call with different arguments' as the user's
    next step."""
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(reply), Text(reply), Text(reply))
    s.queue("ans", Text("Nothing more was done."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert [e.status for e in of(events, "tool_finished")][2:] == ["error", "skipped", "skipped"]
    assert len(s.requests_for("fc")) == 5  # the record, the load, three unusable replies: stop
    assert of(events, "run_finished")[0].reason == "loop"
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert notice.message.startswith(f"The model sent the same unusable reply 3 times: {what}")
    assert "invalid_tool_call" not in notice.message + notice.hint
    assert notice.hint.startswith("Ask again naming the step and its values")


async def test_the_evaluation_asked_for_again_ends_the_run_with_an_ordinary_answer(
    scripted_server, study
):
    """The whole pipeline ran, evaluate_model gave its accuracy, and the model called
    evaluate_model again. A loop stop would tell the answer model the loop was cut before the
    request may be complete, and it would list the steps without the accuracy. The first
    repeat of the request's last step ends the tool loop as done: no loop stop, and the answer
    request is the ordinary one."""
    s = scripted_server
    evaluate = Text(fenced("evaluate_model", {"model": "csp_lda"}))
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})),
            Text(fenced("split_dataset", {"by": "trial"})),
            Text(fenced("train_model", {"model": "csp_lda"})), evaluate, evaluate)  # fmt: skip
    s.queue("ans", Text("CSP+LDA reached a test accuracy of 1.000."))
    events = await collect(agent(s, study).run(PIPELINE))
    done = [(e.name, e.status) for e in of(events, "tool_finished")][-2:]
    assert done == [("evaluate_model", "success"), ("evaluate_model", "skipped")]
    assert len(s.requests_for("fc")) == 8  # the record, 7 steps; no request after the repeat
    assert of(events, "run_finished")[0].reason == "answered"
    assert not [n for n in of(events, "notice") if n.kind == "loop"]
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    asked = s.requests_for("ans")[0].messages[-1]["content"]
    assert "loop detection" not in asked and "cut by" not in asked


async def test_the_evaluation_asked_again_in_other_words_ends_the_run_as_done(
    scripted_server, study
):
    """A 1.5B model's calls: the whole pipeline with every argument filled, its own split sent
    again after the suggestion of the asked one (the model decides), evaluate_model(model=
    'csp_lda'), then evaluate_model() with the same result. A call that gives the last asked
    step's result word for word is that step asked again: the run ends as done, with the
    ordinary answer request, not at a round limit that tells the answer model to say what
    remains."""
    s = scripted_server
    split = Text(fenced("split_dataset", {"by": "session", "test_ratio": 0.2, "val_ratio": 0.2,
                                          "seed": 0}))  # fmt: skip
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5,
                                       "events": ["left_hand", "right_hand"], "baseline": None})),
            split, split,
            Text(fenced("train_model", {"model": "csp_lda", "epochs": 30, "batch_size": 32,
                                        "learning_rate": 0.001, "optimizer": "adam", "seed": 0,
                                        "device": "auto"})),
            Text(fenced("evaluate_model", {"model": "csp_lda"})),
            Text(fenced("evaluate_model", {})))  # fmt: skip
    s.queue("ans", Text("CSP+LDA reached a test accuracy of 0.9."))
    # the round limit far off: the run ends because the repeat added nothing
    events = await collect(agent(s, study, limits=ROOMY).run(PIPELINE))
    assert ran(events, "split_dataset") == ["refused", "success"]
    done = [(e.name, e.status) for e in of(events, "tool_finished")][-2:]
    assert done == [("evaluate_model", "success"), ("evaluate_model", "success")]
    assert of(events, "run_finished")[0].reason == "answered"
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason
    assert "ran nothing new (evaluate_model)" in of(events, "evaluation")[-1].reason
    assert not [n for n in of(events, "notice") if n.kind in ("round_limit", "loop")]
    asked = s.requests_for("ans")[0].messages[-1]["content"]
    assert "round" not in asked.lower() and "remain" not in asked


async def test_at_the_round_limit_with_every_asked_step_done_the_answer_is_an_ordinary_one(
    scripted_server, study
):
    """The round limit (raised to the rounds the asked steps take, and two more) reached on a
    round the request did not ask for (a look at the study after the evaluation): every asked
    step is done, so nothing was cut short."""
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})),
            Text(fenced("split_dataset", {"by": "trial"})),
            Text(fenced("train_model", {"model": "csp_lda"})),
            Text(fenced("evaluate_model", {"model": "csp_lda"})),
            Text(fenced("get_study_state", {})))  # fmt: skip
    s.queue("ans", Text("CSP+LDA reached a test accuracy of 0.9."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert [e.status for e in of(events, "tool_finished")][-1] == "success"
    assert of(events, "run_finished")[0].reason == "answered"
    assert not [n for n in of(events, "notice") if n.kind == "round_limit"]
    assert "every step the request asks for is done" in of(events, "evaluation")[-1].reason


async def test_an_unreadable_call_is_never_named_as_a_tool_to_either_model(scripted_server, study):
    """A history that names an unreadable call `invalid_tool_call` (its result block, the
    evaluation note) leads a small model to call a tool of that name. The model reads what was
    wrong and the form to write; the answer model reads that a reply held no readable call,
    without the repair instruction it could repeat as the answer."""
    s = scripted_server
    s.queue("fc", understood(), Text(LOAD), Text(UNREADABLE), Text("Done."), Text("Stop."))
    s.queue("ans", Text("sub-01 is loaded."))
    events = await collect(agent(s, study).run(PIPELINE))
    assert ran(events, "load_data") == ["success"]
    after = " ".join(str(m["content"]) for m in s.requests_for("fc")[3].messages)
    assert "your tool call was not valid JSON" in after  # the repair hint still reaches it
    assert "Reply with one ```json block holding" in after
    assert "invalid_tool_call" not in after
    told = " ".join(str(m["content"]) for m in s.requests_for("ans")[0].messages)
    assert "a reply whose tool call could not be read (not valid JSON" in told
    assert "invalid_tool_call" not in told and "Reply with one ```json" not in told
