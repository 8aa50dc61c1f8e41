"""The study kernels of an app process and their CPU time (#37), for the browser test of Stop
and bench/app_users.py: which children of the app are kernels, and when their CPU time stops
growing."""

from __future__ import annotations

import time
from collections.abc import Iterable

import psutil

WORKER_MODULE = "brainchat.eeg.kernel.worker"


def study_kernels(app_pid: int) -> list[psutil.Process]:
    """The kernel processes the app has started (children running the kernel worker)."""
    found = []
    for child in psutil.Process(app_pid).children(recursive=True):
        try:
            if WORKER_MODULE in child.cmdline():
                found.append(child)
        except psutil.Error:  # ended (or a zombie) while listed
            continue
    return found


class CpuWatch:
    """The CPU seconds (user + system) of a set of processes; one that ended counts what it had
    used when last seen, so an ended kernel reads as quiet."""

    def __init__(self, procs: Iterable[psutil.Process]) -> None:
        self.procs = list(procs)
        self.seen: dict[int, float] = {p.pid: 0.0 for p in self.procs}

    def total(self) -> float:
        for proc in self.procs:
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            self.seen[proc.pid] = times.user + times.system
        return sum(self.seen.values())

    def rss_mb(self) -> float:
        """Resident memory of those still alive, in MB."""
        total = 0
        for proc in self.procs:
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                continue
        return total / 2**20

    def wait_growing(self, step: float = 0.5, more: float = 0.05, bound: float = 300.0) -> None:
        """Wait until the CPU time grows by `more` within one `step` (the work is computing)."""
        deadline = time.monotonic() + bound
        before = self.total()
        while True:
            time.sleep(step)
            now = self.total()
            if now - before >= more:
                return
            before = now
            assert time.monotonic() < deadline, f"the kernels did not compute within {bound:g} s"

    def wait_quiet(
        self, step: float = 1.0, below: float = 0.01, bound: float = 30.0, since: float = 0.0
    ) -> float:
        """Seconds from `since` (a time.monotonic() reading; now if 0) until the CPU time stopped
        growing: the start of the first `step` in which it grew by less than `below` (it had
        stopped by then, to within one step). `bound` is a failure guard, not a figure."""
        started = since or time.monotonic()
        before = self.total()
        while True:
            time.sleep(step)
            now = self.total()
            grew, before = now - before, now
            if grew < below:
                return max(0.0, time.monotonic() - step - started)
            assert time.monotonic() - started < bound, (
                f"the kernels' CPU time still grew {grew:.2f} s in {step:g} s, {bound:g} s after Stop"
            )
