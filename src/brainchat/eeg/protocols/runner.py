"""Run fold tasks. A trivial serial version (helper "cv"); the lead keeps helper "cvpar"'s
joblib/Dask one at merge, with exactly this signature (see notes/tasks/runner_api.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Cancelled(Exception):
    """Stop was pressed: outstanding tasks were cancelled; `done` holds the finished count."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"cancelled after {done} of {total} tasks")
        self.done = done
        self.total = total


def run_tasks(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[R]:
    """fn over items, in order, in this thread (workers and scheduler are ignored here)."""
    out: list[R] = []
    total = len(items)
    for item in items:
        if should_stop is not None and should_stop():
            raise Cancelled(len(out), total)
        out.append(fn(item))
        if progress is not None:
            progress(len(out), total)
    return out
