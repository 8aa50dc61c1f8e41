"""Run independent work items (cross-validation folds x pipelines) on local processes or a Dask
cluster, with the same results in the same order whatever runs them.

- `workers` 1 (the default, `BRAINCHAT_CV_WORKERS`): one after the other in the calling thread,
  with BLAS held to one thread meanwhile (`one_blas_thread`).
- `workers` n > 1: joblib's loky processes (joblib memory-maps large arrays for them and gives
  each worker 1/n of the BLAS threads); one such run at a time in the app's process, since
  loky's pool is shared by the process and a stopped run kills its workers.
- `scheduler` (`BRAINCHAT_DASK_SCHEDULER`, `tcp://host:port`): a dask.distributed cluster via a
  Client; its workers import `fn` by name, so they need brainchat installed.

Each item carries its own seed, so an item's result never depends on where it ran. `progress`
is called (done, total) from the calling thread after each finished item; `should_stop` is
polled between completions (and while waiting on a Dask cluster): when it says True the
outstanding items are cancelled (loky's workers are killed; Dask's futures are cancelled) and
`Cancelled` is raised. A study step passes its stop flag: `should_stop=stop.is_set` (Study.run
sets it when the user presses Stop), and `progress=step_progress("fold")` titles the step
`cross_validate · fold 3/10`.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import Any, TypeVar

from langchain_core.tools import ToolException

from brainchat import redact
from brainchat.events import ToolProgress, current_tool_call, emit
from brainchat.settings.declared import ComputeVars
from brainchat.settings.errors import ConfigError
from brainchat.settings.fields import check, env_name

T = TypeVar("T")
R = TypeVar("R")

WORKERS_ENV = env_name(ComputeVars, "cv_workers")
SCHEDULER_ENV = env_name(ComputeVars, "dask_scheduler")
POLL = 0.25  # seconds between should_stop checks while a Dask cluster computes
ADDRESS = re.compile(r"^(tcp|tls)://([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$")
ADDRESS_ALLOWED = "expected tcp://host:port or tls://host:port (the address the scheduler prints)"

# loky's worker pool is one per process: one local parallel run at a time (others wait their turn)
_LOCAL_TURN = threading.Lock()


class Stopped(Exception):
    """Raised inside a work item that saw `current_stop()` set (the run turns it into
    `Cancelled`)."""


class _Flag:
    """The run's `should_stop` as a threading.Event's `is_set`, for code that takes a flag."""

    def __init__(self, check: Callable[[], bool]) -> None:
        self._check = check

    def is_set(self) -> bool:
        return bool(self._check())


_ITEM = threading.local()  # the stop of the in-process run under way in this thread
_NEVER = _Flag(lambda: False)


def current_stop() -> _Flag:
    """The stop flag of the in-process run this work item is part of, for a long item to check
    between its own parts (permutations, a network's batches); never set elsewhere: loky's
    workers are killed and Dask's futures cancelled instead."""
    return getattr(_ITEM, "flag", None) or _NEVER


class Cancelled(Exception):
    """Stop was pressed: outstanding tasks were cancelled; `done` holds the finished count."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"stopped after {done} of {total} tasks; the others were cancelled")
        self.done, self.total = done, total


class SchedulerUnavailable(ToolException):
    """The Dask cluster could not be reached or was lost; the message says what to do."""


def run_tasks(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[R]:
    """fn(item) for every item, results in the order of `items` (see the module's docstring).

    Raises `Cancelled` when `should_stop` says so, ToolException for a bad BRAINCHAT_CV_WORKERS
    or BRAINCHAT_DASK_SCHEDULER (`SchedulerUnavailable` when the cluster cannot be reached),
    and whatever `fn` raised for an item (the other items are then cancelled)."""
    items = list(items)
    report = progress or (lambda done, total: None)
    stop = should_stop or (lambda: False)
    address = scheduler_address(scheduler)
    if not items:
        return []
    if address is not None:
        return _on_dask(fn, items, address, report, stop)
    n = min(local_workers(workers), len(items))
    if n == 1:
        return _in_process(fn, items, report, stop)
    return _on_loky(fn, items, n, report, stop)


def local_workers(workers: int | None = None) -> int:
    """`workers`, or BRAINCHAT_CV_WORKERS (1 when unset)."""
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a whole number from 1, not {workers!r}")
        return workers
    raw = _env().get(WORKERS_ENV, "").strip()
    if not raw:
        return int(ComputeVars.model_fields["cv_workers"].default)
    try:
        return int(check(ComputeVars, "cv_workers", raw))
    except ConfigError as exc:
        raise ToolException(f"{exc}; the operator sets it (.env or the environment)") from None


def scheduler_address(scheduler: str | None = None) -> str | None:
    """The Dask scheduler's address (`scheduler`, else BRAINCHAT_DASK_SCHEDULER), checked; None:
    run locally. A bad form is a ToolException naming the variable; a URL with credentials is
    never repeated."""
    raw = scheduler if scheduler is not None else _env().get(SCHEDULER_ENV)
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if ADDRESS.match(text) and 0 < int(text.rsplit(":", 1)[1]) < 65536:
        return text
    secret = "@" in text or "?" in text or redact.looks_secret(text)
    why = ADDRESS_ALLOWED + (
        "; an address carries no user or password (give the cluster TLS in Dask's own "
        "configuration instead)"
        if secret
        else ""
    )
    raise ToolException(str(ConfigError(SCHEDULER_ENV, text, why, secret=secret)))


def step_progress(unit: str = "task") -> Callable[[int, int], None]:
    """A `progress` that shows `unit done/total` in the running tool's step title (the UI's
    `tool · fold 3/10`) and the CLI's progress lines; nothing outside a tool call."""
    call_id, name = current_tool_call()

    def report(done: int, total: int) -> None:
        emit(
            ToolProgress(
                call_id=call_id,
                name=name,
                message=f"{unit} {done}/{total}",
                fraction=done / total if total else None,
                data={"done": done, "total": total, "unit": unit},
            )
        )

    return report


def _env() -> dict[str, str]:
    from brainchat.settings.load import read_env

    return read_env()


def _in_process(
    fn: Callable[[T], R], items: list[T], report: Callable[[int, int], None], stop: Callable
) -> list[R]:
    results: list[R] = []
    _ITEM.flag = _Flag(stop)
    try:
        with one_blas_thread():
            for item in items:
                if stop():
                    raise Cancelled(len(results), len(items))
                try:
                    results.append(fn(item))
                except Exception:
                    if stop():  # the item ended early because it saw the stop
                        raise Cancelled(len(results), len(items)) from None
                    raise
                report(len(results), len(items))
    finally:
        _ITEM.flag = None
    return results


class _SharedLimit:
    """BLAS held to one thread while any in-process run is under way, and given back when the
    last one ends (runs from several conversations overlap: each restoring its own start would
    leave the limit on, or lift it under a run still going)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._limiter: Any = None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._users == 0:
                # threadpoolctl limits the libraries loaded: numpy's and scipy's OpenBLAS first
                import numpy  # noqa: F401
                import scipy.linalg  # noqa: F401
                from threadpoolctl import threadpool_limits

                self._limiter = threadpool_limits(limits=1, user_api="blas")
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._limiter is not None:
                    self._limiter.restore_original_limits()
                    self._limiter = None


# A fold's matrices are small (22 channels x a few hundred trials): OpenBLAS's threads per core
# spin against each other on them. bench/crossval_workers.py, 9 x 288 trials x 5 folds of CSP+LDA
# on 2 quiet cores: 10.31 s wall and 20.33 s CPU with 2 BLAS threads, 6.34 s and 6.43 s with one.
# Loky's workers get 1/n of the threads from joblib already; this is the in-process run's.
# OpenBLAS (0.3.30/0.3.31) ignores a count set from another thread once the main thread has
# set one: the app's main thread (the event loop) never sets one, its study threads do.
one_blas_thread = _SharedLimit()


def _indexed(fn: Callable[[T], R], index: int, item: T) -> tuple[int, R]:
    return index, fn(item)


def _on_loky(
    fn: Callable[[T], R],
    items: list[T],
    n: int,
    report: Callable[[int, int], None],
    stop: Callable[[], bool],
) -> list[R]:
    from joblib import Parallel, delayed

    while not _LOCAL_TURN.acquire(timeout=POLL):
        if stop():
            raise Cancelled(0, len(items))
    try:
        results: dict[int, R] = {}
        parallel = Parallel(n_jobs=n, backend="loky", return_as="generator_unordered")
        outputs = parallel(delayed(_indexed)(fn, i, item) for i, item in enumerate(items))
        try:
            for index, result in outputs:
                results[index] = result
                report(len(results), len(items))
                if len(results) < len(items) and stop():
                    raise Cancelled(len(results), len(items))
        finally:
            _close(outputs)
        return [results[i] for i in range(len(items))]
    finally:
        _LOCAL_TURN.release()


def _close(outputs: Iterator[Any]) -> None:
    """End joblib's generator: unfinished tasks are aborted (their workers killed), quietly."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "N tasks ... have been cancelled": that was the point
        close = getattr(outputs, "close", None)
        if close is not None:
            close()


def _on_dask(
    fn: Callable[[T], R],
    items: list[T],
    address: str,
    report: Callable[[int, int], None],
    stop: Callable[[], bool],
) -> list[R]:
    client = _connect(address)
    try:
        futures = client.map(fn, items, pure=False)
        try:
            return _gather(client, futures, address, report, stop)
        finally:
            client.cancel([f for f in futures if not f.done()])
    finally:
        client.close()


def _connect(address: str) -> Any:
    from distributed import Client

    try:
        return Client(address, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerUnavailable(
            f"the Dask scheduler at {SCHEDULER_ENV}={redact.mask_url(address)} could not be "
            f"reached ({type(exc).__name__}). Start it and its workers (`dask scheduler`, "
            f"`dask worker {redact.mask_url(address)}`), or unset {SCHEDULER_ENV} to run on "
            "this machine"
        ) from None


def _gather(
    client: Any,
    futures: list[Any],
    address: str,
    report: Callable[[int, int], None],
    stop: Callable[[], bool],
) -> list[Any]:
    from distributed import wait

    index = {f.key: i for i, f in enumerate(futures)}
    results: dict[int, Any] = {}
    pending = set(futures)
    while pending:
        if stop():
            raise Cancelled(len(results), len(futures))
        try:
            with client.as_current():  # wait() uses the current client, never a global one
                finished, pending = wait(pending, timeout=POLL, return_when="FIRST_COMPLETED")
        except TimeoutError:
            continue
        except (OSError, CancelledError):  # the scheduler went away: the futures are cancelled
            raise _lost(address, "the connection to the scheduler was lost") from None
        for future in finished:
            if future.status == "error":
                future.result()  # raises what fn raised for that item
            if future.status != "finished":
                raise _lost(address, f"a task was {future.status}")
            results[index[future.key]] = future.result()
            report(len(results), len(futures))
    return [results[i] for i in range(len(futures))]


def _lost(address: str, what: str) -> SchedulerUnavailable:
    return SchedulerUnavailable(
        f"the Dask cluster at {SCHEDULER_ENV}={redact.mask_url(address)} stopped mid-run "
        f"({what}). Check its scheduler and workers and run again, or unset {SCHEDULER_ENV} to "
        "run on this machine"
    )
