"""Progress from the first second, and Regenerate, in a real browser (#40): a long EEG step's
title names its phase as it goes (the kernel starting, the data prepared, training under way,
epoch n/N, evaluating), and the running agent run's title counts its elapsed time, then keeps
the total. Regenerate under the last answer asks the model again over the same conversation.

Before: train_model sat on "running…" until its first epoch line (~30 s on the demo under load),
the "Agent run" step showed no time until it ended, and there was no Regenerate.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import open_chat, pick_mode, screenshot, send, spec, step_titles, wait_idle

pytestmark = pytest.mark.browser
FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
# every step title the page showed, in order (a title replaced a moment later included)
TITLES_SEEN = """(() => {
  window.__bcTitles = [];
  const look = () => {
    for (const b of document.querySelectorAll("button[id^='step-']")) {
      const t = b.id.slice(5);
      if (window.__bcTitles[window.__bcTitles.length - 1] !== t && !window.__bcTitles.includes(t))
        window.__bcTitles.push(t);
    }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ["id"]});
})()"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("eeg") / "data"
    write_demo_set(folder, subjects=1, sessions=2, trials=24, seed=3)
    return folder


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "CHAT_MODEL": spec(model_server, "chat-m"),
                        "BRAINCHAT_DATA_DIR": str(data_dir),
                        "AGENT_MAX_EXECUTION_TIME": "300"})  # training on a busy CPU  # fmt: skip


def test_a_long_step_names_its_phases_and_the_agent_run_counts_its_time(model_server, app, browser):
    model_server.queue(
        "fc-m",
        ToolCalls(
            [
                Call("load_data", {"files": FILES}),
                Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
                Call("split_dataset", {}),
            ]
        ),  # fmt: skip
        ToolCalls([Call("train_model", {"model": "eegnet", "epochs": 3})]),
        ToolCalls([Call("evaluate_model", {})]),
        Text("Trained and evaluated."),
        Text("EEGNet is trained and evaluated.", ttft=2.5),  # the answer, after a pause
    )
    page = open_chat(browser, app)
    page.add_init_script(TITLES_SEEN)
    page.reload()
    page.wait_for_selector("#chat-input")
    pick_mode(page, "Agent")
    send(page, "Train EEGNet and evaluate it")
    page.wait_for_selector("text=EEGNet is trained and evaluated.", timeout=180_000)
    wait_idle(page, timeout=60_000)
    seen = page.evaluate("() => window.__bcTitles")
    for phase in (
        "load_data · starting the study's process",  # the first EEG step starts the kernel
        "train_model · preparing the data",
        "train_model · training, epoch 1/3 under way",
        "evaluate_model · evaluating on the test set",
    ):
        assert phase in seen, seen
    assert any(t.startswith("train_model · epoch 1/3 · loss") for t in seen), seen
    order = [next(i for i, t in enumerate(seen) if t.startswith(p)) for p in (
        "train_model · preparing", "train_model · training, epoch 1/3", "train_model · epoch 3/3",
        "train_model · done")]  # fmt: skip
    assert order == sorted(order), seen
    # the run's title counted while it ran, and keeps the total when it ends
    counting = [t for t in seen if re.fullmatch(r"Agent run · .* · running · \d+ s", t)]
    assert counting, seen
    run = page.locator("button[id^='step-Agent run']").first.get_attribute("id") or ""
    assert re.fullmatch(r"step-Agent run · 4 rounds · 5 tool calls · [\d.]+ m?s", run), run
    page.close()


def said(request) -> list[tuple[str, str]]:
    return [(m["role"], str(m.get("content") or "")) for m in request.messages]


def test_regenerate_asks_again_over_the_same_conversation_in_chat(model_server, app, browser):
    model_server.queue("chat-m", Text("Hello."), Text("First answer."), Text("Second answer."),
                       Text("Beta is 13-30 Hz."))  # fmt: skip
    page = open_chat(browser, app)
    send(page, "Hi")
    page.wait_for_selector("text=Hello.")
    wait_idle(page)
    regenerate = page.get_by_role("button", name="Regenerate")
    assert regenerate.count() == 1  # under the last answer
    send(page, "What is the alpha band?")
    page.wait_for_selector("text=First answer.")
    wait_idle(page)
    assert regenerate.count() == 1  # it moved to the new last answer
    regenerate.click()
    page.wait_for_selector("text=Second answer.")
    wait_idle(page)
    first, second = model_server.requests_for("chat-m")[1:3]
    assert said(second) == said(first)  # the same conversation, the same question
    assert said(first)[-1] == ("user", "What is the alpha band?")
    body = page.inner_text("body")
    assert "First answer." in body and "Second answer." in body  # the first stays on the page
    assert regenerate.count() == 1
    screenshot(page, "regenerate.png")
    send(page, "And the beta band?")  # the conversation goes on from the newest answer
    page.wait_for_selector("text=Beta is 13-30 Hz.")
    wait_idle(page)
    history = said(model_server.requests_for("chat-m")[3])
    assert ("assistant", "Second answer.") in history and (
        "assistant",
        "First answer.",
    ) not in history
    page.close()


def test_regenerate_in_agent_mode_asks_again_before_a_destructive_step(model_server, app, browser):
    def clear_run() -> None:
        model_server.queue("fc-m", ToolCalls([Call("clear_study", {})]), Text("Done with tools."),
                           Text("Finished."))  # fmt: skip

    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    clear_run()
    send(page, "clear the study")
    page.wait_for_selector("text=wants to run clear_study")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_selector("text=Finished.", timeout=180_000)
    wait_idle(page)
    asked = len(model_server.requests_for("fc-m"))
    clear_run()
    page.get_by_role("button", name="Regenerate").click()
    page.wait_for_selector("text=wants to run clear_study")  # not re-run without asking
    page.get_by_role("button", name="Reject").click()
    page.wait_for_selector("text=Rejected: clear_study")
    wait_idle(page)
    assert any(t.startswith("clear_study · refused") for t in step_titles(page))
    first, again = model_server.requests_for("fc-m")[0], model_server.requests_for("fc-m")[asked]
    # the same conversation, asked again (the system prompt tells the study as it is now: not
    # rolled back, so it may differ)
    assert said(again)[1:] == said(first)[1:] and said(first)[-1] == ("user", "clear the study")
    page.close()
