"""Stored conversations in a real browser, on SQLite and on an embedded Postgres: a thread
survives a restart (sidebar, messages, steps, model history), a killed process loses only the
turn it was in, the EEG study comes back with its trained models, and password login works."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, WAIT_MS, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
THREAD = re.compile(r"/thread/([0-9a-f-]{36})")
ACC = re.compile(r"(\w+) on \d+ test epochs: accuracy (\d\.\d{3}), balanced (\d\.\d{3})")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment of a store: the SQLite default, or a fresh embedded-Postgres database."""
    if request.param == "sqlite":
        return {}
    pg = request.getfixturevalue("embedded_pg")
    return {"DATABASE_URL": pg.new_database("ui_" + uuid.uuid4().hex[:10])}


def models(server: Any, **extra: str) -> dict[str, str]:
    return {"CHAT_MODEL": spec(server, "chat-m"), "AGENT_FUNCTION_CALL_MODEL": spec(server, "fc-m"),
            **extra}  # fmt: skip


def thread_id(page: Any) -> str:
    page.wait_for_url(THREAD, timeout=20_000)
    match = THREAD.search(page.url)
    assert match, page.url
    return match.group(1)


def reopen(browser: Any, url: str, tid: str) -> Any:
    """A new browser page on the app; the thread is picked in the sidebar, as a user would."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(WAIT_MS)
    page.goto(url)
    page.wait_for_selector("#chat-input")
    page.click(f"#thread-{tid} a")
    page.wait_for_selector("text=Conversation resumed")
    return page


def restart(app_factory: Any, url: str, env: dict[str, str], kill: bool = False) -> str:
    app_factory.stop(url, kill=kill)
    return str(app_factory(env, home=app_factory.home[url]))


def said(request: Any) -> list[tuple[str, str]]:
    return [(m["role"], str(m.get("content") or "")) for m in request.messages]


def test_a_thread_survives_a_restart(model_server, app_factory, browser, backend):
    env = models(model_server, **backend)
    url = app_factory(env)
    page = open_chat(browser, url)
    model_server.queue("chat-m", Text("Mu is 8-13 Hz over the motor cortex."))
    send(page, "What is the mu rhythm?")
    page.wait_for_selector("text=Mu is 8-13 Hz over the motor cortex.")
    wait_idle(page)
    tid = thread_id(page)
    pick_mode(page, "Agent")
    # one round: the tool's results are enough, so the next reply is the answer
    model_server.queue("fc-m", ToolCalls([Call("web_search", {"query": "EEGNet"})]),
                       Text("EEGNet is a compact CNN [1]."))  # fmt: skip
    send(page, "Find what EEGNet is")
    page.wait_for_selector("text=EEGNet is a compact CNN")
    wait_idle(page)
    page.close()

    url = restart(app_factory, url, env)
    page = reopen(browser, url, tid)
    body = page.inner_text("body")
    assert "What is the mu rhythm?" in body and "Mu is 8-13 Hz over the motor cortex." in body
    assert "EEGNet is a compact CNN" in body and "Agent mode" in body  # the mode came back
    expand_all_steps(page)
    # one step per tool call (its result inside), stored under its final title
    assert page.locator("button[id^='step-web_search · 4 results']").count() == 1
    model_server.queue("fc-m", Text("No tool needed."), Text("Beta is faster than mu."))
    send(page, "And how does beta compare?")
    page.wait_for_selector("text=Beta is faster than mu.")
    wait_idle(page)
    decide = said(model_server.requests_for("fc-m")[-2])  # the follow-up's decision call
    assert ("user", "What is the mu rhythm?") in decide
    assert ("assistant", "Mu is 8-13 Hz over the motor cortex.") in decide
    assert ("user", "Find what EEGNet is") in decide
    assert ("assistant", "EEGNet is a compact CNN [1].") in decide
    assert decide[-1] == ("user", "And how does beta compare?")
    page.close()


def test_a_killed_process_loses_only_the_turn_it_was_in(
    model_server, app_factory, browser, backend
):
    env = models(model_server, **backend)
    url = app_factory(env)
    page = open_chat(browser, url)
    for q, a in (("First question?", "First answer."), ("Second question?", "Second answer.")):
        model_server.queue("chat-m", Text(a))
        send(page, q)
        page.wait_for_selector(f"text={a}")
        wait_idle(page)
    tid = thread_id(page)
    slow = " ".join(["streaming"] * 200)
    model_server.queue("chat-m", Text(slow, token_delay=0.2))
    send(page, "Third question?")
    page.wait_for_selector("text=streaming streaming")  # mid-answer
    page.close()
    url = restart(app_factory, url, env, kill=True)  # SIGKILL: no shutdown, no flush

    page = reopen(browser, url, tid)
    body = page.inner_text("body")
    assert "First answer." in body and "Second answer." in body
    model_server.queue("chat-m", Text("Fourth answer."))
    send(page, "Fourth question?")
    page.wait_for_selector("text=Fourth answer.")
    history = said(model_server.requests_for("chat-m")[-1])
    assert [m for m in history if m[0] != "system"] == [
        ("user", "First question?"), ("assistant", "First answer."),
        ("user", "Second question?"), ("assistant", "Second answer."),
        ("user", "Fourth question?"),
    ]  # fmt: skip
    page.close()


def add_user(home: Path, env: dict[str, str], name: str, password: str) -> None:
    import os

    full = {**os.environ, "BRAINCHAT_DATA_DIR": str(home / "data"), **env}
    subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", name],
                   input=password + "\n", text=True, env=full, cwd=ROOT, check=True,
                   capture_output=True, timeout=60)  # fmt: skip


def test_password_login_refuses_a_wrong_password_and_logs_out(model_server, app_factory, browser,
                                                              backend, tmp_path):  # fmt: skip
    env = models(model_server, BRAINCHAT_AUTH="password", **backend)
    add_user(tmp_path, env, "ana", "correct horse battery")
    url = app_factory(env, home=tmp_path)
    page = browser.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(url)
    page.fill("#email", "ana")
    page.fill("#password", "wrong horse battery")
    page.get_by_role("button", name=re.compile("continue|sign in|log in", re.I)).click()
    page.wait_for_selector("text=Unable to sign in")
    assert page.locator("#chat-input").count() == 0
    page.fill("#password", "correct horse battery")
    page.get_by_role("button", name=re.compile("continue|sign in|log in", re.I)).click()
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("text=/brainchat is ready/")
    page.click("#user-nav-button")
    page.get_by_role("menuitem", name=re.compile("log ?out", re.I)).click()
    page.wait_for_selector("#password")
    page.goto(url)
    page.wait_for_selector("#password")  # logged out for good: the login form again
    page.close()


def accuracies(server: Any) -> dict[str, tuple[str, str]]:
    """Test metrics of each model, as the answer model was given them (the last request)."""
    found = {}
    for _, content in said(server.requests_for("fc-m")[-1]):
        for m in ACC.finditer(content):
            found[m.group(1)] = (m.group(2), m.group(3))
    return found


@pytest.mark.slow
def test_the_study_and_its_trained_models_come_back_after_a_restart(model_server, app_factory,
                                                                     browser, tmp_path, backend):  # fmt: skip
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(tmp_path / "data", subjects=1, sessions=2, trials=24, seed=3)
    files = [f"sub-01_ses-0{k}_task-mi_eeg.edf" for k in (1, 2)]
    env = models(model_server, DEFAULT_MODE="agent", AGENT_TOOL_TIMEOUT="600", **backend)
    url = app_factory(env, home=tmp_path)
    page = open_chat(browser, url)
    evaluate = [Call("evaluate_model", {"model": m}) for m in ("eegnet", "csp_lda")]
    model_server.queue("fc-m", ToolCalls([
        Call("load_data", {"files": files}), Call("bandpass_filter", {"l_freq": 8, "h_freq": 30}),
        Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        Call("split_dataset", {"by": "trial", "test_ratio": 0.25, "seed": 1}),
        Call("train_model", {"model": "eegnet", "epochs": 2}), Call("train_model", {"model": "csp_lda"}),
        *evaluate]), Text("The tools ran."), Text("Both models are trained."))  # fmt: skip
    send(page, "Load subject 1, filter 8-30 Hz, epoch, split, train EEGNet and CSP+LDA, evaluate")
    page.wait_for_selector("text=Both models are trained.", timeout=240_000)
    wait_idle(page)
    before = accuracies(model_server)
    assert set(before) == {"eegnet", "csp_lda"}
    tid = thread_id(page)
    page.close()

    url = restart(app_factory, url, env)
    page = reopen(browser, url, tid)
    assert "restored at the first EEG tool call" in page.inner_text("body")
    # EEG results do not end the loop by rule: the model says it is done, then writes the answer
    model_server.queue("fc-m", ToolCalls(evaluate), Text("The tools ran."), Text("Same as before."))
    asked = len(model_server.requests_for("fc-m"))
    send(page, "Evaluate both models again")
    page.wait_for_selector("text=Same as before.", timeout=240_000)
    wait_idle(page)
    # before the replay the model sees the study as it will be: trained, its tools offered
    first = model_server.requests_for("fc-m")[asked]
    assert "evaluate_model" in {t["function"]["name"] for t in first.tools or []}
    assert "stage=trained" in "".join(c for _, c in said(first))
    assert accuracies(model_server) == before
    expand_all_steps(page)
    assert page.locator("button[id^='step-Study restored · trained']").count() == 1
    page.close()
