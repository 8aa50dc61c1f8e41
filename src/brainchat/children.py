"""Child processes that lead a process group of their own, ended whole without ever signalling
another program's group.

`os.killpg(pid, ...)` is safe only while `pid` is still this process's child: once the leader
has been reaped (`Popen.poll`/`wait` set its `returncode`) and its group has no member left, the
kernel may give the pid to any new process, and a program that leads a group of its own (a
Postgres server, a browser, another app) would get the signal. pid_max is 32,768 on many
machines, so a long test run or a busy app wraps it within minutes. Here the leader is waited
for without being reaped (`waitid` with WNOWAIT): while it is a zombie its pid, and so its group
id, stays this process's; the group is signalled, then the leader is reaped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from typing import Any


def exit_code(proc: subprocess.Popen[Any]) -> int | None:
    """The child's exit code as Popen gives it (negative: the signal that ended it), or None
    while it runs; the child is not reaped."""
    if proc.returncode is not None:
        return proc.returncode
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler): Popen knows the code
        return proc.poll()
    if info is None:
        return None
    return -info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status


def wait_exit(proc: subprocess.Popen[Any]) -> None:
    """Block until the child exits; it is not reaped (its group can still be signalled)."""
    if proc.returncode is None:
        with contextlib.suppress(ChildProcessError):
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)


def signal_group(proc: subprocess.Popen[Any], sig: int = signal.SIGKILL) -> None:
    """Signal the child's process group, only while its leader is not reaped (see above)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)


def exited_within(proc: subprocess.Popen[Any], seconds: float, step: float = 0.05) -> bool:
    """Whether the child exits within `seconds`; it is not reaped."""
    deadline = time.monotonic() + seconds
    while exit_code(proc) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True
