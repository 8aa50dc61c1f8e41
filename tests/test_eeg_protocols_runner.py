"""The fold runner (eeg/protocols/runner.py): the same results in the same order in-process, on two
local loky workers and on a real dask.distributed cluster (a scheduler and two worker processes
started here), progress after each task, Stop cancelling the outstanding work (through the
study's real Stop path too), and clear messages for a bad or unreachable scheduler."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.protocols.runner import (
    SCHEDULER_ENV,
    WORKERS_ENV,
    Cancelled,
    SchedulerUnavailable,
    run_tasks,
)

ROOT = Path(__file__).resolve().parents[1]
ITEMS = [(seed, fold) for seed in (1, 2, 3) for fold in range(4)]


def fit_fold(item: tuple[int, int]) -> dict[str, Any]:
    """Real numeric work: an LDA fitted on one fold of a seeded two-class data set."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    seed, fold = item
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 60)
    X = rng.standard_normal((120, 8)) + y[:, None] * np.linspace(0.1, 0.8, 8)
    test = np.zeros(120, bool)
    test[fold::4] = True
    lda = LinearDiscriminantAnalysis().fit(X[~test], y[~test])
    return {
        "item": item,
        "score": lda.score(X[test], y[test]),
        "coef": lda.coef_,
        "pid": os.getpid(),
    }


def until(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    """Wait for `condition` (a bound on a hang, never the outcome)."""
    end = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def gated(item: tuple[str, str, int]) -> int:
    """`block`: note its pid, then wait for `release` (a task Stop must cancel). `after`: wait
    until task 0 has started, then finish (so Stop comes while task 0 still runs)."""
    kind, folder, index = item
    here = Path(folder)
    (here / f"started-{index}").write_text(str(os.getpid()))
    if kind == "block":
        until(lambda: (here / "release").exists(), "release", limit=120)
    elif kind == "after":
        until(lambda: (here / "started-0").exists(), "task 0 to start")
    elif kind == "go":
        until(lambda: (here / "go").exists(), "go")
    (here / f"finished-{index}").write_text("")
    return index


def band_power(item: tuple[np.ndarray, int] | dict[str, Any]) -> float:
    """A statistic of one slice of a large shared array (memory-mapped for local workers)."""
    X, k = (item["X"], item["k"]) if isinstance(item, dict) else item
    return float(np.log(np.var(X[k::4], axis=-1)).mean())


def bad_fold(item: tuple[int, int]) -> dict[str, Any]:
    if item == ITEMS[5]:
        raise ValueError(f"fold {item} has one class only")
    return fit_fold(item)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def expected() -> list[dict[str, Any]]:
    return [fit_fold(item) for item in ITEMS]


def same(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert [g["item"] for g in got] == [w["item"] for w in want]  # in the order of the items
    for g, w in zip(got, want, strict=True):
        assert g["score"] == w["score"]
        np.testing.assert_array_equal(g["coef"], w["coef"])


@pytest.fixture(autouse=True)
def _no_operator_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout


def dask(*args: str, folder: Path) -> subprocess.Popen:
    """`dask scheduler|worker ...` in a process of its own, importing this checkout's code."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])}
    command = [str(Path(sys.executable).parent / "dask"), *args, "--no-dashboard"]
    return subprocess.Popen(
        command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def scheduler(folder: Path) -> tuple[subprocess.Popen, str]:
    """A scheduler on a free port, and its address as it writes it to its scheduler file."""
    file = folder / "scheduler.json"
    proc = dask(
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--scheduler-file",
        str(file),
        folder=folder,
    )
    found: list[str] = []

    def written() -> bool:
        try:
            found.append(json.loads(file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            assert proc.poll() is None, "the scheduler did not start"
        return bool(found)

    until(written, "the scheduler's address")
    return proc, found[0]


def end(procs: list[subprocess.Popen]) -> None:
    """Kill them: nothing here tests a graceful exit, and in the whole suite a worker given
    SIGTERM waited out all 30 s of a terminate-then-kill (two whole-suite runs, 25 Nov)."""
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real dask.distributed scheduler and two single-threaded worker processes."""
    from distributed import Client

    folder = tmp_path_factory.mktemp("dask")
    proc, address = scheduler(folder)
    procs = [proc]
    try:
        worker = ("worker", address, "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1")
        procs += [dask(*worker, folder=folder) for _ in range(2)]
        with Client(address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        end(procs[::-1])


@pytest.mark.parametrize("workers", [1, 2])
def test_one_and_two_local_workers_give_the_same_results_with_progress_per_task(
    workers: int,
) -> None:
    calls: list[tuple[int, int]] = []
    got = run_tasks(fit_fold, ITEMS, workers=workers, progress=lambda d, t: calls.append((d, t)))
    same(got, expected())
    assert calls == [(k, len(ITEMS)) for k in range(1, len(ITEMS) + 1)]
    pids = {g["pid"] for g in got}
    assert (pids == {os.getpid()}) if workers == 1 else (os.getpid() not in pids)


def test_large_arrays_shared_by_items_give_the_same_results_on_local_workers() -> None:
    X = np.random.default_rng(7).standard_normal((40, 8, 1000))  # 2.5 MB, carried by each item
    items = [(X, k) for k in range(4)]
    want = [band_power(item) for item in items]
    assert run_tasks(band_power, items, workers=2) == want
    as_dicts = [{"X": X, "k": k} for k in range(4)]
    assert run_tasks(band_power, as_dicts, workers=2) == want


def test_an_in_process_run_holds_blas_to_one_thread_and_gives_the_threads_back() -> None:
    """Two BLAS threads spin against each other on a fold's small matrices (bench/README: 10.3 s
    instead of 6.3 s): a run in the app's process holds BLAS to one thread and restores it
    after, also when runs from two conversations overlap and end in either order."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "blas_probe.py")], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["before"] == [2, 2] and seen["after"] == [2, 2]
    assert seen["during"] == [[1, 1], [1, 1]]
    for order in ("first_ends_first", "second_ends_first"):
        assert seen[order] == {
            "ended": [[1, 1]],
            "other_still_running": [1, 1],  # the run still going keeps its one thread
            "other": [[1, 1]],
            "both_done": [2, 2],  # given back once both have ended
        }, order


def test_the_workers_variable_picks_local_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, "2")
    got = run_tasks(fit_fold, ITEMS)
    same(got, expected())
    assert os.getpid() not in {g["pid"] for g in got}
    monkeypatch.setenv(WORKERS_ENV, "0")
    with pytest.raises(ToolException) as err:
        run_tasks(fit_fold, ITEMS)
    assert WORKERS_ENV in str(err.value) and "1 to 64" in str(err.value)


@pytest.mark.slow  # starts a Dask scheduler and two worker processes
def test_a_dask_cluster_gives_the_same_results_as_local_runs(
    cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[int, int]] = []
    got = run_tasks(fit_fold, ITEMS, scheduler=cluster, progress=lambda d, t: calls.append((d, t)))
    same(got, expected())
    assert calls == [(k, len(ITEMS)) for k in range(1, len(ITEMS) + 1)]
    assert len({g["pid"] for g in got} - {os.getpid()}) == 2  # both worker processes took part
    monkeypatch.setenv(SCHEDULER_ENV, cluster)  # the operator's variable does the same
    same(run_tasks(fit_fold, ITEMS, workers=1), expected())


@pytest.mark.slow  # starts a Dask scheduler and two worker processes
def test_a_failing_item_raises_its_own_error_whatever_runs_it(cluster: str) -> None:
    for where in ({"workers": 1}, {"workers": 2}, {"scheduler": cluster}):
        with pytest.raises(ValueError, match=r"fold \(2, 1\) has one class only"):
            run_tasks(bad_fold, ITEMS, **where)  # type: ignore[arg-type]


def test_stop_in_process_runs_no_further_item(tmp_path: Path) -> None:
    calls: list[int] = []
    items = [("quick", str(tmp_path), i) for i in range(4)]
    with pytest.raises(Cancelled) as err:
        run_tasks(
            gated, items, progress=lambda d, t: calls.append(d), should_stop=lambda: bool(calls)
        )
    assert (err.value.done, err.value.total) == (1, 4)
    assert sorted(p.name for p in tmp_path.glob("started-*")) == ["started-0"]


def test_stop_kills_the_local_workers_still_running_a_task(tmp_path: Path) -> None:
    done: list[int] = []
    items = [("block", str(tmp_path), 0), ("after", str(tmp_path), 1)]
    try:
        with pytest.raises(Cancelled) as err:
            run_tasks(
                gated,
                items,
                workers=2,
                progress=lambda d, t: done.append(d),
                should_stop=lambda: bool(done),
            )
        assert (err.value.done, err.value.total) == (1, 2)
        pid = int((tmp_path / "started-0").read_text())
        until(lambda: gone(pid), "the blocked task's worker to be killed")
        assert not (tmp_path / "finished-0").exists()
        # the pool works again afterwards
        same(run_tasks(fit_fold, ITEMS, workers=2), expected())
    finally:
        (tmp_path / "release").write_text("")


@pytest.mark.slow  # starts a Dask scheduler and two worker processes
def test_stop_cancels_the_outstanding_tasks_on_the_dask_cluster(
    cluster: str, tmp_path: Path
) -> None:
    from distributed import Client

    done: list[int] = []
    items = [("block", str(tmp_path), 0), ("after", str(tmp_path), 1)]
    try:
        with pytest.raises(Cancelled) as err:
            run_tasks(
                gated,
                items,
                scheduler=cluster,
                progress=lambda d, t: done.append(d),
                should_stop=lambda: bool(done),
            )
        assert (err.value.done, err.value.total) == (1, 2)
        with Client(cluster, set_as_default=False) as client:

            def gated_tasks(dask_scheduler: Any) -> list[str]:
                return [str(k) for k in dask_scheduler.tasks if "gated" in str(k)]

            until(
                lambda: client.run_on_scheduler(gated_tasks) == [],
                "the scheduler to drop the tasks",
            )
        assert not (tmp_path / "finished-0").exists()
    finally:
        (tmp_path / "release").write_text("")  # the worker's thread ends (Dask cannot kill it)


async def test_the_apps_stop_reaches_the_runner_through_the_study(tmp_path: Path) -> None:
    """Stop cancels the tool's task; Study.run sets the op's stop flag, which the op hands to
    run_tasks as should_stop: the next completed task ends the run and the rest is killed."""
    from brainchat.eeg.study.study import Study

    outcome: list[BaseException] = []
    items = [("go", str(tmp_path), 0), ("block", str(tmp_path), 1)]

    def op(state: Any, stop: threading.Event) -> tuple[Any, str]:
        try:
            run_tasks(gated, items, workers=2, should_stop=stop.is_set)
        except Cancelled as exc:
            outcome.append(exc)
            raise ToolException("cross-validation stopped") from None
        return state, "finished"

    study = Study(tmp_path)
    run = asyncio.ensure_future(study.run(op))
    try:
        await asyncio.to_thread(until, lambda: len(list(tmp_path.glob("started-*"))) == 2, "both")
        run.cancel()  # what the app's Stop does to a running tool call
        with pytest.raises(asyncio.CancelledError):
            await run
        (tmp_path / "go").write_text("")  # task 0 completes after Stop: the runner sees the flag
        await asyncio.wait_for(study.settled(), 60)
        assert len(outcome) == 1 and (outcome[0].done, outcome[0].total) == (1, 2)
        pid = int((tmp_path / "started-1").read_text())
        await asyncio.to_thread(until, lambda: gone(pid), "the blocked task's worker to be killed")
    finally:
        (tmp_path / "release").write_text("")


def test_a_scheduler_lost_mid_run_gives_a_clear_message(tmp_path: Path) -> None:
    proc, address = scheduler(tmp_path)  # no workers: the tasks wait on it
    try:

        def stop_the_scheduler() -> bool:  # polled while the tasks wait
            if proc.poll() is None:
                proc.kill()
            return False

        with pytest.raises(SchedulerUnavailable) as err:
            run_tasks(fit_fold, ITEMS, scheduler=address, should_stop=stop_the_scheduler)
    finally:
        end([proc])
    message = str(err.value)
    assert SCHEDULER_ENV in message and "stopped mid-run" in message and "unset" in message


def test_a_dead_scheduler_gives_a_clear_message_naming_the_variable() -> None:
    import dask

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        with pytest.raises(SchedulerUnavailable) as err:
            run_tasks(fit_fold, ITEMS, scheduler=f"tcp://127.0.0.1:{port}")
    message = str(err.value)
    assert SCHEDULER_ENV in message and f"tcp://127.0.0.1:{port}" in message
    assert "dask scheduler" in message and "unset" in message and "Traceback" not in message


@pytest.mark.parametrize(
    "bad", ["localhost:8786", "http://host:8786", "tcp://host", "tcp://host:99999", "tcp://h:1/x"]
)
def test_a_malformed_scheduler_variable_is_named_with_the_form_expected(
    bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCHEDULER_ENV, bad)
    with pytest.raises(ToolException) as err:
        run_tasks(fit_fold, ITEMS)
    assert SCHEDULER_ENV in str(err.value) and "tcp://host:port" in str(err.value)


def test_a_scheduler_url_with_credentials_is_never_repeated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://alice:hunter2-Secret@cluster.lab:8786")
    with pytest.raises(ToolException) as err:
        run_tasks(fit_fold, ITEMS)
    message = str(err.value)
    assert SCHEDULER_ENV in message and "hunter2" not in message and "alice" not in message
    assert "no user or password" in message


def test_the_scheduler_is_read_from_the_env_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"{SCHEDULER_ENV}=not-an-address\n")
    with pytest.raises(ToolException, match=SCHEDULER_ENV):
        run_tasks(fit_fold, ITEMS)


async def test_step_progress_titles_the_running_tools_step_fold_by_fold() -> None:
    from brainchat.eeg.protocols.runner import step_progress
    from brainchat.events import EventQueue, ToolProgress, set_tool_call, unbind
    from brainchat.ui.step_text import progress_title

    events = EventQueue()
    token = events.bind()
    set_tool_call("call-1", "cross_validate")
    try:
        run_tasks(fit_fold, ITEMS[:3], progress=step_progress("fold"))
    finally:
        unbind(token)
    shown = []
    while not events.queue.empty():
        event = events.queue.get_nowait()
        assert isinstance(event, ToolProgress) and event.call_id == "call-1"
        shown.append(progress_title(event.name, event.message, event.data))
    assert shown == [f"cross_validate · fold {k}/3" for k in (1, 2, 3)]


def stop_from_call(n: int) -> tuple[Callable[[], bool], list[int]]:
    """A should_stop that says True from its n-th call on, and the list of its calls."""
    calls: list[int] = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) >= n

    return stop, calls


@pytest.mark.parametrize("pipeline, extra", [("csp_lda", {"permutations": 1000}),
                                             ("eegnet", {"params": {"epochs": 500}})])  # fmt: skip
def test_stop_ends_an_in_process_item_inside_its_permutations_or_its_training(
    pipeline: str, extra: dict[str, Any]
) -> None:
    """A fold with 1,000 permutations (or a network's 500 epochs) is one work item: Stop must
    end it at its next permutation (batch), not after all of them (the runner checks between
    items too, but one item can run for minutes)."""
    from brainchat.eeg.protocols.folds import FoldTask, run_fold

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 4, 128)), np.repeat([0, 1], 20)
    task = FoldTask(pipeline, X, y, np.arange(0, 40, 2), np.arange(1, 40, 2), 128.0, 1, 0,
                    **extra)  # fmt: skip
    stop, calls = stop_from_call(2)  # the first check (before the item) says go on
    with pytest.raises(Cancelled) as err:
        run_tasks(run_fold, [task, task], should_stop=stop)
    assert err.value.done == 0  # ended inside the first item, not after it
