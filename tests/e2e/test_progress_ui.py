"""Progress from the first second, in a real browser (#40): a long EEG step's title names its
phase as it goes (the kernel starting, the data prepared, training under way, epoch n/N,
evaluating), and the running agent run's title counts its elapsed time, then keeps the total.

Before: train_model sat on "running…" until its first epoch line (~30 s on the demo under load)
and the "Agent run" step showed no time until it ended.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import open_chat, pick_mode, send, spec, wait_idle

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
