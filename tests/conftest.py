"""Shared pytest fixtures. Keep each fixture small; add yours below with a one-line docstring."""

from __future__ import annotations

import os

# Under `dev.sh test`'s xdist workers (one per core) each process, and the apps and CV workers it
# starts, gets one OpenMP/BLAS thread: with the libraries' default (a thread per core) two workers'
# threads spun against each other and test_eeg_protocols took 137 s of CPU on -n 2, 32 s with one
# thread. Set before numpy/torch are imported; a user's own setting wins.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import hashlib  # noqa: E402 - after the thread settings above
import inspect  # noqa: E402
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from brainchat.testing.scripted_server import ScriptedServer

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A started ScriptedServer on 127.0.0.1 (ephemeral port); point models at `.base_url`."""
    with ScriptedServer() as server:
        yield server


SCRIPTED_FIXTURES = ("scripted_server", "model_server")  # fixtures that give a ScriptedServer


@pytest.fixture(autouse=True)
def _scripted_strict(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test whose scripted server kept queued replies or answered an unexpected request.

    A test that legitimately leaves replies (or sends requests nothing was queued for) opts out
    with `@pytest.mark.scripted_lenient("why")`.
    """
    servers = [request.getfixturevalue(n) for n in SCRIPTED_FIXTURES if n in request.fixturenames]
    lenient = request.node.get_closest_marker("scripted_lenient")
    if lenient is not None and not (lenient.args and str(lenient.args[0]).strip()):
        pytest.fail("@pytest.mark.scripted_lenient needs a reason: scripted_lenient('why')")
    yield
    if lenient is not None or request.node.stash.get(_CALL_FAILED, False):
        return  # a failed test already says what went wrong; do not pile a second error on it
    said = [
        p for server in servers if isinstance(server, ScriptedServer) and (p := server.problems())
    ]
    if said:
        for server in servers:  # reported once: a module's next test starts clean
            server.reset()
        pytest.fail(
            "scripted model server: " + "; ".join(said) + ". Queue only the replies the test"
            " uses and assert the calls it makes, or mark it @pytest.mark.scripted_lenient('why').",
            pytrace=False,
        )


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_CALL_FAILED] = True
    return report


# `bash scripts/dev.sh test --fast` leaves out tests marked browser or slow; a test is marked by
# the fixtures it uses (directly or through other fixtures), so a new test is sorted without a mark.
BROWSER_FIXTURES = {"browser"}  # Debian chromium driven by playwright
SLOW_FIXTURES = {"app_factory", "runtime_venv"}  # app processes; a virtual environment built


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "scripted_lenient(reason): the test may leave queued scripted replies unused or make "
        "model calls nothing was queued for (see `_scripted_strict`)",
    )


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if used & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
        if shares_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def shares_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a module- or class-wide fixture of ours (an app process, a browser,
    a scripted server): under `dev.sh test`'s workers such a module's tests stay on one worker,
    so the app starts once per module as it does in one process; the other tests spread singly."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        fixture = defs[-1]
        if fixture.scope in ("module", "class", "package") and ours(fixture.func):
            return True
    return False


def ours(func: Any) -> bool:
    """Whether a fixture function is defined under tests/ (not in a pytest plugin)."""
    try:
        return Path(inspect.getfile(inspect.unwrap(func))).is_relative_to(TESTS)
    except TypeError:
        return False


@pytest.fixture(scope="session")
def embedded_pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One embedded Postgres server per test session (`.new_database(name)` gives a fresh URL)."""
    from brainchat.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres(tmp_path_factory.mktemp("pg") / "data") as pg:
        yield pg


ROOT = Path(__file__).resolve().parents[1]
RUNTIME_VENVS = ROOT / ".venv-runtime"  # git-ignored; one folder per pyproject.toml/setup.py
NOT_PASSED_ON = ("PYTHONPATH", "VIRTUAL_ENV", "BRAINCHAT_VENV", "CI")  # a user's shell has none


@dataclass
class RuntimeVenv:
    """A virtual environment that `bash scripts/dev.sh run` built: the app without the dev extra."""

    path: Path
    first: subprocess.CompletedProcess[str]  # this session's first `dev.sh run --help`

    def env(self, **extra: str) -> dict[str, str]:
        """The environment `dev.sh` gets: this one's, less what a fresh shell would not have."""
        env = {k: v for k, v in os.environ.items() if k not in NOT_PASSED_ON}
        return {**env, "BRAINCHAT_VENV": str(self.path), **extra}

    def dev_sh(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "scripts/dev.sh", *args], cwd=ROOT, env=self.env(),
                              capture_output=True, text=True, timeout=1200)  # fmt: skip


def install_key() -> str:
    """What the runtime install depends on: pyproject.toml and setup.py."""
    files = (ROOT / "pyproject.toml").read_bytes() + (ROOT / "setup.py").read_bytes()
    return hashlib.sha256(files).hexdigest()[:16]


@pytest.fixture(scope="session")
def runtime_venv() -> RuntimeVenv:
    """The app installed by `dev.sh run` alone, in .venv-runtime/<key>: built on a fresh clone
    (CI), kept while pyproject.toml and setup.py stay the same (a new key is a new folder, so a
    dependency dropped from pyproject.toml is gone from it too)."""
    from filelock import FileLock

    folder = RUNTIME_VENVS / install_key()
    RUNTIME_VENVS.mkdir(exist_ok=True)
    # pytest-xdist workers each have this session fixture: the first builds, the others wait on
    # the lock and find it built (their `first` says no "installing")
    with FileLock(RUNTIME_VENVS / "build.lock"):
        for other in RUNTIME_VENVS.iterdir():
            if other != folder and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
        venv = RuntimeVenv(folder, subprocess.CompletedProcess([], 0))
        venv.first = venv.dev_sh("run", "--help")
    assert venv.first.returncode == 0, venv.first.stderr[-3000:]
    return venv
