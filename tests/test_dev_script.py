"""`bash scripts/dev.sh run` installs only what the app needs, and nothing when nothing changed."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_help() -> subprocess.CompletedProcess[str]:
    """`dev.sh run --help`: the whole start-up path, then chainlit's help instead of a server."""
    return subprocess.run(
        ["bash", "scripts/dev.sh", "run", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_run_installs_the_app_without_dev_tools_and_skips_the_install_the_second_time():
    first = run_help()
    assert first.returncode == 0, first.stderr[-2000:]
    assert "Usage: brainchat run" in first.stdout
    if "installing" in first.stderr:  # no stamp yet for this pyproject.toml
        assert "installing . into .venv" in first.stderr  # the app, not '.[dev]'
    second = run_help()
    assert second.returncode == 0, second.stderr[-2000:]
    assert "installing" not in second.stderr  # nothing changed: no pip at all
    assert "Usage: brainchat run" in second.stdout


def test_dev_script_installs_the_app_alone_for_run_and_dev_tools_for_test():
    script = (ROOT / "scripts" / "dev.sh").read_text()
    run = script[script.index("  run)") : script.index("  test)")]
    assert "setup_python .\n" in run and "[dev]" not in run
    assert "bash scripts/dev.sh run --demo" in run  # the no-.env note names the offline path
