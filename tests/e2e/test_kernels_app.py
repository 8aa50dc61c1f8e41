"""Kernels in the real app under `chainlit run` (#37): each conversation's study runs in a child
process of the app, Stop from the page ends its work, and SIGTERM ends the app and its kernels
while a step runs (before: a stopped step's thread kept the app from exiting)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest
from sio_client import ChainlitSocket, local_login

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, ToolCalls
from conftest import spec

from support import wait_until

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
WORKER = "brainchat.eeg.kernel.worker"


def kernels(pid: int) -> list[psutil.Process]:
    out = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if WORKER in " ".join(child.cmdline()):
                out.append(child)
        except psutil.NoSuchProcess:
            pass
    return out


async def start_long_run(url: str, model_server: Any) -> ChainlitSocket:
    """A conversation whose agent runs a 1,000-permutation cross-validation."""
    model_server.queue("fc-m", ToolCalls([  # stopped (or the app ended) in this round
        Call("load_data", {"files": FILES}), Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        Call("cross_validate", {"protocol": "within_session", "permutations": 1000})]))  # fmt: skip
    sock = ChainlitSocket()
    await sock.connect(url, origin=None, cookie=await local_login(url))
    await sock.start_chat()
    await sock.send("cross-validate with permutations")
    await sock.wait_for("fold 1/", timeout=180)
    return sock


@pytest.fixture
def app(model_server, app_factory, tmp_path: Path) -> str:
    write_demo_set(tmp_path / "data", subjects=1, sessions=2, trials=24, seed=3)
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "AGENT_TOOL_TIMEOUT": "600", "AGENT_MAX_TIME": "600"}  # fmt: skip
    return str(app_factory(env, home=tmp_path))


async def test_stop_from_the_page_ends_the_kernels_work(app, app_factory, model_server) -> None:
    sock = await start_long_run(app, model_server)
    pid = app_factory.pid(app)
    (kernel,) = kernels(pid)
    assert kernel.pid != pid
    await sock.sio.emit("stop")
    await sock.wait_for("Task manually stopped", timeout=30)

    def quiet() -> bool:  # the kernel ended, or its CPU time no longer grows
        try:
            before = sum(kernel.cpu_times()[:2])
        except psutil.NoSuchProcess:
            return True
        psutil.cpu_percent(0.3)
        try:
            return sum(kernel.cpu_times()[:2]) - before < 0.05
        except psutil.NoSuchProcess:
            return True

    await wait_until(quiet, 10, "the kernel's work to end")
    await sock.close()


async def test_sigterm_ends_the_app_and_its_kernels_while_a_step_runs(
    app, app_factory, model_server
) -> None:
    sock = await start_long_run(app, model_server)
    pid = app_factory.pid(app)
    running = kernels(pid)
    assert running
    os.kill(pid, signal.SIGTERM)
    try:
        psutil.Process(pid).wait(10)
    except psutil.NoSuchProcess:
        pass
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    gone, alive = psutil.wait_procs(running, timeout=5)
    assert not alive, f"kernels left running: {[p.pid for p in alive]}"
    await sock.close()
