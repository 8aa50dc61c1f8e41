"""A page served from another local port cannot drive the app in a real browser; the app's own page can."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brainchat.testing.scripted_server import Text
from conftest import WAIT_MS, open_chat, send, spec, wait_idle

pytestmark = pytest.mark.browser

# The other site's page: read the app's settings, open its socket.io websocket and record it all.
ATTACK = """<!doctype html><html><body><script>
const app = new URLSearchParams(location.search).get("app");
async function read(opts) {
  try { const r = await fetch(app + "/project/settings?language=en-US", opts);
        return "read " + r.status + " " + (await r.text()).slice(0, 60); }
  catch (e) { return "blocked " + e.name; }
}
function socket() {
  return new Promise((done) => {
    const events = [];
    const ws = new WebSocket(app.replace("http", "ws") + "/ws/socket.io/?EIO=4&transport=websocket");
    ws.onopen = () => events.push("open");
    ws.onmessage = (m) => {  // the engine.io handshake: answer with a socket.io connect
      events.push("message " + String(m.data).slice(0, 40));
      if (events.length === 2) ws.send('40{"sessionId":"x","clientType":"webapp","userEnv":"{}"}');
    };
    ws.onerror = () => events.push("error");
    ws.onclose = () => done(events.concat("close"));
    setTimeout(() => { ws.close(); done(events.concat("timeout")); }, 8000);
  });
}
window.results = (async () => ({
  withCookies: await read({credentials: "include"}),
  plain: await read({}),
  polling: await fetch(app + "/ws/socket.io/?EIO=4&transport=polling").then(
      (r) => "read " + r.status, (e) => "blocked " + e.name),
  socket: await socket(),
}))();
</script></body></html>"""


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({"CHAT_MODEL": spec(model_server, "chat-m")})


@pytest.fixture(scope="module")
def other_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A plain http.server on another port of 127.0.0.1, serving the attacking page."""
    root: Path = tmp_path_factory.mktemp("other-site")
    (root / "attack.html").write_text(ATTACK)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_page_on_another_port_cannot_read_or_open_the_socket(
    model_server, app, other_site, browser
):
    context = browser.new_context()  # the user has the app open in the same browser
    own = context.new_page()
    own.set_default_timeout(WAIT_MS)
    own.goto(app)
    own.wait_for_selector("text=/brainchat is (ready|not ready)/")
    page = context.new_page()
    page.goto(f"{other_site}/attack.html?app={app}")
    results: dict[str, Any] = page.evaluate("window.results")
    assert results["withCookies"].startswith("blocked"), results
    assert results["plain"].startswith("blocked"), results
    assert results["polling"].startswith("blocked"), results
    assert "open" not in results["socket"] and not any(
        e.startswith("message") for e in results["socket"]
    ), results
    # the app's own page is unaffected and still answers
    model_server.queue("chat-m", Text("Theta is 4 to 8 Hz."))
    send(own, "What is the theta band?")
    own.wait_for_selector("text=Theta is 4 to 8 Hz.")
    wait_idle(own)
    context.close()


def test_the_apps_own_page_chats(model_server, app, browser):
    model_server.queue("chat-m", Text("Beta is 13 to 30 Hz."))
    page = open_chat(browser, app)
    send(page, "What is the beta band?")
    page.wait_for_selector("text=Beta is 13 to 30 Hz.")
    wait_idle(page)
    assert "Beta is 13 to 30 Hz." in page.inner_text("body")
    page.close()
