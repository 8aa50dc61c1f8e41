"""How a kernel process is started: one interface, local processes by default.

A launcher returns a `KernelProcess`: the app's end of the kernel's connection, and how to tell
whether it lives, why it ended and how to end it. Another launcher (a container, a Dask worker)
gives the same four things and no tool changes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Protocol

from brainchat.children import exit_code, signal_group

# what a kernel needs of the app's environment: never the models' keys or the store's password
_KEPT_PREFIXES = ("BRAINCHAT_", "OMP_", "OPENBLAS_", "MKL_", "MNE_", "CUDA_", "TORCH_")
_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "MPLBACKEND",
         # a lab's proxy and certificates: fetch_dataset downloads from the kernel
         "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
         "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE")  # fmt: skip
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "DATABASE", "MODEL", "AUTH")


class KernelProcess(Protocol):
    conn: Connection

    def alive(self) -> bool: ...

    def ended(self) -> str:
        """Why the process ended, in words ('' while it lives)."""
        ...

    def kill(self) -> None: ...


class Launcher(Protocol):
    def start(self, memory_mb: int) -> KernelProcess: ...


class LocalProcess:
    """A kernel on this machine, a child process of the app."""

    def __init__(self, proc: subprocess.Popen[bytes], conn: Connection) -> None:
        self.proc, self.conn = proc, conn

    def alive(self) -> bool:
        return exit_code(self.proc) is None

    def ended(self) -> str:
        code = exit_code(self.proc)  # not reaped: kill() can still end its group safely
        if code is None:
            return ""
        if code < 0:
            name = signal.Signals(-code).name
            why = " (the operating system ends a process so when memory runs out)" * (
                name == "SIGKILL"
            )
            return f"killed by {name}{why}"
        return f"exited with code {code}"

    def kill(self) -> None:
        """End the kernel and every process it started (its process group: a cross-validation's
        loky workers, which would otherwise compute their fold on, unseen)."""
        try:
            self.conn.close()
        except OSError:
            pass
        signal_group(self.proc, signal.SIGKILL)  # its own group (start_new_session)
        if exit_code(self.proc) is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


class LocalLauncher:
    """`python -m brainchat.eeg.kernel.worker` with its end of a socket pair."""

    def start(self, memory_mb: int) -> LocalProcess:
        parent, child = socket.socketpair()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "brainchat.eeg.kernel.worker", str(child.fileno()),
                 str(memory_mb)],
                pass_fds=(child.fileno(),),
                env=kernel_env(),
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a group of its own, ended whole (kill)
            )  # fmt: skip
        finally:
            child.close()
        return LocalProcess(proc, Connection(parent.detach()))


def kernel_env() -> dict[str, str]:
    """The app's environment without what a kernel must not see (keys, passwords, tokens)."""
    return {
        k: v
        for k, v in os.environ.items()
        if (k in _KEPT or k.startswith(_KEPT_PREFIXES)) and not any(w in k for w in _SECRET_WORDS)
    }
