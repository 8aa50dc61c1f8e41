"""Seconds from a click on "Use a local model" to the first answer, the file already present (#42).

The user's path, whole: the app (`chainlit run`, no model configured, BRAINCHAT_LLAMA_SERVER set
to llama.cpp's server) in Debian chromium; the click at t0; brainchat finds the verified file,
starts llama-server on a free port, waits until it answers, connects it for every role; the
question is sent as soon as the page says the model runs, and t1 is the end of the answer's
turn. Baseline, in the same run: the same llama-server command line (the runtime's own, so the
same flags, context and threads) started by hand, waited for, and asked the same question once
with a bare OpenAI request; brainchat's Chat request carries its system prompt, so its prompt is
longer (both token counts are printed).

Needs what bench/real_model_setup.py builds into its cache (llama-server and the Qwen2.5-Coder
1.5B Q4_K_M file): `.venv/bin/python bench/real_model_setup.py` once, then

    .venv/bin/python bench/local_model_setup_time.py [--rounds 2] [--question "..."]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

from brainchat.localmodels import catalog, store  # noqa: E402
from brainchat.localmodels.runtime_command import Launch, Server, cores  # noqa: E402
from brainchat.localmodels.runtime_process import free_port  # noqa: E402
from real_model_setup import default_cache, llama_server, model_file  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
QUESTION = "In one short sentence: what is an EEG?"


def wait_http(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer")


def ask(base: str, model: str, question: str) -> dict[str, Any]:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": question}]})
    request = urllib.request.Request(
        f"{base}/chat/completions", body.encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as reply:
        return json.loads(reply.read())  # type: ignore[no-any-return]


def baseline(binary: Path, model_path: Path, model: Any, question: str) -> dict[str, float]:
    """llama-server started by hand with the runtime's command line, then one request."""
    launch = Launch(Server("llama-server", (str(binary),)), model_path, model.id, free_port(),
                    model.context, cores(), 0)  # fmt: skip
    began = time.monotonic()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(launch.argv(), stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{launch.port}/v1"
            wait_http(f"{base}/models", began + 600)
            ready = time.monotonic()
            reply = ask(base, model.id, question)
            done = time.monotonic()
        finally:
            proc.terminate()
            proc.wait(15)
    usage = reply.get("usage") or {}
    return {"ready_s": ready - began, "total_s": done - began,
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0)}  # fmt: skip


def install(model_path: Path, model: Any, state: Path) -> None:
    """The cached file in the app's models folder (a hard link), noted as verified: what
    `brainchat models pull` leaves behind."""
    folder = state / store.FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / model.filename
    try:
        os.link(model_path, target)
    except OSError:
        target.symlink_to(model_path)
    store.record(target, model.sha256, "bench: bench/real_model_setup.py's cache")


def start_app(home: Path, binary: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    drop = ("CHAT_MODEL", "AGENT_FUNCTION_CALL_MODEL", "AGENT_ANSWER_MODEL", "OPENAI_API_KEY",
            "OPENAI_BASE_URL", "OPENAI_MODEL", "DEEPSEEK_API_KEY", "CI")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({"BRAINCHAT_DATA_DIR": str(home / "data"), "BRAINCHAT_STATE_DIR": str(home / "state"),
                "BRAINCHAT_LLAMA_SERVER": str(binary), "CHAINLIT_AUTH_SECRET": "",
                "DEFAULT_MODE": "chat"})  # fmt: skip
    chainlit = str(Path(sys.executable).with_name("chainlit"))
    log = (home / "app.log").open("ab")
    proc = subprocess.Popen([chainlit, "run", "src/brainchat/app.py", "--headless", "--port",
                             str(port), "--host", "127.0.0.1"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_http(url, time.monotonic() + 180)
    return proc, url


def through_the_page(binary: Path, model_path: Path, model: Any, question: str) -> dict[str, float]:
    """Click "Use a local model" at t0; the page's answer to `question` complete at t1."""
    from playwright.sync_api import sync_playwright

    home = Path(tempfile.mkdtemp(prefix="bench-local-"))
    install(model_path, model, home / "state")
    app, url = start_app(home, binary)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM,
                                         args=["--no-sandbox", "--headless=new", "--disable-gpu"])  # fmt: skip
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(600_000)
            page.goto(url)
            page.wait_for_selector("text=brainchat is not ready yet")
            began = time.monotonic()
            page.get_by_role("button", name="Use a local model").click()
            page.wait_for_selector("text=/runs on this machine/")
            ready = time.monotonic()
            page.fill("#chat-input", question)
            page.click("#chat-submit")
            page.wait_for_selector("text=/ in \\/ \\d+ out tokens/")  # the turn's usage line
            done = time.monotonic()
            usage = page.locator("text=/ in \\/ \\d+ out tokens/").last.inner_text()
            browser.close()
    finally:
        app.terminate()
        app.wait(30)
    numbers = [int(w) for w in usage.replace(",", "").replace("/", " ").split() if w.isdigit()]
    return {"ready_s": ready - began, "total_s": done - began,
            "prompt_tokens": numbers[0] if numbers else 0,
            "completion_tokens": numbers[1] if len(numbers) > 1 else 0}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    cache = default_cache()
    binary, model_path = llama_server(cache), model_file(cache)
    model = catalog.default(catalog.BUILT_IN)
    with model_path.open("rb") as f:  # the file in the page cache for both sides
        while f.read(1 << 24):
            pass
    print(f"model {model.id} ({model_path.stat().st_size / 1e9:.2f} GB), {cores()} cores, "
          f"llama-server {binary}", flush=True)  # fmt: skip
    rows: list[tuple[str, dict[str, float]]] = []
    for n in range(args.rounds):  # alternating, so neither side always runs on a warmer machine
        for name, run in (("bare llama-server", baseline), ("brainchat page", through_the_page)):
            result = run(binary, model_path, model, args.question)
            rows.append((name, result))
            load = os.getloadavg()[0]  # other work on the machine slows both sides
            print(f"round {n + 1} {name:18} ready {result['ready_s']:6.2f} s   first answer "
                  f"{result['total_s']:6.2f} s   tokens {result['prompt_tokens']:.0f} in / "
                  f"{result['completion_tokens']:.0f} out   load {load:.1f}", flush=True)  # fmt: skip
    for key in ("ready_s", "total_s"):
        for how, pick in (("best", min), ("median", statistics.median)):
            base = pick([r[key] for name, r in rows if name == "bare llama-server"])
            page = pick([r[key] for name, r in rows if name == "brainchat page"])
            print(f"{how:6} {key[:-2]:6}: brainchat {page:.2f} s, bare {base:.2f} s, "
                  f"ratio {page / base:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
