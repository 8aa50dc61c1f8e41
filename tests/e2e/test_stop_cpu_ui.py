"""Stop that stops (#37), in a real browser: the page's Stop button ends a 1,000-permutation
cross-validation's computing in its kernel, the page says the step was stopped, and the next
request in the same conversation finds the study as it was before the stopped step.

Before kernels, a stopped cross-validation with permutations went on computing after Stop (the
permutation loop never looked at the stop flag, and a thread cannot be ended)."""

from __future__ import annotations

import pytest
from kernel_cpu import CpuWatch, study_kernels

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import (
    STOP_NOTICE,
    messages_text,
    open_chat,
    poll,
    send,
    spec,
    step_titles,
    wait_idle,
)

pytestmark = pytest.mark.browser
FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
LONG_RUN = ToolCalls([
    Call("load_data", {"files": FILES}), Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
    Call("cross_validate", {"protocol": "within_session", "permutations": 1000})])  # fmt: skip
BACK = "The study is back after the stop."


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory: pytest.TempPathFactory) -> str:
    home = tmp_path_factory.mktemp("home")
    write_demo_set(home / "data", subjects=1, sessions=2, trials=24, seed=3)
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "AGENT_TOOL_TIMEOUT": "600", "AGENT_MAX_TIME": "600"}  # fmt: skip
    return str(app_factory(env, home=home))


def state_told_to_model(model_server) -> str:  # type: ignore[no-untyped-def]
    """The get_study_state result the model was sent, read from the scripted server's log."""
    for request in reversed(model_server.requests_for("fc-m")):
        for message in request.messages:
            if message.get("role") == "tool" and "stage:" in str(message.get("content")):
                return str(message["content"])
    raise AssertionError("the model was never sent the study's state")


def test_stop_in_the_page_ends_the_kernels_computing_and_the_study_comes_back(
    model_server, app, app_factory, browser
) -> None:
    model_server.queue("fc-m", LONG_RUN)  # stopped in this round: nothing else is asked
    page = open_chat(browser, app)
    send(page, "cross-validate my two sessions with a thousand permutations")
    page.wait_for_selector("[id^='step-cross_validate']", state="attached", timeout=180_000)
    poll(lambda: len(study_kernels(app_factory.pid(app))) == 1, "the study's kernel", 60)
    watch = CpuWatch(study_kernels(app_factory.pid(app)))
    watch.wait_growing(step=1.0, more=0.02)  # the permutations are computing (at nice 10)
    page.click("#stop-button")
    watch.wait_quiet(step=1.0, below=0.01, bound=30)  # a failure guard, not the figure
    page.wait_for_selector(STOP_NOTICE, timeout=60_000)
    wait_idle(page)
    titles = step_titles(page)
    assert any(t.startswith("cross_validate") and t.endswith("· stopped") for t in titles), titles

    model_server.queue(
        "fc-m", ToolCalls([Call("get_study_state", {})]), Text("The tool ran."), Text(BACK)
    )  # the call, the decision to answer, the answer
    send(page, "where does my study stand now?")
    page.wait_for_selector(f"text={BACK}", timeout=180_000)
    wait_idle(page)
    state = state_told_to_model(model_server)  # what the kernel holds after the stop
    assert "stage: epoched" in state and "epochs: left_hand 24, right_hand 24" in state, state
    assert "failed" not in messages_text(page).split(STOP_NOTICE.removeprefix("text="))[-1]
    assert not model_server.problems(), model_server.problems()
    page.close()
