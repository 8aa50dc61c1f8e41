""" "Use a local model" in a real browser (#42): an app with no model at all, a catalog entry served
by a local hub (slowly, so the progress shows), and a stand-in for llama.cpp's llama-server (the
scripted OpenAI-compatible server on the port and alias the runtime asks for). The first screen
recommends the model; one click downloads it with a progress message and a Cancel, a second click
resumes where the first stopped, the file is checked, the runtime started, and the user's
question is answered by that server in Chat and in Agent mode. With accounts, a user cannot make
the server download anything (the button, and the same click with a URL put in its payload on the
way, as an attacker would); a model the operator pulled is theirs to use."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import open_chat, pick_mode, poll, screenshot, send, wait_idle
from gguf_server import sha256, synthetic_gguf

pytestmark = pytest.mark.browser
SIZE = 3_000_000  # bytes of the served file
RATE = 600_000  # bytes a second the hub sends: the download takes ~5 s, so its progress shows
MODEL_ID = "tiny-lab-q4"
REPO, REVISION, FILENAME = "lab/Tiny-GGUF", "0123456789abcdef0123456789abcdef01234567", "tiny.gguf"
STAND_IN = """#!{python}
# llama-server's flags in, the scripted server out: /v1/models lists the alias, and each chat
# request is answered "(scripted) " + the user's last message
import argparse, json, os, subprocess, sys, time
HOLDER = \"\"\"import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the dead server's connections linger
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("held", flush=True)
time.sleep(600)\"\"\"
from brainchat.testing.scripted_server import ScriptedServer

p = argparse.ArgumentParser()
for flag in ("-m", "--alias", "--host", "--port", "-c", "--parallel", "-t", "-tb", "-ngl"):
    p.add_argument(flag)
args, _ = p.parse_known_args()
with open({record!r}, "a", encoding="utf-8") as f:
    f.write(json.dumps([os.getpid(), *sys.argv[1:]]) + "\\n")
time.sleep({delay})  # a model that takes a while to load
server = ScriptedServer(port=int(args.port), pace=0)
server.models = [args.alias]
server.start()
print("server is listening", flush=True)
hold = {record!r} + ".die." + str(os.getpid())  # when it appears: exit, leaving the port held
while not os.path.exists(hold):
    time.sleep(0.1)
server.stop()
holder = subprocess.Popen([sys.executable, "-c", HOLDER, args.port], stdout=subprocess.PIPE,
                          start_new_session=True)
assert holder.stdout.readline() == b"held\\n"
with open(hold, "w") as f:
    f.write(str(holder.pid))
os._exit(3)
"""


class SlowHub:
    """One file at `{repo}/resolve/{revision}/{file}`, with Range, sent at RATE bytes a second;
    every request's path and Range header is logged."""

    def __init__(self, data: bytes) -> None:
        self.data, self.requests = data, []  # type: list[tuple[str, str]]
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                asked = self.headers.get("Range", "")
                hub.requests.append((self.path, asked))
                if self.path != f"/{REPO}/resolve/{REVISION}/{FILENAME}":
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start = int(m[1]) if (m := re.match(r"bytes=(\d+)-", asked)) else 0
                body = hub.data[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                if start:
                    self.send_header(
                        "Content-Range", f"bytes {start}-{len(hub.data) - 1}/{len(hub.data)}"
                    )
                self.end_headers()
                step = RATE // 10
                try:
                    for at in range(0, len(body), step):
                        self.wfile.write(body[at : at + step])
                        time.sleep(0.1)
                except OSError:  # the client went away (a Cancel)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def hub() -> Any:
    server = SlowHub(synthetic_gguf(SIZE, seed=42))
    yield server
    server.stop()


def local_env(hub: SlowHub, folder: Path, delay: float = 0.0) -> dict[str, str]:
    """The catalog (one entry: the hub's file), the hub, and the stand-in llama-server (which
    waits `delay` seconds before it listens)."""
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"id": MODEL_ID, "name": "Tiny Lab (Q4)", "repo": REPO, "revision": REVISION,
             "filename": FILENAME, "sha256": sha256(hub.data), "size_bytes": len(hub.data),
             "params": "3M", "license": "MIT", "ram_bytes": 64 * 1024 * 1024, "context": 2048,
             "tool_calling": "prompt", "guidance": "guided", "default": True}  # fmt: skip
    catalog = folder / "catalog.json"
    catalog.write_text(json.dumps([entry]))
    server = folder / "llama-server"
    record = folder / "llama-server.argv"
    server.write_text(STAND_IN.format(python=sys.executable, record=str(record), delay=delay))
    server.chmod(0o755)
    return {"BRAINCHAT_MODELS_CATALOG": str(catalog), "BRAINCHAT_MODELS_HUB_URL": hub.url,
            "BRAINCHAT_LLAMA_SERVER": str(server)}  # fmt: skip


def starts(folder: Path) -> list[list[Any]]:
    """Each start of the stand-in: its pid, then its arguments."""
    record = folder / "llama-server.argv"
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def test_use_a_local_model_from_the_first_screen_to_an_answer(app_factory, browser, hub,
                                                              tmp_path) -> None:  # fmt: skip
    env = local_env(hub, tmp_path / "local")
    url = app_factory(env)  # no model configured at all
    models = app_factory.home[url] / "state" / "models"
    page = open_chat(browser, url)
    body = page.inner_text("body")
    assert "brainchat is not ready yet" in body
    # the recommendation: name, parameters, licence, download size, memory, fit
    for part in ("Tiny Lab (Q4)", "3M parameters", "licence MIT", "3.0 MB to download", "fits"):
        assert part in body, part
    page.get_by_role("button", name="Other local models").click()
    page.wait_for_selector("text=/Tiny Lab \\(Q4\\).*recommended/")
    screenshot(page, "local-model-first-screen.png")

    # the download shows its progress and can be cancelled; what arrived is kept
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector("text=/\\d+% · .* of 3.0 MB · .*\\/s · .* left/")
    screenshot(page, "local-model-download.png")
    page.get_by_role("button", name="Cancel the download").click()
    page.wait_for_selector("text=/download of Tiny Lab \\(Q4\\) was cancelled/")
    parts = list(models.glob("*.part"))
    assert len(parts) == 1 and 0 < parts[0].stat().st_size < SIZE
    assert not starts(tmp_path / "local")  # nothing started

    # again: it resumes (a Range request), checks the sha256, starts the runtime, connects it
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector(
        "text=/Tiny Lab \\(Q4\\)\\*?\\*? downloaded .* checked against its sha256/"
    )
    page.wait_for_selector("text=/runs on this machine .* plays every role/")
    assert [r for _, r in hub.requests if r.startswith("bytes=") and r != "bytes=0-"], hub.requests
    assert (models / FILENAME).read_bytes() == hub.data
    ((_pid, *argv),) = starts(tmp_path / "local")
    assert argv[argv.index("-m") + 1] == str((models / FILENAME).resolve())
    assert argv[argv.index("--alias") + 1] == MODEL_ID

    # Chat: the user's question reaches the local server and its answer comes back
    send(page, "What is a local model?")
    page.wait_for_selector("text=(scripted) What is a local model?")
    wait_idle(page)
    # Agent: the same server plays the function-call and answer roles
    pick_mode(page, "Agent")
    send(page, "Say hello from the lab machine")
    page.wait_for_selector(
        "text=/thinks with tiny-lab-q4 @ local, answers with tiny-lab-q4 @ local/"
    )
    wait_idle(page)
    table = page.locator("table").last.inner_text()
    assert re.search(r"function call\s+tiny-lab-q4 @ local\s+1", table), table
    assert re.search(r"answer\s+tiny-lab-q4 @ local\s+1", table), table

    # the server dies and another program takes its port: the runtime cannot restart it there;
    # the next turn starts it again on another port, and the chat's connection follows it
    pick_mode(page, "Chat")
    die = tmp_path / "local" / f"llama-server.argv.die.{starts(tmp_path / 'local')[0][0]}"
    die.write_text("")
    poll(lambda: die.read_text().strip().isdigit(), "the stand-in gone and its port held")
    try:
        send(page, "Still there?")
        page.wait_for_selector("text=(scripted) Still there?")
        wait_idle(page)
    finally:
        os.kill(int(die.read_text()), signal.SIGKILL)
    ports = [run[run.index("--port") + 1] for run in starts(tmp_path / "local")]
    assert len(ports) == 2 and ports[0] != ports[1], ports
    page.close()


def test_a_second_page_uses_the_running_local_model_at_once(app_factory, browser, hub,
                                                            tmp_path) -> None:  # fmt: skip
    """A model already downloaded: a Chinese page's click says it is starting (the server takes
    a few seconds), then connects it; a second page connects the running model without a new
    download or a second server process."""
    from brainchat.localmodels.catalog import load_catalog

    env = local_env(hub, tmp_path / "local", delay=4)
    home = tmp_path / "app"
    home.mkdir()
    (model,) = load_catalog(Path(env["BRAINCHAT_MODELS_CATALOG"]))
    _pull_with(env, model, home / "state" / "models")
    served = len(hub.requests)
    url = app_factory(env, home=home)
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("text=brainchat 尚未就绪")
    assert "（已下载）" in page.inner_text("body") and "本机" in page.inner_text("body")
    page.get_by_role("button", name="使用本地模型").click()
    page.wait_for_selector("text=/正在启动本地模型 .*Tiny Lab \\(Q4\\).* \\d+ 秒/")
    page.wait_for_selector("text=/已在本机运行/")
    send(page, "第一页？")
    page.wait_for_selector("text=(scripted) 第一页？")
    wait_idle(page)
    context.close()

    page = open_chat(browser, url)
    assert "(already downloaded)" in page.inner_text("body")
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector("text=/runs on this machine/")
    send(page, "Second page?")
    page.wait_for_selector("text=(scripted) Second page?")
    wait_idle(page)
    page.close()
    assert len(hub.requests) == served  # no download: the operator's file was used
    ((pid, *_),) = starts(tmp_path / "local")  # one server for both pages
    app_factory.stop(url)  # the app stops: its local model server with it
    poll(lambda: not Path(f"/proc/{pid}").exists(), "the local model server's end", timeout=20)


def forging(model: str) -> Any:
    """A route handler that puts `model` into the payload of the action the page sends."""

    def rewrite(route: Any) -> None:
        body = json.loads(route.request.post_data or "{}")
        body["action"]["payload"]["model"] = model
        route.continue_(post_data=json.dumps(body))

    return rewrite


def _pull_with(env: dict[str, str], model: Any, folder: Path) -> None:
    """Download the catalog entry as `brainchat models pull` would, before the app starts."""
    from brainchat.localmodels.download import pull

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        pull(model, folder=folder)
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def test_offline_and_without_the_runtime_the_page_says_what_to_do(app_factory, browser, hub,
                                                                   tmp_path) -> None:  # fmt: skip
    """No hub to reach: the download says so and nothing is started. A file present but no
    llama.cpp server to run it: the start says the one command that installs one."""
    from brainchat.localmodels.catalog import load_catalog

    env = local_env(hub, tmp_path / "local")
    with socket.socket() as s:  # a port nobody listens on: the hub is unreachable
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    url = app_factory({**env, "BRAINCHAT_MODELS_HUB_URL": closed})
    page = open_chat(browser, url)
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector("text=/Tiny Lab \\(Q4\\) was not downloaded: /")
    assert "127.0.0.1" in page.inner_text("body")  # it names the hub it could not reach
    assert not starts(tmp_path / "local")
    page.close()

    home = tmp_path / "app"
    home.mkdir()
    (model,) = load_catalog(Path(env["BRAINCHAT_MODELS_CATALOG"]))
    _pull_with(env, model, home / "state" / "models")
    # llama-server named but not there (this venv may have llama-cpp-python, so the runtime's
    # "not installed" path cannot be forced here; its message names the same command)
    no_server = {**env, "BRAINCHAT_LLAMA_SERVER": str(tmp_path / "no-such-llama-server")}
    page = open_chat(browser, app_factory(no_server, home=home))
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector("text=/local model Tiny Lab \\(Q4\\) did not start: /")
    assert "pip install 'brainchat[local]'" in page.inner_text("body")
    # the operator's catalog file goes bad while the app runs: the list says so, nothing breaks
    Path(env["BRAINCHAT_MODELS_CATALOG"]).write_text("[{not json")
    page.get_by_role("button", name="Other local models").click()
    page.wait_for_selector(
        "text=/The local model catalog cannot be read: BRAINCHAT_MODELS_CATALOG/"
    )
    page.close()


@pytest.mark.attack
def test_with_accounts_a_user_cannot_make_the_server_download(app_factory, browser, hub,
                                                              tmp_path) -> None:  # fmt: skip
    """A user is not the server's operator: the button refuses to download (the operator runs
    `brainchat models pull`), a URL or a path slipped into the click's payload is no catalog id,
    and nothing reaches the hub or the disk. A model the operator pulled, the user may use."""
    from test_persist_ui import add_user
    from test_recordings_ui import login

    from brainchat.localmodels.catalog import load_catalog

    env = {**local_env(hub, tmp_path / "local"), "BRAINCHAT_AUTH": "password"}
    home = tmp_path / "app"
    home.mkdir()
    add_user(home, env, "ana", "correct horse battery")
    url = app_factory(env, home=home)
    models, served = home / "state" / "models", len(hub.requests)
    page = login(browser, url, "ana", "correct horse battery")
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector("text=/only the server's operator downloads models/")
    assert f"brainchat models pull {MODEL_ID}" in page.inner_text("body")

    # the same click, its payload changed on the way to a URL, then to a path on the server
    for forged in (f"{hub.url}/{REPO}/resolve/{REVISION}/{FILENAME}", "/etc/passwd"):
        page.route("**/project/action", forging(forged))
        before = page.locator("text=/no local model/").count()
        page.get_by_role("button", name="Use a local model").click()
        page.wait_for_function(
            f"() => document.body.innerText.split('no local model').length - 1 > {before}"
        )
        page.unroute("**/project/action")
    assert len(hub.requests) == served, hub.requests[served:]  # the hub was never asked
    assert not models.exists() or not any(models.iterdir())  # nothing written
    assert not starts(tmp_path / "local")

    # the operator pulls it in the terminal: now the user's click starts and connects it
    (model,) = load_catalog(Path(env["BRAINCHAT_MODELS_CATALOG"]))
    _pull_with(env, model, models)
    page.get_by_role("button", name="Use a local model").click()
    page.wait_for_selector("text=/runs on this machine/")
    send(page, "Hello from ana")
    page.wait_for_selector("text=(scripted) Hello from ana")
    wait_idle(page)
    page.close()


def test_two_pages_asking_for_the_same_download_share_it(app_factory, browser, hub,
                                                         tmp_path) -> None:  # fmt: skip
    """A second page that asks for a model another page is downloading waits for that download
    (one transfer), then both use the one server."""
    env = local_env(hub, tmp_path / "local")
    url = app_factory(env)
    first, second = open_chat(browser, url), open_chat(browser, url)
    served = len(hub.requests)
    first.get_by_role("button", name="Use a local model").click()
    first.wait_for_selector("text=/\\d+% · .* of 3.0 MB/")
    second.get_by_role("button", name="Use a local model").click()
    second.wait_for_selector("text=/being downloaded for another page; this one waits/")
    for page, question in ((first, "From the first page?"), (second, "From the second page?")):
        page.wait_for_selector("text=/runs on this machine/")
        send(page, question)
        page.wait_for_selector(f"text=(scripted) {question}")
        wait_idle(page)
        page.close()
    assert len(hub.requests) == served + 1, hub.requests[served:]  # one transfer, no retry
    assert len(starts(tmp_path / "local")) == 1
