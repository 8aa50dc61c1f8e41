"""Run by test_eeg_protocols_runner in a process of its own (OPENBLAS_NUM_THREADS=2): in-process
fold runs from two conversations' threads, overlapping, and the BLAS thread counts they see.

Its own process, since OpenBLAS ignores a thread count set from another thread once the main
thread has set one (0.3.30/0.3.31, seen 27 Nov 2026): the app's main thread never sets one, and
a pytest worker's may have. Prints one JSON object."""

from __future__ import annotations

import json
import threading
from typing import Any

import scipy.linalg  # noqa: F401 - both OpenBLAS libraries loaded, as in a fold
from threadpoolctl import threadpool_info

from brainchat.eeg.protocols.runner import run_tasks


def blas(_item: object = None) -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def in_thread(fn: Any) -> Any:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join(60)
    return out[0]


seen: dict[str, Any] = {"before": in_thread(blas)}
seen["during"] = in_thread(lambda: run_tasks(blas, [0, 1], workers=1))
seen["after"] = in_thread(blas)


class Run:
    """An in-process run in a thread of its own that holds until `finish()`."""

    def __init__(self) -> None:
        self.inside, self.go, self.saw = threading.Event(), threading.Event(), []
        self.thread = threading.Thread(target=lambda: self.saw.append(run_tasks(self.task, [0])))
        self.thread.start()
        self.inside.wait(60)

    def task(self, _item: int) -> list[int]:
        self.inside.set()
        self.go.wait(60)
        return blas()

    def finish(self) -> list[list[int]]:
        self.go.set()
        self.thread.join(60)
        return self.saw[0]


for order in ("first_ends_first", "second_ends_first"):
    a = Run()
    b = Run()
    ending, other = (a, b) if order == "first_ends_first" else (b, a)
    seen[order] = {
        "ended": ending.finish(),
        "other_still_running": in_thread(blas),
        "other": other.finish(),
        "both_done": in_thread(blas),
    }
print(json.dumps(seen))
