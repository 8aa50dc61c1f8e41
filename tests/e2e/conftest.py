"""Browser fixtures: the app as a subprocess pointed at a scripted model server, Debian chromium.

`app_factory(env)` starts `chainlit run src/brainchat/app.py --headless` on a free port with the
given environment (models pointed at the module's scripted server) and returns its URL; `browser`
is one chromium per module; `page` opens a fresh conversation. Helpers at the end drive the UI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from brainchat.testing.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip
SEARCH_RESULTS = [
    {"title": "EEGNet: a compact CNN for EEG-based BCIs", "url": "https://example.org/eegnet",
     "snippet": "EEGNet uses depthwise and separable convolutions for EEG decoding."},
    {"title": "Motor imagery and mu rhythm desynchronisation", "url": "https://example.org/mu-erd",
     "snippet": "Imagined hand movement suppresses 8-13 Hz mu power over C3/C4."},
    {"title": "CSP filters for motor imagery", "url": "https://example.org/csp",
     "snippet": "Common spatial patterns maximise variance differences between classes."},
    {"title": "MNE-Python documentation", "url": "https://example.org/mne",
     "snippet": "Open-source Python package for MEG and EEG analysis."},
]  # fmt: skip
MODEL_VARS = ("CHAT_MODEL", "AGENT_FUNCTION_CALL_MODEL", "AGENT_ANSWER_MODEL", "OPENAI_API_KEY",
              "OPENAI_BASE_URL", "OPENAI_MODEL", "DEEPSEEK_API_KEY", "DEFAULT_MODE", "MCP_CONFIG")  # fmt: skip


# How long a page waits for a condition (a selector, a function) unless a test says otherwise: far
# above what any step takes, so only a broken app waits it out. At 20 s, waits ran out at load 6-8
# (the suite's own workers beside other work): "Second answer." and a download in CI.
WAIT_MS = 60_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spec(server: ScriptedServer, model: str, **extra: Any) -> str:
    """A JSON model spec pointed at the scripted server."""
    return json.dumps({"provider": "openai-compatible", "model": model,
                       "base_url": server.base_url, "api_key": "test", "max_retries": 0, **extra})  # fmt: skip


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedServer]:
    """One scripted server per test module (tests reset it); the app reaches it over HTTP."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_server(request: pytest.FixtureRequest) -> None:
    if "model_server" in request.fixturenames:
        request.getfixturevalue("model_server").reset()


@pytest.fixture(scope="module")
def app_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Start the app with an environment; every app started is stopped at module end.

    `start(env, home=None, demo=False)` returns the app's URL (`demo`: `brainchat --demo`); pass
    the `home` of an earlier app (`start.home[url]`) to start again on the same data and state
    folders (a restart).
    `start.stop(url, kill=False)` ends one app (SIGTERM, or SIGKILL as a crash would);
    `start.pid(url)` is its process id (tests that measure its memory in /proc).
    """
    procs: list[tuple[subprocess.Popen[bytes], Any]] = []
    by_url: dict[str, subprocess.Popen[bytes]] = {}
    homes: dict[str, Path] = {}

    def start(env: dict[str, str], home: Path | None = None, demo: bool = False) -> str:
        tmp = home or tmp_path_factory.mktemp("app")
        fixture = tmp / "search.json"
        fixture.write_text(json.dumps(SEARCH_RESULTS))
        port = _free_port()
        # CI=true makes `chainlit run` set a fake OPENAI_API_KEY ("CI mode"), which would
        # configure a default model behind the test's back.
        full = {k: v for k, v in os.environ.items() if k not in MODEL_VARS and k != "CI"}
        full.update({"BRAINCHAT_DATA_DIR": str(tmp / "data"), "BRAINCHAT_SEARCH_FIXTURE": str(fixture),
                     "PYTHONUNBUFFERED": "1", "CHAINLIT_AUTH_SECRET": "", **env})  # fmt: skip
        log = open(tmp / "app.log", "ab")  # noqa: SIM115 - closed at teardown
        app = [str(Path(sys.executable).with_name("chainlit")), "run", "src/brainchat/app.py"]
        if demo:  # `brainchat --demo`: its own scripted models, search fixture and state folder
            app = [str(Path(sys.executable).with_name("brainchat")), "--demo"]
        proc = subprocess.Popen(
            [*app, "--headless", "--port", str(port), "--host", "127.0.0.1"],
            cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        procs.append((proc, log))
        url = f"http://127.0.0.1:{port}"
        by_url[url], homes[url] = proc, tmp
        deadline = time.time() + 180  # far above a start-up (seconds) even beside busy workers
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"app exited: {(tmp / 'app.log').read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return url
            except OSError:
                time.sleep(0.05)  # a start is ~3 s: 0.3 s steps lost 0.15 s a start
        raise RuntimeError(f"app did not start: {(tmp / 'app.log').read_text()[-3000:]}")

    def stop(url: str, kill: bool = False) -> None:
        proc = by_url[url]
        proc.kill() if kill else proc.terminate()
        proc.wait(15)

    start.stop = stop  # type: ignore[attr-defined]
    start.home = homes  # type: ignore[attr-defined]
    start.pid = lambda url: by_url[url].pid  # type: ignore[attr-defined]
    yield start
    for proc, _ in procs:  # all at once: the apps shut down side by side, not one after another
        proc.terminate()
    # an app exits within a second of SIGTERM, but uvicorn waits for requests in flight, and a
    # socket.io long poll a test client aborted stays in flight on the server past 10 s
    # (test_origin's polling chat): after 3 s it is killed, since nothing here tests the exit
    deadline = time.monotonic() + 3
    for proc, log in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        watch_runs(b)
        yield b
        b.close()


# Counts the runs (tasks) that ended on a page: Chainlit's server sends `task_start` and
# `task_end` over socket.io (websocket frames, or polling responses before the upgrade); a run
# that starts and ends between two renders never shows the stop button, so the page's messages
# are counted, not the button. `wait_idle` waits for a run it has not yet seen end.
RUN_WATCH = """(() => {
  if (window.__bcRunsEnded !== undefined) return;
  window.__bcRunsEnded = 0; window.__bcWaited = 0; window.__bcMoveTo = null;
  setInterval(() => {  // the first move made (or the user went elsewhere): nothing to wait for
    if (window.__bcMoveTo && !/^\\/?$/.test(location.pathname)) window.__bcMoveTo = null;
  }, 50);
  let running = false;
  const see = packet => {
    const m = /^42(?:\\/[^,]*,)?\\d*\\["(task_start|task_end|first_interaction)"/.exec(packet);
    if (!m) return;
    if (m[1] === 'first_interaction') {
      // Chainlit moves only on a first interaction with text (a message with files only: none)
      try {
        const first = JSON.parse(packet.slice(packet.indexOf('['))).at(-1);
        if (first.interaction) window.__bcMoveTo = first.thread_id;
      } catch (e) {}
    } else if (m[1] === 'task_start') running = true;
    else if (running) { running = false; window.__bcRunsEnded += 1; }
  };
  const Socket = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Socket(...args);
    ws.addEventListener('message', e => { if (typeof e.data === 'string') see(e.data); });
    return ws;
  };
  window.WebSocket.prototype = Socket.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    if (String(url).includes('/socket.io/')) {
      this.addEventListener('load', () => String(this.responseText || '').split('\\x1e').forEach(see));
    }
    return open.call(this, method, url, ...rest);
  };
})()"""


def watch_runs(browser: Any) -> None:
    """Give every page and context this browser makes the run counter `wait_idle` reads."""
    new_page, new_context = browser.new_page, browser.new_context

    def page(*args: Any, **kw: Any) -> Any:
        made = new_page(*args, **kw)
        made.set_default_timeout(WAIT_MS)
        made.add_init_script(RUN_WATCH)
        made.context.add_init_script(RUN_WATCH)  # its own context: later pages in it count too
        return made

    def context(*args: Any, **kw: Any) -> Any:
        made = new_context(*args, **kw)
        made.set_default_timeout(WAIT_MS)
        made.add_init_script(RUN_WATCH)
        return made

    browser.new_page, browser.new_context = page, context


def open_chat(browser: Any, url: str) -> Any:
    """A new page on a fresh conversation, once the input is ready."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("text=/brainchat is (ready|not ready)/")  # the session has started
    return page


def settle(page: Any, timeout: float = WAIT_MS) -> None:
    """Wait for the first move: after a conversation's first interaction Chainlit moves the page
    from / to /thread/<id> and builds it anew (public/brainchat.js keeps a draft, an open dialog
    and the focus, but a step opened just before closes again). What a test does next is not
    undone by it."""
    page.wait_for_function("() => !window.__bcMoveTo", timeout=timeout)


SENT = "() => { const box = document.getElementById('chat-input'); return !box || !box.value }"


def send(page: Any, text: str) -> None:
    """Type `text` and send it. Chainlit empties the message box when it takes a message; a
    click that lands while the page is rebuilt (Chainlit's late move to /thread/<id>) is lost
    and the draft kept (public/brainchat.js), so after 15 s with the text still there it is
    sent once more, as a user would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    settle(page)
    page.fill("#chat-input", text)
    page.click("#chat-submit")
    try:
        page.wait_for_function(SENT, timeout=15_000)
    except PlaywrightTimeout:
        settle(page)
        page.click("#chat-submit")
        page.wait_for_function(SENT, timeout=15_000)


def click_until(page: Any, target: Any, shown: str, wait_ms: float = 20_000) -> None:
    """Click `target` until `shown` appears (what the click starts says so at once); a click
    that lands while the page re-renders (after a reload, the resumed thread's messages and
    buttons are sent anew) is lost, so it is clicked once more, as a user would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    target.click()
    try:
        page.wait_for_selector(shown, timeout=wait_ms)
    except PlaywrightTimeout:
        target.click()
        page.wait_for_selector(shown, timeout=wait_ms)


def answer_last(page: Any, target: Any, wait_ms: float = 15_000) -> None:
    """Click the button that ends a question the app asks (Chainlit's AskActionMessage), and
    wait until its buttons are gone. Chainlit sends the buttons, then the question: a click that
    lands between the two is taken as a plain action, which nothing handles, and the question
    waits on; so a button still there after `wait_ms` is clicked once more, as a user would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    target.click()
    try:
        target.wait_for(state="detached", timeout=wait_ms)
    except PlaywrightTimeout:
        target.click()
        target.wait_for(state="detached", timeout=wait_ms)


# brainchat's own stop notice (ui/render.py STOPPED), not Chainlit's "Task manually stopped."
# that precedes it: "text=Stopped." matches both, and the page read before the notice replaced
# Chainlit's message shows two
STOP_NOTICE = "text=What was done so far stays above"


def wait_idle(page: Any, timeout: float = WAIT_MS) -> None:
    """Wait until the run the test started has ended: a run this page saw end (Chainlit's
    `task_end`) since the last `wait_idle`, then the stop button gone and the submit button back."""
    if page.evaluate("() => window.__bcRunsEnded") is None:
        raise AssertionError("wait_idle: this page was not made by the `browser` fixture")
    page.wait_for_function("() => window.__bcRunsEnded > window.__bcWaited", timeout=timeout)
    page.wait_for_selector("#stop-button", state="detached", timeout=timeout)
    page.wait_for_selector("#chat-submit", timeout=timeout)
    settle(page, timeout)
    page.evaluate("() => { window.__bcWaited = window.__bcRunsEnded }")


def download(page: Any, link: Any) -> str:
    """Click a file link and return the downloaded file's text. A click that starts no download
    within 20 s is tried once more, as a user would (under load a click can land while the
    message re-renders); the second miss fails with what the link's address answers."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(2):
        try:
            with page.expect_download(timeout=20_000) as info:
                link.click()
            return Path(info.value.path()).read_text(encoding="utf-8")
        except PlaywrightTimeout:
            pass
    href = urljoin(page.url, link.get_attribute("href") or "")
    raise AssertionError(f"clicking {href!r} twice started no download: GET {href} answers "
                         f"{page.request.get(href).status}")  # fmt: skip


def poll(predicate: Any, what: str, timeout: float = 30.0) -> None:
    """Wait until `predicate()` is true (checked every 0.1 s); fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout:g} s"
        time.sleep(0.1)


def messages_text(page: Any) -> str:
    return str(page.inner_text("body"))


def pick_mode(page: Any, name: str, answer: str | None = "Switch to Agent", *,
              moved: bool = True) -> None:  # fmt: skip
    """Pick a mode in the picker; Agent asks at once, and `answer` (a button label) replies.
    A confirmed switch waits for the first move too, unless `moved` is False."""
    said = f"text={name} mode is on"
    before = page.locator(said).count()
    page.click("#mode-picker-trigger-mode")
    page.get_by_role("option", name=re.compile(name)).click()
    if name == "Agent":
        page.wait_for_selector("text=Switch to Agent mode?")
        if answer is None:
            return
        page.get_by_role("button", name=answer).click()
        if answer != "Switch to Agent":
            return
    deadline = time.time() + WAIT_MS / 1000
    while page.locator(said).count() <= before and time.time() < deadline:
        page.wait_for_timeout(100)
    assert page.locator(said).count() > before, f"no '{name} mode is on' after picking {name}"
    page.wait_for_function(  # the picker follows the confirmed switch
        "name => document.getElementById('mode-picker-trigger-mode')?.textContent.trim() === name",
        arg=name,
    )
    if moved:
        settle(page)


def step_titles(page: Any) -> list[str]:
    """Every step's title as shown (whitespace collapsed)."""
    return [
        " ".join(t.split())
        for t in page.locator("button[id^='step-'], p[id^='step-']").all_inner_texts()
    ]


def expand_all_steps(page: Any) -> None:
    """Open every collapsed step (repeatedly, for nested ones)."""
    for _ in range(4):
        closed = page.locator("button[id^='step-'][data-state='closed']")
        n = closed.count()
        if n == 0:
            return
        for i in range(n - 1, -1, -1):
            try:
                closed.nth(i).click()
            except Exception:  # noqa: BLE001 - a step re-rendered meanwhile
                pass
        page.wait_for_timeout(200)


def open_settings(page: Any) -> None:
    page.click("#chat-settings-open-modal")
    page.wait_for_selector("#chat-settings [role=tabpanel][data-state=active] label")


def show_setting(page: Any, widget_id: str) -> None:
    """Bring forward the panel's section (tab) that holds the input `widget_id`."""
    from playwright.sync_api import expect

    box = page.locator(f"#chat-settings #{widget_id}")
    if box.count():
        return
    tabs = page.locator("#chat-settings [role=tab]")
    for i in range(tabs.count()):
        tabs.nth(i).click()
        expect(tabs.nth(i)).to_have_attribute("data-state", "active", timeout=WAIT_MS)
        if box.count():
            return
    raise AssertionError(f"no section of the settings panel shows #{widget_id}")


def fill_setting(page: Any, widget_id: str, value: str) -> None:
    show_setting(page, widget_id)
    page.fill(f"#{widget_id}", value)


def save_settings(page: Any) -> None:
    page.get_by_role("button", name="Confirm").click()
    page.wait_for_selector("#chat-settings", state="detached")


def screenshot(page: Any, name: str, **kw: Any) -> None:
    """Save a screenshot: into docs/ when BRAINCHAT_SCREENSHOTS=1 (refreshing README's), else a temp folder."""
    folder = (
        Path("docs")
        if os.environ.get("BRAINCHAT_SCREENSHOTS") == "1"
        else Path(os.environ.get("TMPDIR", "/tmp")) / "brainchat-screens"
    )
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), **kw)
