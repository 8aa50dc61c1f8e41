"""Cross-validation on 1 vs N local workers (#24: speed-up with 2 workers >= 1.6 on 2 cores).

The work of a within-session 5-fold cross-validation of CSP+LDA (mne.decoding.CSP, sklearn LDA)
on 9 synthetic motor-imagery subjects x 288 trials (22 channels, 2 s at 250 Hz), one task per
subject x fold, run by brainchat's fold runner (`brainchat.eeg.protocols.runner.run_tasks`)
in-process (1 worker, as the app runs it: BLAS held to one thread while the folds run) and on
N loky processes (one BLAS thread each, from joblib). Each task carries its subject's arrays, as
the cross_validate tool's folds do. The scores must be identical; the script fails otherwise.
The same tasks in a plain loop with the BLAS libraries' default threads (one per core: what
the in-process run did before 27 Nov 2026) are timed too, for the record.

The N-worker run is timed with the pool already started (a warm-up run first; its time, the
cold start, is printed too): in the app the pool stays up between cross-validations.

    .venv/bin/python bench/crossval_workers.py               # 2 workers
    .venv/bin/python bench/crossval_workers.py --workers 2 --repeats 3

Prints the load average before and after: the speed-up needs the cores free.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
import psutil

from brainchat.eeg.protocols.runner import run_tasks

SUBJECTS, TRIALS, CHANNELS, SAMPLES, FOLDS = 9, 288, 22, 500, 5


def subject_data(subject: int) -> tuple[np.ndarray, np.ndarray]:
    """Two classes of trials whose variance differs on a few channels (an ERD-like contrast)."""
    rng = np.random.default_rng(1000 + subject)
    y = np.repeat([0, 1], TRIALS // 2)
    mixing = rng.standard_normal((CHANNELS, CHANNELS)) / np.sqrt(CHANNELS)
    sources = rng.standard_normal((TRIALS, CHANNELS, SAMPLES))
    sources *= rng.lognormal(0.0, 0.3, (TRIALS, CHANNELS, 1))  # trial-to-trial power changes
    sources[y == 1, :2] *= 1.25
    sources[y == 0, 2:4] *= 1.25
    return np.einsum("ij,tjs->tis", mixing, sources), y


def fold_task(item: tuple[int, int, np.ndarray, np.ndarray, int]) -> dict[str, Any]:
    """One fold: CSP+LDA fitted on the training trials, scored on the held-out ones."""
    import mne
    from mne.decoding import CSP
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline

    mne.set_log_level("ERROR")
    subject, fold, X, y, seed = item
    splits = StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(X, y)
    train, test = list(splits)[fold]
    pipe = make_pipeline(CSP(n_components=6, log=True), LinearDiscriminantAnalysis())
    pipe.fit(X[train], y[train])
    return {"subject": subject, "fold": fold, "score": float(pipe.score(X[test], y[test]))}


def spin(n: int) -> int:
    """Pure arithmetic in one core's registers and caches: what 2 processes can gain here at
    best (the machine's own ceiling, measured in the same run)."""
    total = 0
    for i in range(n):
        total = (total + i * i) % 1_000_003
    return total


def ceiling(workers: int) -> tuple[float, float]:
    """Wall seconds of 8 equal spins on 1 process, then on `workers` loky processes."""
    items = [3_000_000] * 8
    started = time.perf_counter()
    one = run_tasks(spin, items, workers=1)
    t1 = time.perf_counter() - started
    started = time.perf_counter()
    many = run_tasks(spin, items, workers=workers)
    assert one == many
    return t1, time.perf_counter() - started


def work() -> list[tuple[int, int, np.ndarray, np.ndarray, int]]:
    data = [subject_data(s) for s in range(SUBJECTS)]
    return [(s, f, *data[s], 42 + s) for s in range(SUBJECTS) for f in range(FOLDS)]


def cpu_seconds() -> float:
    """CPU time of this process and its live children (the loky workers)."""
    me = psutil.Process()
    procs = [me, *me.children(recursive=True)]
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def timed(items: list, workers: int) -> tuple[float, float, list[dict[str, Any]]]:
    """Wall and CPU seconds of one run (the pool's workers live on across runs)."""
    cpu, started = cpu_seconds(), time.perf_counter()
    out = run_tasks(fold_task, items, workers=workers)
    return time.perf_counter() - started, cpu_seconds() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1, help="timed runs each (the best)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    items = work()
    cold, _, _ = timed(items[: args.workers], args.workers)  # starts the pool, imports MNE there
    spins = [ceiling(args.workers) for _ in range(args.repeats)]
    runs: dict[int, list[tuple[float, float]]] = {0: [], 1: [], args.workers: []}
    scores = []
    for _ in range(args.repeats):
        t1, c1, one = timed(items, 1)
        cpu, started = cpu_seconds(), time.perf_counter()
        plain = [fold_task(item) for item in items]  # the libraries' default BLAS threads
        runs[0].append((time.perf_counter() - started, cpu_seconds() - cpu))
        tn, cn, many = timed(items, args.workers)
        runs[1].append((t1, c1))
        runs[args.workers].append((tn, cn))
        assert one == many == plain, "the scores differ between 1 and N workers"
        scores = one
    (t0, c0), (t1, c1), (tn, cn) = (min(runs[k]) for k in (0, 1, args.workers))
    mean = np.mean([r["score"] for r in scores])
    print(
        f"{SUBJECTS} subjects x {TRIALS} trials x {FOLDS} folds of CSP+LDA "
        f"({len(items)} tasks), mean accuracy {mean:.3f}, identical on both"
    )
    print(f"1 worker (in-process): {t1:6.2f} s wall, {c1:6.2f} s CPU (BLAS held to one thread)")
    print(f"  default BLAS threads:{t0:6.2f} s wall, {c0:6.2f} s CPU (a plain loop; before 27 Nov)")
    print(
        f"{args.workers} workers (loky):     {tn:6.2f} s wall, {cn:6.2f} s CPU (workers included)"
    )
    print(f"pool cold start (first run, {args.workers} tasks): {cold:.2f} s")
    print(
        f"speed-up: {t1 / tn:.2f} against 1 worker (target >= 1.6 with 2 workers on 2 free "
        f"cores); {t0 / tn:.2f} against the plain loop with the default BLAS threads"
    )
    s1, sn = min(spins, key=lambda r: r[1] / r[0])
    print(
        f"machine ceiling: pure arithmetic, 8 equal tasks, {s1:.2f} s on 1 process, {sn:.2f} s "
        f"on {args.workers}: speed-up {s1 / sn:.2f}; the cross-validation's "
        f"{t1 / tn:.2f} is {t1 / tn / (s1 / sn):.0%} of it"
    )
    print(f"cores: {os.cpu_count()}, load average before {load_before[0]:.2f}, ", end="")
    print(f"after {os.getloadavg()[0]:.2f} (1 min); on busy cores the wall times only say ", end="")
    print("how much CPU each run got: compare the CPU seconds (the work's own cost)")


if __name__ == "__main__":
    main()
