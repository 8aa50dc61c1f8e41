"""Peak memory of a cross-validation against the epoch data it runs on, beside MOABB's (#38).

The project's synthetic motor-imagery set as a MOABB dataset (no download), N subjects x 288
trials, one session, through MOABB's LeftRightImagery paradigm (8-32 Hz). Each measurement runs
in a fresh process: it imports and warms everything, resets the kernel's peak-RSS mark
(/proc/self/clear_refs), then
- brainchat: loads the epoch array (X, as the study holds it) and cross-validates it;
- MOABB: runs its evaluation, which reads the same recordings through the paradigm itself;
and reports the peak RSS above the mark, divided by the epoch array's bytes (1.0: the data
itself). Targets (brainchat): cross_subject <= 2x, within_session <= 1.5x. Run:

    .venv/bin/python bench/crossval_memory.py [--subjects 2 4 9] [--pipelines csp_lda ts_lr]

Prints one row per protocol, subject count and pipeline: data MB, brainchat's peak and ratio,
MOABB's peak and ratio, and both mean scores (equal: same folds, same pipelines).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("MNE_LOGGING_LEVEL", "error")

PROTOCOLS = ("within_session", "cross_subject")
MB = 1024 * 1024


def peak_mark() -> int:
    """Reset the process's peak RSS to its current RSS; return that (bytes)."""
    Path("/proc/self/clear_refs").write_text("5")
    return peak()


def peak() -> int:
    """The process's peak RSS since the last mark (VmHWM, bytes)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(args: argparse.Namespace) -> None:
    """One measurement (in its own process): prints a JSON line."""
    import numpy as np

    from brainchat.eeg.protocols import moabb_ref

    warnings.filterwarnings("ignore")
    dataset = moabb_ref.synthetic_dataset(subjects=args.subjects, sessions=1, trials=args.trials)
    if args.side == "moabb":
        import moabb

        moabb.set_log_level("error")
        pipes = {args.pipeline: moabb_ref.reference_pipelines(22)[args.pipeline]}
        moabb_ref.moabb_scores("within_session", moabb_ref.synthetic_dataset(2, 1, 20), pipes)
        base = peak_mark()
        scores = moabb_ref.moabb_scores(args.protocol, dataset, pipes, 0)
        used = peak() - base
        mean = float(np.mean(list(scores.values())))
    else:
        from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays

        data = np.load(args.data)
        warm = np.random.default_rng(0).standard_normal((40, 22, 100))
        cross_validate_arrays(
            CVConfig("within_session", (args.pipeline,), 2), warm, np.arange(40) % 2,
            np.zeros(40), np.zeros(40), 250.0,
        )  # fmt: skip
        base = peak_mark()
        X = np.load(args.data.replace(".npz", ".X.npy"))
        res = cross_validate_arrays(
            CVConfig(args.protocol, (args.pipeline,), 5, 0, 0), X, data["y"], data["subjects"],
            data["sessions"], float(data["sfreq"]),
        )  # fmt: skip
        used = peak() - base
        mean = res.summaries[0].mean
    print(json.dumps({"peak": used, "mean": mean}))


def arrays(subjects: int, trials: int, folder: Path) -> tuple[str, int]:
    """The paradigm's epoch array for `subjects` subjects, saved for the children; its bytes."""
    import numpy as np

    from brainchat.eeg.protocols import moabb_ref

    dataset = moabb_ref.synthetic_dataset(subjects=subjects, sessions=1, trials=trials)
    X, y, subj, sess, _ = moabb_ref.paradigm_arrays(dataset, 250.0)
    path = folder / f"s{subjects}.npz"
    np.save(folder / f"s{subjects}.X.npy", X)
    np.savez(path, y=y, subjects=subj.astype(str), sessions=sess.astype(str), sfreq=250.0)
    return str(path), X.nbytes


def measure(side: str, protocol: str, pipeline: str, subjects: int, trials: int, data: str) -> dict:
    cmd = [sys.executable, __file__, "--child", side, "--protocol", protocol, "--pipeline",
           pipeline, "--n", str(subjects), "--trials", str(trials), "--data", data]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, nargs="+", default=[2, 4, 9])
    parser.add_argument("--trials", type=int, default=288)
    parser.add_argument("--pipelines", nargs="+", default=["csp_lda", "ts_lr"])
    parser.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    parser.add_argument("--child", choices=["brainchat", "moabb"])
    parser.add_argument("--protocol", default="within_session")
    parser.add_argument("--pipeline", default="csp_lda")
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--data", default="")
    args = parser.parse_args()
    if args.child:
        args.side, args.subjects = args.child, args.n
        child(args)
        return 0
    print("protocol | subjects | pipeline | data MB | brainchat peak MB (x data) | "
          "MOABB peak MB (x data) | mean score brainchat / MOABB")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.subjects:
            data, nbytes = arrays(n, args.trials, Path(tmp))
            for protocol in args.protocols:
                for pipeline in args.pipelines:
                    ours = measure("brainchat", protocol, pipeline, n, args.trials, data)
                    theirs = measure("moabb", protocol, pipeline, n, args.trials, data)
                    print(
                        f"{protocol} | {n} | {pipeline} | {nbytes / MB:.0f} | "
                        f"{ours['peak'] / MB:.0f} ({ours['peak'] / nbytes:.2f}x) | "
                        f"{theirs['peak'] / MB:.0f} ({theirs['peak'] / nbytes:.2f}x) | "
                        f"{ours['mean']:.4f} / {theirs['mean']:.4f}",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
