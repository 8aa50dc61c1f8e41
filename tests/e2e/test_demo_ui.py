"""`brainchat --demo` in a real browser: it answers what is asked, in every conversation and as often
as asked, states the evaluation's figures, counts the search results it lists, keeps its threads apart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Text
from conftest import (
    WAIT_MS,
    expand_all_steps,
    open_chat,
    pick_mode,
    send,
    spec,
    step_titles,
    wait_idle,
)

FILES_QUESTION = "Load all the demo files and tell me what is in them"
TRAIN_QUESTION = "Train a decoder on the demo EEG set and show me how well it does."
THREAD = re.compile(r"/thread/([0-9a-f-]{36})")
EVALUATED = re.compile(r"on (\d+) test epochs: accuracy (\d\.\d{3}), balanced (\d\.\d{3})")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's folders: a small demo set already written (quick to train), one state folder."""
    root = tmp_path_factory.mktemp("demo-home")
    write_demo_set(root / "data" / "demo", subjects=2, sessions=2, trials=24, seed=0)
    return root


def folders(home: Path) -> dict[str, str]:
    return {"BRAINCHAT_DATA_DIR": str(home / "data"), "BRAINCHAT_STATE_DIR": str(home / "state")}


@pytest.fixture(scope="module")
def demo_app(app_factory: Any, home: Path) -> str:
    # the scripted models answer at once (BRAINCHAT_DEMO_PACE=0): what is said is tested here,
    # and the demo's pace cost this module 36 s of waiting; test_fresh_install runs it at 1
    return str(app_factory({**folders(home), "BRAINCHAT_DEMO_PACE": "0"}, demo=True))


def agent_page(browser: Any, url: str) -> Any:
    page = open_chat(browser, url)
    assert "Demo mode" in page.inner_text("body")
    pick_mode(page, "Agent")
    return page


def ask(page: Any, question: str, answered: str, timeout: float = 60_000) -> str:
    """Send a question, wait for text of its answer and for the run's end; the page's text."""
    before = page.locator(f"text={answered}").count()
    send(page, question)
    page.locator(f"text={answered}").nth(before).wait_for(timeout=timeout)
    wait_idle(page, timeout=timeout)
    return str(page.inner_text("body"))


def new_chat(page: Any) -> None:
    page.click("#new-chat-button")
    page.get_by_role("button", name="Confirm").click()
    page.wait_for_selector("text=/brainchat is ready/")


def assert_training_stated(page: Any, body: str) -> None:
    """The answer's text has the accuracy that evaluate_model computed, its classes, the split."""
    said = re.findall(r"reached an accuracy of (\d\.\d{3}) on the (\d+) held-out test epochs", body)
    assert said, body[-2000:]
    expand_all_steps(page)
    computed = EVALUATED.findall(page.inner_text("body"))
    assert computed and (computed[-1][1], computed[-1][0]) == said[-1]  # the step's figure, told
    last = page.inner_text("body").rsplit("reached an accuracy of", 1)[1]
    assert re.search(r"left_hand\s+0\.\d\d\s+\d\.\d\d\s+0\.\d\d\s+\d+", last), last[:800]
    assert re.search(r"Split by trial: \d+ epochs to train, \d+ to validate, \d+ to test", last)
    assert "evaluate_model step" not in body


def test_the_demo_answers_what_is_asked_in_every_conversation_as_often_as_asked(
    demo_app: str, browser: Any
) -> None:
    page = agent_page(browser, demo_app)
    body = ask(page, FILES_QUESTION, "2 subject(s) × 2 session(s)")
    assert not [
        t for t in step_titles(page) if t.startswith("train_model")
    ]  # described, no training
    assert "left_hand 48, right_hand 48" in body and "22 @ 250 Hz" in body
    assert re.search(r"Channels \(22\): Fz, FC3", body), body[-1500:]

    body = ask(page, TRAIN_QUESTION, "reached an accuracy of", timeout=300_000)
    assert_training_stated(page, body)
    body = ask(page, "Hello, what else can you do?", "This is brainchat's offline demo")
    assert "end of the scripted tour" not in body

    new_chat(page)  # a New chat: the same answers, not "the end of the tour"
    # it starts in the mode last chosen, without asking: the page asks the server for it after
    # the chat is ready, and the server sets the picker once it has switched (ui/modes.py); a
    # pick made before that found Agent already on, and no question came
    page.wait_for_function("() => !document.body.innerText.includes('reached an accuracy of')")
    page.wait_for_selector("text=Agent mode is on", timeout=WAIT_MS)
    page.wait_for_function(
        "() => document.getElementById('mode-picker-trigger-mode')?.textContent.trim() === 'Agent'"
    )
    body = ask(page, TRAIN_QUESTION, "reached an accuracy of", timeout=300_000)
    assert_training_stated(page, body)
    body = ask(page, FILES_QUESTION, "2 subject(s) × 2 session(s)")
    assert "end of the scripted tour" not in body
    page.close()


def test_the_search_step_counts_the_results_it_lists(demo_app: str, browser: Any) -> None:
    page = agent_page(browser, demo_app)
    send(page, "What is event-related desynchronisation in motor imagery?")
    page.wait_for_selector("button[id^='step-web_search · ']")
    wait_idle(page)
    titles = step_titles(page)
    assert [t for t in titles if t.startswith("web_search · 4 results")], titles
    expand_all_steps(page)
    body = page.inner_text("body")
    for title in ("EEGNet: a compact CNN", "Motor imagery and mu rhythm", "CSP filters for motor",
                  "MNE-Python documentation"):  # fmt: skip
        assert page.locator(f"a:has-text('{title}')").count() >= 1, title  # listed as links
    assert "web_search found 4 source(s)" in body
    assert "What the 4 sources found say" in body  # the demo's answer cites them all
    page.close()


def test_demo_threads_stay_out_of_the_real_apps_sidebar(
    demo_app: str, app_factory: Any, browser: Any, home: Path, model_server: Any
) -> None:
    page = open_chat(browser, demo_app)  # a Chat-mode thread of the demo
    send(page, "Hello")
    page.wait_for_url(THREAD)
    wait_idle(page)
    demo_thread = THREAD.search(page.url).group(1)  # type: ignore[union-attr]
    page.reload()
    page.wait_for_selector(f"#thread-{demo_thread}")  # the demo's own sidebar keeps it
    page.close()

    models = {"CHAT_MODEL": spec(model_server, "chat-r")}
    real = app_factory({**folders(home), **models})  # the same data and state folders, no --demo
    page = open_chat(browser, real)
    model_server.queue("chat-r", Text("A real model's answer."))
    send(page, "A real question")
    page.wait_for_selector("text=A real model's answer.")
    wait_idle(page)
    page.wait_for_url(THREAD)
    real_thread = THREAD.search(page.url).group(1)  # type: ignore[union-attr]
    page.reload()
    page.wait_for_selector(f"#thread-{real_thread}")  # the real sidebar lists its own threads
    assert page.locator(f"#thread-{demo_thread}").count() == 0
    assert (home / "state" / "demo" / "brainchat.db").is_file()
    page.close()
