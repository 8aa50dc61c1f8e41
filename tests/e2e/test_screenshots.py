"""The README's screenshots come from one documented command, run on a clean demo.

`bash scripts/dev.sh screenshots` runs scripts/screenshots.py, which writes docs/*.png; here it
writes into a temporary folder, and the text of each screen says the pictures hold no path of
this machine, no failed tool source and no Chainlit "Used" prefix.
The pictures' content (which steps, the figures under the answer) is asserted by the other
browser tests; this one proves the command that keeps docs/ current works.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CHROMIUM, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = ("chat.png", "agent-run.png", "settings.png", "training.png", "eeg-run.png", "chinese.png")


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_screenshot_command_regenerates_every_readme_picture_from_a_clean_demo(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is missing: apt-get install -y chromium")
    out, texts = tmp_path / "docs", tmp_path / "screens.txt"
    done = subprocess.run(
        [sys.executable, "scripts/screenshots.py", "--out", str(out), "--texts", str(texts)],
        cwd=ROOT,
        env={**os.environ, "BRAINCHAT_DEMO_PACE": "0"},  # pictures of finished screens
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in SHOTS:
        width, height = png_size(out / name)
        assert width >= 1280 and height >= 900, (name, width, height)
    screens = texts.read_text()
    assert "brainchat is ready" in screens and "Demo mode" in screens
    assert "Agent mode is on" in screens and "Sources" in screens
    assert "已就绪" in screens and "智能体模式已开启" in screens  # the page in Chinese
    assert "train_model · epoch" in screens  # live training progress in the step's title
    assert "/tmp" not in screens and "pytest" not in screens  # no path of this machine
    assert "unavailable" not in screens and "not found" not in screens  # no failed source
    assert "Used " not in screens and "Using " not in screens  # titles without Chainlit's prefix
    readme = (ROOT / "README.md").read_text()
    assert "bash scripts/dev.sh screenshots" in readme  # the command is documented
