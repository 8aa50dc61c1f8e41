"""A run outlives its page (#37), in a real browser: reloading while a cross-validation computes
shows the run going on, its answer arrives in the reloaded page, and Stop works from there.

Before: a reload mid-training left the step frozen ("train_model · epoch 4/12"), with no Stop
button and no answer, while the server went on."""

from __future__ import annotations

import re

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import (
    STOP_NOTICE,
    click_until,
    open_chat,
    send,
    spec,
    step_titles,
    wait_idle,
)

pytestmark = pytest.mark.browser
FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
THREAD = re.compile(r"/thread/([0-9a-f-]{36})")


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory: pytest.TempPathFactory) -> str:
    home = tmp_path_factory.mktemp("home")
    write_demo_set(home / "data", subjects=1, sessions=2, trials=24, seed=3)
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "AGENT_TOOL_TIMEOUT": "600", "AGENT_MAX_TIME": "600"}  # fmt: skip
    return str(app_factory(env, home=home))


def long_run(permutations: int) -> ToolCalls:
    return ToolCalls([
        Call("load_data", {"files": FILES}), Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        Call("cross_validate", {"protocol": "within_session", "permutations": permutations})])  # fmt: skip


def reload_mid_run(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_url(THREAD, timeout=60_000)
    # the cross-validation's step exists (its title says the fold it is at)
    page.wait_for_selector("[id^='step-cross_validate']", state="attached", timeout=180_000)
    page.wait_for_timeout(1500)
    page.reload()
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("#stop-button", timeout=30_000)  # the page shows the run going on


def test_a_reload_mid_run_keeps_the_run_and_its_answer_comes_to_the_new_page(
    model_server, app, browser
) -> None:
    model_server.queue("fc-m", long_run(20), Text("The tools ran."),
                       Text("The classes are separable (after the reload)."))  # fmt: skip
    page = open_chat(browser, app)
    send(page, "cross-validate my two sessions with permutations")
    reload_mid_run(page)
    page.wait_for_selector("text=The classes are separable (after the reload).", timeout=240_000)
    wait_idle(page)
    titles = step_titles(page)
    assert any(t.startswith("cross_validate") for t in titles), titles
    page.close()


def test_stop_from_the_reloaded_page_stops_the_run(model_server, app, browser) -> None:
    model_server.queue("fc-m", long_run(1000))  # stopped in this round: nothing else is asked
    page = open_chat(browser, app)
    send(page, "cross-validate with a thousand permutations")
    reload_mid_run(page)
    page.click("#stop-button")
    page.wait_for_selector(STOP_NOTICE, timeout=60_000)
    wait_idle(page)
    page.close()


def test_after_a_reload_the_steps_and_the_export_button_are_still_there(
    model_server, app, browser
) -> None:
    """A finished run, the page reloaded: its steps open as before and its Export button works."""
    model_server.queue("fc-m", long_run(0), Text("The tools ran."), Text("Cross-validated."))
    page = open_chat(browser, app)
    send(page, "cross-validate my two sessions")
    page.wait_for_selector("text=Cross-validated.", timeout=240_000)
    wait_idle(page)
    page.reload()
    page.wait_for_selector("text=Cross-validated.")
    assert any(t.startswith("cross_validate") for t in step_titles(page))
    click_until(page, page.get_by_role("button", name="Export analysis"), "text=Exporting the")
    page.wait_for_selector("text=Analysis exported", timeout=120_000)
    page.close()
