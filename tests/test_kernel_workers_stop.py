"""Stop ends a kernel's parallel workers too (#37): with BRAINCHAT_CV_WORKERS > 1 a
cross-validation's folds run in loky worker processes, children of the kernel, which look at the
stop flag only between finished folds. A stopped step that does not free the study within the
grace has its kernel ended, and with it every process the kernel started: a worker left behind
would compute its fold's 1,000 permutations on for minutes, holding a core nobody sees."""

from __future__ import annotations

import asyncio

import psutil
import pytest

from brainchat.eeg.kernel import client
from brainchat.eeg.kernel.pool import KernelPool
from test_kernels import EPOCHED, User, _zombie, data, permuting  # noqa: F401 - data: a fixture

from support import wait_until


def _gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or _zombie(pid)


async def test_stop_ends_the_kernels_parallel_workers_with_it(data, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BRAINCHAT_CV_WORKERS", "2")
    monkeypatch.setattr(client, "STOP_GRACE", 0.0)  # no time to stop: the kernel is ended
    pool = KernelPool(max_kernels=2, per_user=2)
    try:
        user = User(data, pool)
        await user.run(EPOCHED)
        kernel = user.pid()
        task = await permuting(user)
        workers: list[int] = []

        def computing() -> bool:
            workers[:] = [p.pid for p in psutil.Process(kernel).children(recursive=True)]
            return len(workers) >= 2

        await wait_until(computing, 120, "the kernel's loky workers")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await user.study.settled()
        await wait_until(lambda: _gone(kernel), 10, "the kernel's end")
        await wait_until(lambda: all(_gone(w) for w in workers), 10, "the workers' end")
    finally:
        pool.end_all()
