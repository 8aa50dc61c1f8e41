"""`brainchat --demo` in a real browser, follow-ups (#40): a question about a result is answered from
the result with no training step, a comparison compares what the conversation trained, "plot the
PSD" plots, and a Chinese request does the same work; what the demo cannot do it says, in Chinese
when asked in Chinese."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brainchat import i18n
from brainchat.eeg.io.synthetic import write_demo_set
from conftest import open_chat, pick_mode, screenshot, send, step_titles, wait_idle


@pytest.fixture(scope="module")
def demo_app(app_factory: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    root: Path = tmp_path_factory.mktemp("demo-followups")
    write_demo_set(root / "data" / "demo", subjects=2, sessions=2, trials=24, seed=0)
    env = {
        "BRAINCHAT_DATA_DIR": str(root / "data"),
        "BRAINCHAT_STATE_DIR": str(root / "state"),
        "BRAINCHAT_DEMO_PACE": "0",
    }
    return str(app_factory(env, demo=True))


def ask(page: Any, question: str, answered: str, timeout: float = 120_000) -> str:
    """Send a question, wait for its answer's text and the run's end; the page's text."""
    before = page.locator(f"text={answered}").count()
    send(page, question)
    page.locator(f"text={answered}").nth(before).wait_for(timeout=timeout)
    wait_idle(page, timeout=timeout)
    body = str(page.inner_text("body"))
    assert "appears in no tool result" not in body  # nothing the run cannot show
    return body


def trained(page: Any) -> int:
    return len([t for t in step_titles(page) if t.startswith("train_model")])


def test_follow_ups_answer_from_the_results_compare_and_plot(demo_app: str, browser: Any) -> None:
    page = open_chat(browser, demo_app)
    assert "Demo mode" in page.inner_text("body")
    pick_mode(page, "Agent")
    ask(page, "Train CSP+LDA on the demo files", "reached an accuracy of", timeout=300_000)
    assert trained(page) == 1

    body = ask(page, "Why is the accuracy so high?", "nothing was retrained")
    assert trained(page) == 1  # read from the result: no training step
    said = body.rsplit("Why is the accuracy so high?", 1)[1]
    assert "CSP+LDA: test accuracy" in said
    assert "the test trials come from the same 4 session(s) as the training trials" in said
    screenshot(page, "demo-followup-result.png", full_page=True)

    body = ask(page, "为什么准确率这么高？", "nothing was retrained")
    assert trained(page) == 1

    ask(page, "now do the same with EEGNet", "EEGNet reached an accuracy of", timeout=300_000)
    assert trained(page) == 2
    body = ask(page, "Compare them", "2 decoders trained and evaluated")
    assert trained(page) == 2  # compared what the thread trained
    said = body.rsplit("Compare them", 1)[1]
    assert "CSP+LDA" in said and "EEGNet" in said and "scores highest" in said

    ask(page, "plot the PSD", "PSD per channel group 1-45 Hz")
    assert page.locator("img").count() >= 1

    ask(page, "讲个笑话", i18n.t("demo.capabilities", "zh-CN")[:20])
    screenshot(page, "demo-followup-zh.png", full_page=True)
    page.close()
