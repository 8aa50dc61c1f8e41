"""Chainlit's folder of uploaded files, one per process, so two processes never delete each other's.

Chainlit keeps every session's uploads under `<app root>/.files/<session id>/` and removes the
whole `.files` folder when its process stops: with two processes started in one folder (two
workers behind a balancer, a second instance on another port), stopping one deleted the files
the other's users had just uploaded. Here each process gets its own `.files/proc-<pid>-<random>/`
(Chainlit's module-level FILES_DIRECTORY, read where the sessions and the shutdown use it) and
holds an exclusive lock on a file inside it while it runs. At start, a sibling whose lock can be
taken belongs to no live process (one killed before it could clean up) and is removed; a locked
one is never touched. Chainlit's shutdown then removes only this process's folder.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import IO

PREFIX = "proc-"
LOCK = ".owner.lock"
_held: IO[str] | None = None  # kept open (and locked) for the life of the process


def install() -> Path:
    """Point Chainlit at this process's own files folder; return it."""
    import chainlit.config
    import chainlit.server

    base = Path(chainlit.config.FILES_DIRECTORY)
    if base.name.startswith(PREFIX):  # `chainlit run -w` imports the app module again
        return base
    base.mkdir(parents=True, exist_ok=True)
    remove_abandoned(base)
    # locked before it gets a name another process looks at: made aside, then renamed
    fresh = Path(tempfile.mkdtemp(prefix=".new-", dir=base))
    global _held
    _held = open(fresh / LOCK, "w")  # noqa: SIM115 - held open until the process ends
    fcntl.flock(_held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    own = base / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    fresh.rename(own)
    chainlit.config.FILES_DIRECTORY = own
    chainlit.server.FILES_DIRECTORY = own  # type: ignore[attr-defined]
    return own


def remove_abandoned(base: Path) -> list[Path]:
    """Remove the process folders under `base` whose owner is gone (their lock is free)."""
    removed = []
    for folder in base.glob(PREFIX + "*"):
        if folder.is_symlink() or not folder.is_dir():
            continue
        try:
            with open(folder / LOCK) as handle:  # no lock file: not ours to judge
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while the owner runs
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        except OSError:
            continue
    return removed
