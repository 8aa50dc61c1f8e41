"""The local server's process: started in a process group of its own on a loopback port, watched
by one supervisor thread that restarts it when it dies, ended with its whole group.

The supervisor thread forks the server, and on Linux the server is told to get SIGTERM when that
thread ends (PR_SET_PDEATHSIG): the thread lives exactly as long as the runtime, and it ends with
the app's process however that ends (even SIGKILL, when atexit never runs), so no server is left
behind. A server that exits is restarted on the same port (the connection's URL stays valid);
one that exits again and again, or whose port another program took meanwhile, is given up with a
message that says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from brainchat.children import exit_code, exited_within, signal_group, wait_exit
from brainchat.localmodels.runtime_command import Launch, child_env
from brainchat.redact import get_logger, mask

log = get_logger("brainchat.localmodels")
State = Literal["starting", "ready", "failed", "stopped"]
READY_TIMEOUT = 600.0  # seconds a start may take: a large model read from a slow disk
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
RESTARTS = 3  # exits within RESTART_WINDOW before the supervisor gives up
RESTART_WINDOW = 120.0
TAIL_CHARS = 1500
PR_SET_PDEATHSIG = 1


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_taken(port: int) -> bool:
    """Another program listens on `port` (the dead server's TIME_WAIT connections do not count:
    servers bind with SO_REUSEADDR, as this check does)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def answers(port: int, timeout: float = 5.0) -> bool:
    """Whether the server on `port` lists its models (llama-server says 503 while loading)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    try:
        with opener.open(f"http://127.0.0.1:{port}/v1/models", timeout=timeout) as resp:
            return bool(resp.status == 200)
    except (OSError, urllib.error.URLError, ValueError):
        return False


def log_tail(path: Path, chars: int = TAIL_CHARS) -> str:
    """The end of a server's log, with anything secret-shaped masked."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - chars))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return mask(text.strip(), everyone=True) or "(the log is empty)"


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that asks Linux to SIGTERM the child when the forking thread ends."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before prctl: nobody would end us
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def end_group(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> None:
    """SIGTERM the server's process group, SIGKILL what is left after `grace` seconds; the
    leader is reaped only after its group was signalled (brainchat.children: a reaped pid may be
    another program's)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        signal_group(proc, sig)
        if exited_within(proc, grace):
            signal_group(proc, signal.SIGKILL)  # the leader is gone; its children may not be
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)


class Supervisor(threading.Thread):
    """Starts the server, waits until it answers, restarts it when it dies; one per runtime."""

    def __init__(self, launch: Launch, log_path: Path) -> None:
        super().__init__(name=f"brainchat-local-{launch.alias}", daemon=True)
        self.launch = launch
        self.log_path = log_path
        self.state: State = "starting"
        self.problem: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._changed = threading.Condition()
        self._stopping = threading.Event()

    def settled(self, timeout: float | None = None) -> State:
        """Wait until the server answers, failed or stopped (not while it starts)."""
        with self._changed:
            self._changed.wait_for(lambda: self.state != "starting", timeout)
            return self.state

    def alive(self) -> bool:
        return self.state == "ready" and self.proc is not None and exit_code(self.proc) is None

    def _set(self, state: State, problem: str | None = None) -> None:
        with self._changed:
            self.state, self.problem = state, problem
            self._changed.notify_all()

    def run(self) -> None:
        exits: deque[float] = deque(maxlen=RESTARTS)
        try:
            while not self._stopping.is_set():
                if not self._serve_once():
                    return
                exits.append(time.monotonic())
                code = self.proc.returncode if self.proc else None
                if len(exits) == RESTARTS and exits[-1] - exits[0] < RESTART_WINDOW:
                    self._set("failed", self._exited(f"exited {RESTARTS} times in a row (last "
                              f"exit code {code}); it is not restarted again"))  # fmt: skip
                    return
                log.warning("the local model server exited (code %s); restarting it", code)
                self._set("starting")
        except Exception as exc:  # the thread must not die silently: say why the model is gone
            log.exception("the local model's supervisor failed")
            self._set("failed", f"the local model server could not be run: {exc}")
        finally:
            if self.proc is not None:
                end_group(self.proc)
            if self.state != "failed":
                self._set("stopped")

    def _serve_once(self) -> bool:
        """Start the server, wait until it answers, then until it exits. False: give up."""
        port = self.launch.port
        if self.starts and port_taken(port):
            self._set("failed", f"port {port} on 127.0.0.1, where the local model ran, is now "
                      "taken by another program: free it or pick the local model again")  # fmt: skip
            return False
        self.starts += 1
        with self.log_path.open("ab") as out:
            out.write(f"--- start {self.starts}: {' '.join(self.launch.argv())}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                self.launch.argv(), stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=child_env(), start_new_session=True,
                preexec_fn=_die_with_parent(),  # noqa: PLW1509 - see the module's docstring
            )  # fmt: skip
        problem = self._wait_ready(self.proc)
        if problem is not None:
            end_group(self.proc)
            self._set("stopped" if self._stopping.is_set() else "failed", problem)
            return False
        self._set("ready")
        wait_exit(self.proc)  # not reaped yet: what it started is ended with its group
        signal_group(self.proc, signal.SIGKILL)
        self.proc.wait()
        return not self._stopping.is_set()

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> str | None:
        """None once the server answers; else why it never will."""
        deadline = time.monotonic() + READY_TIMEOUT
        while not self._stopping.is_set():
            if (code := exit_code(proc)) is not None:
                return self._exited(f"exited at start (code {code})")
            if answers(self.launch.port, timeout=2.0):
                return None
            if time.monotonic() > deadline:
                return self._exited(f"did not answer within {READY_TIMEOUT:.0f} s")
            self._stopping.wait(0.25)  # polling the port: the server says nothing when ready
        return "the local model was stopped while it started"

    def _exited(self, what: str) -> str:
        hint = ""
        tail = log_tail(self.log_path)
        if "address already in use" in tail.lower():
            hint = f" (port {self.launch.port} is taken by another program)"
        return f"the local model server {what}{hint}; the end of its log ({self.log_path}):\n{tail}"

    def stop(self, timeout: float = STOP_GRACE * 3) -> None:
        """End the server and its group; the thread then ends."""
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()
        proc = self.proc
        if proc is not None:
            end_group(proc)
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)
        if self.state != "failed":
            self._set("stopped")
