"""Repeats that are not back to back, and the same unusable reply again, are loops (issue #23).

Seen with Qwen2.5-Coder-1.5B-Instruct (bench/README): load, band-pass, epoch_data with a baseline
outside the epoch (error), band-pass again, the bad epoch_data again ... until the time limit;
the study's history read 'band-pass 8-30 Hz, band-pass 8-30 Hz': the failed call between the
copies reset what was seen, so the second band-pass ran. The replies are replayed in the form the
model writes them, through the scripted server over real HTTP, against the real EEG tools. The
requests ask for a baseline correction, so the bad baseline stays an error (unasked, it is left
out: test_prompt_epoch_args).
"""

from __future__ import annotations

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.testing.scripted_server import Text
from test_prompt_epoch_args import (
    ASKS_BASELINE,
    BAD_BASELINE,
    BANDPASS,
    CORRECTED,
    fenced,
    tool_messages,
)
from test_prompt_pipeline import LOAD, PIPELINE, agent

from support import collect, of


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
    """Before: statuses success, error, success, and two band-passes in the study's history.
    Now the copy is not run (the study is the same as after the first), the model is told why,
    and its next reply (the corrected epoch_data) goes on from there."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS), Text(BAD_BASELINE), Text(BANDPASS))
    s.queue("fc", Text(CORRECTED), Text("Done."))
    s.queue("ans", Text("Filtered once and epoched."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert ran(events, "bandpass_filter") == ["success", "skipped"]
    assert bandpasses(study) == 1 and study.state.stage == "epoched"
    skipped = [e for e in of(events, "tool_finished") if e.status == "skipped"][0]
    assert "changed the study, which is the same since" in skipped.summary
    assert "would apply it twice" in skipped.summary
    told = tool_messages(s, 4)[-1]
    assert "You already ran bandpass_filter with these arguments" in told
    assert "(a failed call changes nothing)" in told and "It was not run again" in told
    assert of(events, "run_finished")[0].reason == "answered"


async def test_the_same_step_after_the_study_changed_runs_again(scripted_server, study):
    """Not a loop: a different band-pass in between changed the study, so the first one sent
    again is a new step (the user may well want 8-30 Hz after 1-40 Hz)."""
    s = scripted_server
    other = fenced("bandpass_filter", {"l_freq": 1, "h_freq": 40})
    s.queue("fc", Text(LOAD), Text(BANDPASS), Text(other), Text(BANDPASS), Text("Filtered."))
    s.queue("ans", Text("Filtered three times."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert ran(events, "bandpass_filter") == ["success", "success", "success"]
    assert bandpasses(study) == 3


async def test_the_loop_stop_names_the_repeated_step_what_failed_and_the_next_call(
    scripted_server, study
):
    """The bench's run to the time limit: band-pass, bad epoch, band-pass, band-pass. The stop
    says what repeated (the band-pass, 3 times by the ledger), that it was not applied again,
    what failed in between, and the call that fixes it."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS), Text(BAD_BASELINE), Text(BANDPASS), Text(BANDPASS))
    s.queue("ans", Text("The band-pass ran."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert of(events, "run_finished")[0].reason == "loop"
    assert bandpasses(study) == 1
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert notice.message.startswith(
        "The agent asked for bandpass_filter(l_freq=8, h_freq=30) 3 times; it had already run"
    )
    assert "the study had not changed since, so it was not applied again" in notice.message
    assert "In between, epoch_data(tmin=0.5, tmax=2.5, baseline=[0.0, 0.5]) failed:" in (
        notice.message
    )
    assert notice.hint == f"Next step: send the corrected call {CORRECTED}. You can ask for that directly."  # fmt: skip
    assert "ephrase" not in notice.hint and "searching" not in notice.message


async def test_an_unreadable_reply_in_between_is_not_the_step_the_loop_stop_names(
    scripted_server, study
):
    """The bench's pipeline run of 27 Nov: band-pass, a failing epoch_data, a split that failed
    for want of epochs, an empty ```json block, then the band-pass twice. The stop named the
    empty block's made-up tool: 'Next step: call invalid_tool_call with different arguments'.
    It names the last real failure and the call its error points to."""
    s = scripted_server
    split = fenced("split_dataset", {"by": "trial", "test_ratio": 0.2, "val_ratio": 0.2})
    empty = "```json\n\n```"
    s.queue("fc", Text(LOAD), Text(BANDPASS), Text(BAD_BASELINE), Text(split), Text(empty))
    s.queue("fc", Text(BANDPASS), Text(BANDPASS))
    s.queue("ans", Text("The band-pass ran."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert of(events, "run_finished")[0].reason == "loop" and bandpasses(study) == 1
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert "In between, split_dataset(by='trial'" in notice.message
    assert "no epochs yet: call epoch_data first" in notice.message
    assert notice.hint == "Next step: call epoch_data next. You can ask for that directly."
    assert "invalid_tool_call" not in notice.message + notice.hint


async def test_the_same_bad_epoch_call_twice_points_to_the_corrected_call(scripted_server, study):
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BAD_BASELINE), Text(BAD_BASELINE), Text(BAD_BASELINE))
    s.queue("ans", Text("Epoching failed."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert ran(events, "epoch_data") == ["error", "skipped", "skipped"]
    assert f"Next: send the corrected call {CORRECTED}." in tool_messages(s, 3)[-1]
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert notice.message.startswith(
        "The agent repeated epoch_data(tmin=0.5, tmax=2.5, baseline=[0.0, 0.5]) 3 times although"
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
            "split_dataset(by='trial', test_ratio=2), refused each time with: “invalid arg",
        ),
    ],
)
async def test_the_same_unusable_reply_is_a_loop_and_the_stop_says_so(
    scripted_server, study, reply, what
):
    """Six identical invalid replies ran to the time limit. The second is answered as a
    repeat, the third stops the run, and the stop says the model's reply was unusable, not
    'the agent repeated invalid_tool_call()' with 'call invalid_tool_call with different
    arguments' as the user's next step."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(reply), Text(reply), Text(reply))
    s.queue("ans", Text("Nothing more was done."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert [e.status for e in of(events, "tool_finished")][2:] == ["error", "skipped", "skipped"]
    assert len(s.requests_for("fc")) == 4  # listing, load, then three unusable replies: stop
    assert of(events, "run_finished")[0].reason == "loop"
    (notice,) = [n for n in of(events, "notice") if n.kind == "loop"]
    assert notice.message.startswith(f"The model sent the same unusable reply 3 times: {what}")
    assert "invalid_tool_call" not in notice.message + notice.hint
    assert notice.hint.startswith("Ask again naming the step and its values")


async def test_the_evaluation_asked_for_again_ends_the_run_with_an_ordinary_answer(
    scripted_server, study
):
    """Quiet bench, 8 rounds (runs 1 and 3): the whole pipeline ran, evaluate_model gave 0.974,
    and the model called evaluate_model twice more. The loop stop ended the run and told the
    answer model the loop was cut before the request may be complete; it listed the steps
    without the accuracy. The first repeat of the request's last step now ends the tool loop
    as done: no loop stop, and the answer request is the ordinary one."""
    s = scripted_server
    evaluate = Text(fenced("evaluate_model", {"model": "csp_lda"}))
    s.queue("fc", Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5})),
            Text(fenced("split_dataset", {"by": "trial"})),
            Text(fenced("train_model", {"model": "csp_lda"})), evaluate, evaluate)  # fmt: skip
    s.queue("ans", Text("CSP+LDA reached a test accuracy of 1.000."))
    events = await collect(agent(s, study).run(PIPELINE))
    done = [(e.name, e.status) for e in of(events, "tool_finished")][-2:]
    assert done == [("evaluate_model", "success"), ("evaluate_model", "skipped")]
    assert len(s.requests_for("fc")) == 7  # no request after the repeat
    assert of(events, "run_finished")[0].reason == "answered"
    assert not [n for n in of(events, "notice") if n.kind == "loop"]
    assert "already gave the result the request asks for" in of(events, "evaluation")[-1].reason
    asked = s.requests_for("ans")[0].messages[-1]["content"]
    assert "loop detection" not in asked and "cut by" not in asked


async def test_the_evaluation_asked_again_in_other_words_ends_the_run_at_the_round_limit(
    scripted_server, study
):
    """The bench's pipeline run 2 of 27 Nov (--keep), its calls verbatim: the whole pipeline,
    evaluate_model(model='csp_lda'), then evaluate_model() with the same result in round 8,
    auto mode's limit for this request. The round limit stopped the run, the answer model was
    told to say what remains, repeated that, and brainchat's facts replaced the answer. A call
    that gives the last asked step's result word for word is that step asked again: the run
    ends as done, with the ordinary answer request."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS),
            Text(fenced("epoch_data", {"tmin": 0.5, "tmax": 2.5,
                                       "events": ["left_hand", "right_hand"], "baseline": None})),
            Text(fenced("split_dataset", {"by": "session", "test_ratio": 0.2, "val_ratio": 0.2,
                                          "seed": 0})),
            Text(fenced("train_model", {"model": "csp_lda", "epochs": 30, "batch_size": 32,
                                        "learning_rate": 0.001, "optimizer": "adam", "seed": 0,
                                        "device": "auto"})),
            Text(fenced("evaluate_model", {"model": "csp_lda"})),
            Text(fenced("evaluate_model", {})))  # fmt: skip
    s.queue("ans", Text("CSP+LDA reached a test accuracy of 0.9."))
    events = await collect(agent(s, study).run(PIPELINE))
    done = [(e.name, e.status) for e in of(events, "tool_finished")][-2:]
    assert done == [("evaluate_model", "success"), ("evaluate_model", "success")]
    assert of(events, "run_finished")[0].reason == "answered"
    assert "already gave the result the request asks for" in of(events, "evaluation")[-1].reason
    assert not [n for n in of(events, "notice") if n.kind in ("round_limit", "loop")]
    asked = s.requests_for("ans")[0].messages[-1]["content"]
    assert "round" not in asked.lower() and "remain" not in asked


async def test_at_the_round_limit_with_every_asked_step_done_the_answer_is_an_ordinary_one(
    scripted_server, study
):
    """Auto mode's limit reached on a round the request did not ask for (a plot after the
    evaluation): every asked step is done, so nothing was cut short."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(BANDPASS),
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
    """Golden run of 25 Nov (eeg-load-both-sessions): the history named an unreadable call
    `invalid_tool_call` (its result block and the evaluation note), and the 1.5B model then
    called a tool of that name. The model reads what was wrong and the form to write; the
    answer model reads that a reply held no readable call, without the repair instruction it
    could repeat as the answer."""
    s = scripted_server
    s.queue("fc", Text(LOAD), Text(UNREADABLE), Text("Done."))
    s.queue("ans", Text("sub-01 is loaded."))
    events = await collect(agent(s, study).run(ASKS_BASELINE))
    assert ran(events, "load_data") == ["success"]
    after = " ".join(str(m["content"]) for m in s.requests_for("fc")[2].messages)
    assert "your tool call was not valid JSON" in after  # the repair hint still reaches it
    assert "Reply with one ```json block holding" in after
    assert "invalid_tool_call" not in after
    told = " ".join(str(m["content"]) for m in s.requests_for("ans")[0].messages)
    assert "a reply whose tool call could not be read (not valid JSON" in told
    assert "invalid_tool_call" not in told and "Reply with one ```json" not in told
