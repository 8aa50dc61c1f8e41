"""EEG in a real browser: the demo set in one place, live training progress, figures under the answer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
FILES = [f"demo/sub-0{s}_ses-0{k}_task-mi_eeg.edf" for s in (1, 2) for k in (1, 2)]
RUN_BLOCK = "xpath=ancestor::div[@data-state][1]"  # the open "Agent run" step's whole block
JS_FIGURES = """() => [...document.querySelectorAll("img.inline-image")].map(img => {
  const run = img.closest("[data-state]");  // images inside a step sit in its collapsible body
  let msg = img; while (msg && !(msg.innerText || "").includes("Here are the results")) msg = msg.parentElement;
  return {alt: img.alt, inStep: !!run, inAnswer: !!msg};
})"""

JS_RUNNING_PAINT = """() => {  // a running training title's paint, a finished title's colour
  const running = document.querySelector("button.loading-shimmer[id^='step-train_model · epoch ']");
  const done = [...document.querySelectorAll("button[id^='step-load_data']")]
    .find(b => !b.classList.contains("loading-shimmer"));
  if (!running || !done) return null;
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => rgb(c).map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let bg = "rgba(0, 0, 0, 0)";
  for (let el = running.parentElement; el && bg.startsWith("rgba(0, 0, 0, 0)"); el = el.parentElement)
    bg = getComputedStyle(el).backgroundColor;  // the first painted background under the title
  if (bg.startsWith("rgba(0, 0, 0, 0)")) bg = "rgb(255, 255, 255)";
  const paint = getComputedStyle(running).backgroundColor;  // text is clipped from it
  const [a, b] = [lum(paint), lum(bg)].sort((x, y) => y - x);
  return {running: paint, finished: getComputedStyle(done).color, background: bg,
          contrast: (a + 0.05) / (b + 0.05)};
}"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("eeg") / "data"


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "BRAINCHAT_DATA_DIR": str(data_dir),
                        "AGENT_MAX_EXECUTION_TIME": "300"})  # training on a busy CPU  # fmt: skip


def pipeline(server) -> None:
    """Load, filter, epoch, split; train EEGNet; evaluate and plot; then answer."""
    server.queue(
        "fc-m",
        ToolCalls(
            [
                Call("load_data", {"files": FILES}),
                Call("bandpass_filter", {"l_freq": 8, "h_freq": 30}),
                Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
                Call("split_dataset", {"by": "trial"}),
            ]
        ),
        ToolCalls([Call("train_model", {"model": "eegnet", "epochs": 6})]),
        ToolCalls([Call("evaluate_model", {}), Call("plot_psd", {"fmin": 2, "fmax": 40})]),
        Text("Trained and evaluated."),
        Text("Here are the results of EEGNet on the demo set."),  # the answer (one model)
    )


def test_demo_set_in_one_place_live_training_progress_and_figures_under_the_answer(
    model_server, app, browser, data_dir
):
    page = open_chat(browser, app)
    page.wait_for_selector("text=is empty")
    page.get_by_role("button", name="Write the demo EEG set").click()
    page.wait_for_selector("text=/Wrote 4 recordings/", timeout=120_000)
    cli = Path(sys.executable).with_name("brainchat")
    done = subprocess.run([str(cli), "demo-data"], env={"BRAINCHAT_DATA_DIR": str(data_dir),
                          "PATH": "/usr/bin:/bin", **_pythonpath()}, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(data_dir).as_posix() for p in data_dir.rglob("*.edf"))
    assert written == sorted(FILES)  # both wrote the same four files: no subject twice

    pipeline(model_server)
    pick_mode(page, "Agent")
    send(page, "Train EEGNet on the demo set and show me how it does")
    progress = page.locator("button[id^='step-train_model · epoch ']")
    progress.first.wait_for(timeout=120_000)  # in the title, visible without opening the step
    assert progress.first.is_visible()
    paint = page.wait_for_function(JS_RUNNING_PAINT, timeout=120_000).json_value()
    # readable while it runs: painted like a finished title (was --muted, about 1.3:1 on white)
    assert paint["running"] == paint["finished"] and paint["contrast"] >= 4.5, paint
    assert re.search(r"train_model · epoch \d/6 · loss [\d.]+ · val acc [\d.]+ · ETA \d+ s",
                     progress.first.inner_text()), progress.first.inner_text()  # fmt: skip
    page.wait_for_selector("text=Here are the results", timeout=120_000)
    wait_idle(page, timeout=60_000)
    titles = [re.sub(r"\s+", " ", t) for t in page.locator("button[id^='step-']").all_inner_texts()]
    assert any(re.match(r"train_model · done · [\d.]+ s", t) for t in titles), titles
    # the steps a person wants to open: one per tool call, one per round of thinking and the
    # hand-over to the answer; no "Study ·" or "Evaluation" step after each change (was 34)
    inner = [t for t in titles if not t.startswith("Agent run")]
    assert len([t for t in inner if not t.startswith(("Thinking", "Decision"))]) == 7, inner
    assert not [t for t in inner if t.startswith(("Study", "Evaluation", "Tool result"))], inner
    assert len(inner) <= 12, inner
    figures = page.evaluate(JS_FIGURES)
    alts = sorted(f["alt"] for f in figures)
    assert alts == ["PSD per channel group (2-40 Hz)", "eegnet confusion matrix",
                    "eegnet training curves"] or len(alts) == 3, alts  # fmt: skip
    assert all(f["inAnswer"] and not f["inStep"] for f in figures), figures  # under the answer
    expand_all_steps(page)
    body = page.inner_text("body")
    assert "shown to the user" not in body  # the model-facing note stays with the model
    assert (
        "Figures (shown under the answer): eegnet confusion matrix, eegnet training curves" in body
    )
    assert "Study: + band-pass 8-30 Hz" in body  # what changed, not the whole file list again
    page.close()


def _pythonpath() -> dict[str, str]:
    import os

    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
