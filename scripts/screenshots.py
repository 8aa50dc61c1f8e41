"""Regenerate the README's screenshots from a clean `brainchat --demo` run.

    bash scripts/dev.sh screenshots            # writes docs/*.png
    .venv/bin/python scripts/screenshots.py --out /tmp/shots

The app runs with scripted models (brainchat.demo.replies), an empty data folder and no MCP
servers, from a scratch folder: no key, no network, nothing of this machine's .env, data or paths
in the pictures. Debian chromium drives the demo tour: a chat answer, the switch to Agent, a
searched and cited agent run, the settings panel, then the EEG pipeline on the demo set with its
figures under the answer. `--texts FILE` also writes each screen's text (the test reads it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"  # Debian's; never `playwright install`
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
MODEL_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "CHAT_MODEL",
    "AGENT_FUNCTION_CALL_MODEL",
    "AGENT_ANSWER_MODEL",
    "CI",
)
STEPS_TIMEOUT_MS = 600_000  # training EEGNet on a busy 2-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(scratch: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`brainchat --demo` from a scratch folder: data/ and the log live there."""
    (scratch / "mcp_servers.json").write_text(json.dumps({"mcpServers": {}}))
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARS}
    env.update(
        {
            "CHAINLIT_APP_ROOT": str(ROOT),
            "BRAINCHAT_DATA_DIR": "data",
            "MCP_CONFIG": str(scratch / "mcp_servers.json"),
            "CHAINLIT_AUTH_SECRET": "",
            "PYTHONUNBUFFERED": "1",
        }
    )
    port = free_port()
    brainchat = Path(sys.executable).with_name("brainchat")
    log = open(scratch / "app.log", "wb")  # noqa: SIM115 - the process owns it until the end
    proc = subprocess.Popen(
        [str(brainchat), "--demo", "--headless", "--host", "127.0.0.1", "--port", str(port)],
        cwd=scratch,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the app exited:\n{(scratch / 'app.log').read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    sys.exit(f"the app did not start:\n{(scratch / 'app.log').read_text()[-3000:]}")


def wait_idle(page: Any, timeout: float = 60_000) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector("#stop-button", state="detached", timeout=timeout)
    page.wait_for_selector("#chat-submit", timeout=timeout)


def send(page: Any, text: str, timeout: float = 60_000) -> None:
    page.fill("#chat-input", text)
    page.click("#chat-submit")
    page.wait_for_timeout(500)
    wait_idle(page, timeout)


def open_step(page: Any, title_start: str) -> None:
    page.locator(f"button[id^='step-{title_start}'][data-state='closed']").last.click()
    page.wait_for_timeout(300)


class Shots:
    """Takes the screenshots and keeps each screen's text for screens.txt."""

    def __init__(self, out: Path) -> None:
        self.out, self.texts = out, list[str]()
        out.mkdir(parents=True, exist_ok=True)

    def take(self, page: Any, name: str, height: int = 900) -> None:
        """The window, `height` px tall: Chainlit scrolls its chat in a box, not the page, so a
        taller window (not a full-page shot) shows a whole run."""
        page.set_viewport_size({"width": 1280, "height": height})
        page.mouse.move(0, 0)  # no hover tooltip in the picture
        page.wait_for_timeout(800)  # the chat keeps its bottom in view after the resize
        page.screenshot(path=str(self.out / name))
        page.set_viewport_size({"width": 1280, "height": 900})
        self.texts.append(f"== {name}\n{page.inner_text('body')}\n")
        print(f"wrote {self.out / name}", flush=True)

    def save_texts(self, path: Path | None) -> None:
        if path is not None:
            path.write_text("\n".join(self.texts))


def tour(page: Any, shots: Shots) -> None:
    page.wait_for_selector("text=brainchat is ready")
    send(page, "What does EEG show during motor imagery?")
    shots.take(page, "chat.png")

    page.click("#mode-picker-trigger-mode")
    page.get_by_role("option", name=re.compile("Agent")).click()
    page.get_by_role("button", name="Switch to Agent").click()
    page.wait_for_selector("text=Agent mode is on")
    send(page, "What is event-related desynchronisation in motor imagery? Cite sources.")
    open_step(page, "web_search")
    shots.take(page, "agent-run.png", height=1500)

    page.click("#chat-settings-open-modal")  # the panel opens on its Models section
    page.wait_for_selector("#chat-settings [role=tabpanel][data-state=active] label")
    shots.take(page, "settings.png")
    page.keyboard.press("Escape")
    page.wait_for_selector("#chat-settings", state="detached")

    page.get_by_role("button", name="Write the demo EEG set").first.click()
    page.wait_for_selector("text=/Wrote \\d+ recordings/", timeout=120_000)
    page.fill("#chat-input", "Train a decoder on the demo EEG set and show me how well it does.")
    page.click("#chat-submit")
    page.wait_for_selector("text=/train_model · epoch ([3-9]|1[0-9])\\//", timeout=STEPS_TIMEOUT_MS)
    shots.take(page, "training.png")
    wait_idle(page, STEPS_TIMEOUT_MS)
    page.wait_for_selector("img.inline-image")
    shots.take(page, "eeg-run.png", height=1700)


def tour_in_chinese(browser: Any, url: str, shots: Shots) -> None:
    """The same app in a browser whose language is 简体中文: brainchat's own text follows it."""
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    page.wait_for_selector("text=已就绪")
    page.click("#mode-picker-trigger-mode")
    page.get_by_role("option").nth(1).click()  # Agent (the options' names are translated)
    page.get_by_role("button", name="切换到智能体").click()
    page.wait_for_selector("text=智能体模式已开启")
    send(page, "运动想象时脑电图显示什么？请引用文献。")
    open_step(page, "web_search")
    shots.take(page, "chinese.png", height=1300)
    context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="folder (default docs/)")
    parser.add_argument("--texts", type=Path, help="also write each screen's text to this file")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    shots = Shots(args.out.resolve())
    with tempfile.TemporaryDirectory(prefix="brainchat-screens-") as tmp:
        proc, url = start_app(Path(tmp))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(60_000)
                page.goto(url)
                try:
                    tour(page, shots)
                    tour_in_chinese(browser, url, shots)
                finally:
                    shots.save_texts(args.texts)
                    browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
