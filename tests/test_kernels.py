"""Each study in a process of its own (#37): real kernel processes, real EDF files, the real tools.

Before: a stopped cross-validation with permutations (or EEGNet) went on computing in the app's
threads, one user's training waited 151 s for another's (one training turn per process), a
crash in a library would have ended the app, and nothing bounded one study's memory but the
machine's.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest
from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.kernel import client
from brainchat.eeg.kernel.client import KernelStudy, kernel_tools
from brainchat.eeg.kernel.pool import KernelPool

from support import wait_until

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
EPOCHED = [("load_data", {"files": FILES}), ("epoch_data", {"tmin": 0.5, "tmax": 2.5})]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    write_demo_set(folder, subjects=1, sessions=2, trials=24, seed=3)
    return folder


class User:
    """A study in a kernel and its tools, with the events its calls emit."""

    def __init__(self, data: Path, pool: KernelPool) -> None:
        self.study = KernelStudy(data, None, pool)
        self.tools = {t.name: t for t in kernel_tools(self.study)}
        self.seen: list[Any] = []

    async def call(self, name: str, args: dict[str, Any] | None = None) -> str:
        token = events._sink.set(self.seen.append)
        events.set_tool_call(f"call-{name}", name)
        try:
            return str(await self.tools[name].ainvoke(args or {}))
        finally:
            events._sink.reset(token)

    async def run(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        for name, args in calls:
            await self.call(name, args)

    def pid(self) -> int:
        conn = self.study._conn
        assert conn is not None
        return int(conn.process.proc.pid)  # type: ignore[attr-defined]

    def progress(self) -> list[str]:
        return [e.message for e in self.seen if isinstance(e, events.ToolProgress)]


@pytest.fixture
def pool() -> Any:
    made = KernelPool(max_kernels=4, per_user=4)
    yield made
    made.end_all()


async def test_a_study_runs_in_its_own_process_and_the_app_mirrors_it(data, pool) -> None:
    user = User(data, pool)
    await user.run(EPOCHED)
    assert user.pid() != os.getpid()
    assert user.study.stage == "epoched" and user.study.facts()["files"] == FILES
    assert [e["op"] for e in user.study.log] == ["load", "epoch"]
    changed = [e for e in user.seen if isinstance(e, events.StudyChanged)]
    assert [e.call_id for e in changed] == ["call-load_data", "call-epoch_data"]
    assert "stage=epoched" in user.study.context()


async def test_stop_ends_a_permutation_run_and_the_kernel_stops_computing(data, pool) -> None:
    """A cross-validation with 1,000 permutations, stopped at its first fold: the kernel is idle
    again (its CPU time stops growing) and the study is as it was before the call."""
    user = User(data, pool)
    await user.run(EPOCHED)
    args = {"protocol": "within_session", "pipelines": ["csp_lda"], "permutations": 1000}
    task = asyncio.create_task(user.call("cross_validate", args))
    await wait_until(lambda: any("fold" in m for m in user.progress()), 120, "a fold's progress")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await user.study.settled()
    pid = user.pid() if user.study.running else None
    if pid is not None:  # it settled in time: its CPU time no longer grows
        proc = psutil.Process(pid)
        before = sum(proc.cpu_times()[:2])
        await asyncio.sleep(1.0)
        assert sum(proc.cpu_times()[:2]) - before < 0.2
    assert await user.call("get_study_state") and user.study.stage == "epoched"


async def permuting(user: User) -> asyncio.Task[str]:
    """A 1,000-permutation cross-validation started, once its first fold is under way."""
    task = asyncio.create_task(user.call("cross_validate", {"protocol": "within_session",
                                                            "permutations": 1000}))  # fmt: skip
    await wait_until(lambda: any("fold" in m for m in user.progress()), 120, "a fold's progress")
    return task


async def test_a_step_that_will_not_stop_has_its_kernel_ended_and_the_study_restored(
    data, pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "STOP_GRACE", 0.0)  # the step is given no time to stop
    user = User(data, pool)
    await user.run(EPOCHED)
    pid = user.pid()
    task = await permuting(user)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await user.study.settled()
    await wait_until(lambda: not psutil.pid_exists(pid) or _zombie(pid), 10, "the kernel's end")
    assert not user.study.running and [e["op"] for e in user.study.pending or []] == [
        "load",
        "epoch",
    ]
    user.seen.clear()
    await user.call("get_study_state")
    restored = [e for e in user.seen if isinstance(e, events.StudyRestored)]
    assert restored and restored[0].stage == "epoched" and user.pid() != pid


async def test_a_kernel_killed_mid_step_fails_that_call_only_and_the_next_one_restores(
    data, pool
) -> None:
    user = User(data, pool)
    await user.run(EPOCHED)
    pid = user.pid()
    task = await permuting(user)
    os.kill(pid, signal.SIGKILL)  # as the OOM killer or a crash in a library would
    with pytest.raises(ToolException) as info:
        await task
    text = str(info.value)
    assert text.startswith("cross_validate failed: the study's process ended while it ran")
    assert "killed by SIGKILL" in text and "rebuilt from its log" in text
    state = await user.call("get_study_state")
    assert "stage: epoched" in state and user.pid() != pid


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_the_memory_limit_is_the_operating_systems_and_ends_one_step(data) -> None:
    """A kernel limited to 1,000 MB of data: a resample of two loaded files to 10 kHz, needing
    ~1 GB more, fails with the limit named; the study is unchanged and the next step works."""
    pool = KernelPool(memory_mb=1000)
    try:
        user = User(data, pool)
        await user.run(EPOCHED[:1])
        with pytest.raises(ToolException) as info:
            await user.call("resample_data", {"sfreq": 10000})
        text = str(info.value)
        assert "out of memory" in text and "BRAINCHAT_KERNEL_MEMORY_MB" in text, text
        assert user.study.stage == "loaded"
        assert "stage: loaded" in await user.call("get_study_state")
    finally:
        pool.end_all()


async def test_two_users_train_at_once_without_waiting_for_each_other(data, tmp_path) -> None:
    """Seeded training takes turns within a process (torch's generator is the process's); in
    kernels of their own two users' trainings never wait for each other."""
    other = tmp_path / "other"
    write_demo_set(other, subjects=1, sessions=2, trials=24, seed=3)
    pool = KernelPool(max_kernels=4, per_user=1)
    try:
        users = [User(data, pool), User(other, pool)]
        split = [*EPOCHED, ("split_dataset", {"by": "trial", "seed": 1})]
        await asyncio.gather(*(u.run(split) for u in users))
        train = {"model": "eegnet", "epochs": 3}
        results = await asyncio.gather(*(u.call("train_model", train) for u in users))
        assert all("eegnet" in r for r in results)
        assert not [m for u in users for m in u.progress() if "another session" in m]
        assert users[0].pid() != users[1].pid()
    finally:
        pool.end_all()


async def test_a_full_pool_ends_an_idle_kernel_or_queues_with_the_place_shown(data) -> None:
    pool = KernelPool(max_kernels=1, per_user=1)
    try:
        first, second = User(data, pool), User(data, pool)
        await first.run(EPOCHED)
        first.seen.clear()  # its kernel's start said so: the progress awaited is the fold's
        busy = asyncio.create_task(first.call("cross_validate", {"protocol": "within_session",
                                                                 "permutations": 20}))  # fmt: skip
        await wait_until(lambda: first.progress() != [], 120, "the first study's progress")
        await second.call("list_data_files")  # waits for the busy kernel, then ends it (idle)
        await busy
        assert any("waiting for a study process (1 running, next in the queue)" in m
                   for m in second.progress())  # fmt: skip
        assert not first.study.running and first.study.pending  # its log, replayed later
        first.seen.clear()
        assert "stage: epoched" in await first.call("get_study_state")
        assert any(isinstance(e, events.StudyRestored) for e in first.seen)
    finally:
        pool.end_all()
