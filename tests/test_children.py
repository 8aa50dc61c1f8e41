"""Process groups are ended whole, and never another program's (brainchat.children).

A kernel (eeg/kernel/launcher.py) and a local model server (localmodels/runtime_process.py)
each lead a process group of their own, ended with killpg. Once such a leader has been reaped,
its pid can be handed to any new process (pid_max is 32,768 here), and a killpg on it would end
whatever group now has that id: an embedded Postgres, a browser, another app. The attack is
played by a reaped child whose pid now names another program's live group."""

from __future__ import annotations

import subprocess
import sys
import time
from multiprocessing.connection import Pipe

import psutil
import pytest

from brainchat.children import exit_code, signal_group, wait_exit
from brainchat.eeg.kernel.launcher import LocalProcess
from brainchat.localmodels.runtime_process import end_group

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def leader(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, start_new_session=True)


def reaped_with_pid_of(other: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """A child that ended and was reaped, its pid now given to `other` (as pid reuse would)."""
    gone = leader([sys.executable, "-c", "pass"])
    gone.wait()
    gone.pid = other.pid
    return gone


@pytest.fixture
def bystander():
    """Another program leading a process group of its own (a Postgres server does)."""
    proc = leader(SLEEP)
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.attack
def test_ending_a_reaped_local_model_server_never_signals_the_group_its_pid_now_names(bystander):
    end_group(reaped_with_pid_of(bystander), grace=0.5)
    time.sleep(0.2)
    assert bystander.poll() is None  # alive


@pytest.mark.attack
def test_ending_a_reaped_kernel_never_signals_the_group_its_pid_now_names(bystander):
    ours, _theirs = Pipe()
    LocalProcess(reaped_with_pid_of(bystander), ours).kill()
    time.sleep(0.2)
    assert bystander.poll() is None


def test_a_leader_that_exited_is_not_reaped_until_its_group_was_ended():
    """A leader that exits leaving a child behind: its code is read and its group still ended."""
    proc = leader(["sh", "-c", f"{sys.executable} -c 'import time; time.sleep(60)' & exit 3"])
    wait_exit(proc)
    assert exit_code(proc) == 3 and proc.returncode is None  # known, not reaped
    [left] = [
        p for p in psutil.process_iter(["pid"]) if _group(p) == proc.pid and p.pid != proc.pid
    ]
    signal_group(proc)
    left.wait(timeout=10)  # the child the leader left is ended with the group
    assert proc.wait(timeout=5) == 3


def test_a_kernel_ended_by_a_signal_says_which_before_it_is_reaped():
    proc = leader(SLEEP)
    proc.send_signal(9)
    wait_exit(proc)
    ours, _theirs = Pipe()
    assert LocalProcess(proc, ours).ended().startswith("killed by SIGKILL")
    assert proc.returncode is None


def _group(p: psutil.Process) -> int | None:
    import os

    try:
        return os.getpgid(p.pid)
    except (ProcessLookupError, PermissionError):
        return None
