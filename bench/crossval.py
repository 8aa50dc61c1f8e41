"""brainchat's within_session cross-validation vs MOABB's WithinSessionEvaluation, same work.

The project's synthetic motor-imagery set wrapped as a MOABB dataset (no download): 9 subjects x
288 trials, 5-fold within-session, CSP+LDA and tangent space + LR. Both sides start from the raw
recordings and go through MOABB's LeftRightImagery paradigm (8-32 Hz, epochs); MOABB then runs
its evaluation with its own pipelines, brainchat its protocol with its own. Run:

    .venv/bin/python bench/crossval.py [--subjects 9] [--trials 288] [--folds 5] [--seed 0]

Prints per-subject scores side by side (they must agree within 0.01), both wall times, their
ratio (target: brainchat / MOABB <= 1.0) and each side's CPU seconds (user + sys, less noisy than
wall time on shared cores). Like with like: both sides run in this one process, one after the
other, with the same BLAS threads (--blas-threads limits both; default: the process's own), MOABB
with its default n_jobs=1 and brainchat with its default one worker (BRAINCHAT_CV_WORKERS
changes that; the workers' CPU is then counted too, and the comparison is no longer like with
like).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("MNE_LOGGING_LEVEL", "error")

import psutil  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

from brainchat.eeg.protocols import moabb_ref  # noqa: E402
from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays  # noqa: E402

PIPELINES = ("csp_lda", "ts_lr")


def warm_up() -> None:
    """Import and run every library once, so neither side pays first-use costs."""
    import numpy as np

    from brainchat.eeg.protocols.pipelines import build

    X = np.random.default_rng(0).standard_normal((20, 22, 100))
    y = np.arange(20) % 2
    for name in PIPELINES:
        build(name, 22, 250.0).fit(X, y)
        moabb_ref.reference_pipelines(22)[name].fit(X, y)
    import moabb.evaluations  # noqa: F401


def cpu_seconds() -> float:
    """User + system CPU of this process and its live children (loky workers, if any)."""
    me = psutil.Process()
    total = 0.0
    for proc in (me, *me.children(recursive=True)):
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def blas_threads() -> str:
    return ", ".join(
        f"{i['internal_api']} {i['num_threads']}"
        for i in threadpool_info()
        if i["user_api"] == "blas"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=9)
    parser.add_argument("--trials", type=int, default=288)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="BLAS threads of both sides (same limit)"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import mne

    mne.set_log_level("error")
    warm_up()  # loads every BLAS library first: threadpool_limits limits the loaded ones
    with threadpool_limits(limits=args.blas_threads):
        return run(args)


def run(args: argparse.Namespace) -> int:
    dataset = moabb_ref.synthetic_dataset(
        args.subjects, 1, args.trials, seed=args.seed, effect_size=0.2
    )

    load_before = os.getloadavg()[0]
    cpu, start = cpu_seconds(), time.perf_counter()
    theirs = moabb_ref.moabb_within_session(dataset, moabb_ref.reference_pipelines(22), args.seed)
    moabb_wall, moabb_cpu = time.perf_counter() - start, cpu_seconds() - cpu

    cpu, start = cpu_seconds(), time.perf_counter()
    X, y, subjects, sessions, sfreq = moabb_ref.paradigm_arrays(dataset, 250.0)
    data_wall, data_cpu = time.perf_counter() - start, cpu_seconds() - cpu
    cfg = CVConfig("within_session", PIPELINES, args.folds, 0, args.seed)
    ours = cross_validate_arrays(cfg, X, y, subjects, sessions, sfreq)
    ours_wall, ours_cpu = time.perf_counter() - start, cpu_seconds() - cpu

    worst = 0.0
    print(f"{'subject':>8} {'pipeline':>8} {'brainchat':>10} {'MOABB':>10} {'diff':>8}")
    for s in ours.summaries:
        for (subject, session), score in sorted(
            s.per_session.items(), key=lambda kv: int(kv[0][0])
        ):
            ref = theirs[(s.pipeline, subject, session)]
            worst = max(worst, abs(score - ref))
            print(f"{subject:>8} {s.pipeline:>8} {score:10.4f} {ref:10.4f} {score - ref:8.4f}")
    n_fits = len(ours.records)
    print(
        f"\n{args.subjects} subjects x {args.trials} trials, {args.folds}-fold within-session, "
        f"{', '.join(PIPELINES)} ({n_fits} fits a side); max |diff| {worst:.4f} (target <= 0.01)"
    )
    workers = os.environ.get("BRAINCHAT_CV_WORKERS", "1")
    print(
        f"MOABB WithinSessionEvaluation: {moabb_wall:.2f} s wall, {moabb_cpu:.2f} s CPU "
        "(its data loading included; n_jobs=1)"
    )
    print(
        f"brainchat cross_validate:      {ours_wall:.2f} s wall, {ours_cpu:.2f} s CPU (data "
        f"{data_wall:.2f} s / {data_cpu:.2f} s CPU + folds {ours_wall - data_wall:.2f} s / "
        f"{ours_cpu - data_cpu:.2f} s CPU; workers={workers})"
    )
    like = "like with like" if workers == "1" else "NOT like with like: brainchat on workers"
    print(
        f"threads: both sides in this process, BLAS threads {blas_threads()} ({like}); "
        f"load average before {load_before:.2f}, after {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(
        f"ratio brainchat / MOABB: {ours_wall / moabb_wall:.2f} wall, "
        f"{ours_cpu / moabb_cpu:.2f} CPU (target <= 1.0)"
    )
    return 0 if worst <= 0.01 else 1


if __name__ == "__main__":
    raise SystemExit(main())
