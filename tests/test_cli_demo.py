"""`brainchat ask --demo`: the terminal runs the app's scripted demo offline, with no model set (#40).

A real process, as a user runs it, with every model, key, proxy and brainchat variable removed
from its environment and a working folder with no `.env`: the only models it can reach are the
demo's own, started inside it (`brainchat.demo.start`, as `brainchat --demo` does)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainchat import i18n
from brainchat.eeg.io.synthetic import write_demo_set

BIN = Path(sys.executable).parent / "brainchat"
DROPPED = ("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_", "DATABASE_URL", "DEEPSEEK")
PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def ask(home: Path, *args: str, data: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(DROPPED) and k.lower() not in PROXIES
    }
    env |= {
        "BRAINCHAT_DATA_DIR": str(data or home / "data"),
        "BRAINCHAT_STATE_DIR": str(home / "state"),
        "BRAINCHAT_DEMO_PACE": "0",
        "HOME": str(home),
    }
    return subprocess.run(
        [str(BIN), "ask", "--demo", *args],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data" / "demo", subjects=1, sessions=2, trials=20, seed=0)
    return tmp_path


def test_ask_demo_lists_and_loads_the_demo_files_offline(home: Path) -> None:
    out = ask(home, "what is in the demo files?")
    assert out.returncode == 0, out.stderr
    assert "brainchat demo: scripted models at http://127.0.0.1:" in out.stderr
    assert "→ list_data_files" in out.stdout and "→ load_data" in out.stdout  # Agent mode
    assert "The demo set holds **2 recordings: 1 subject(s) × 2 session(s)**" in out.stdout
    assert "demo-answer" in out.stdout  # the stats name the demo's answer model


def test_ask_demo_trains_and_names_the_split_by_trial_for_what_it_is(home: Path) -> None:
    out = ask(home, "--json", "train CSP+LDA")
    assert out.returncode == 0, out.stderr
    assert '"name": "evaluate_model"' in out.stdout
    assert "CSP+LDA reached an accuracy of" in out.stdout
    assert "split note: split by trial: the test trials come from the same 2 session(s)" in (
        out.stdout
    )


def test_ask_demo_in_chinese_and_without_data(home: Path) -> None:
    out = ask(home, "讲个笑话")
    assert out.returncode == 0, out.stderr
    assert i18n.t("demo.capabilities", "zh-CN") in out.stdout
    empty = home / "empty"
    empty.mkdir()
    out = ask(home, "--mode", "agent", "训练一个解码器", data=empty)
    assert out.returncode == 0, out.stderr
    assert "→ list_data_files" in out.stdout and "→ train_model" not in out.stdout
    assert "`brainchat demo-data`" in out.stdout  # how to write the demo set, from a terminal


def test_ask_demo_refuses_a_bad_pace_before_anything_starts(home: Path) -> None:
    out = subprocess.run(
        [str(BIN), "ask", "--demo", "hello"],
        env={
            **os.environ,
            "BRAINCHAT_DEMO_PACE": "fast",
            "BRAINCHAT_STATE_DIR": str(home / "state"),
        },
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "BRAINCHAT_DEMO_PACE" in out.stderr
    assert "Traceback" not in out.stderr
