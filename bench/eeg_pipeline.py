"""Bench: load + filter + epoch + split of a demo set through the Study, against plain MNE.

    .venv/bin/python bench/eeg_pipeline.py [--subjects 9] [--trials 288] [--repeats 2]

Prints seconds for each and the ratio study/MNE (target: at most 1.1).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from pathlib import Path

import mne
import numpy as np


def direct_mne(paths: list[Path]) -> int:
    """The same pipeline written directly in MNE + scikit-learn, in the same order as the study
    (all recordings loaded, then filtered, then epoched: a session keeps its recordings)."""
    from sklearn.model_selection import train_test_split

    raws = [mne.io.read_raw_edf(path, preload=True, verbose="error") for path in paths]
    for raw in raws:
        raw.filter(8.0, 30.0, verbose="error")
    xs, ys, subjects = [], [], []
    for i, raw in enumerate(raws):
        events, event_id = mne.events_from_annotations(raw, verbose="error")
        epochs = mne.Epochs(raw, events, event_id, 0.5, 2.5, baseline=None, preload=True,
                            verbose="error")  # fmt: skip
        xs.append(epochs.get_data(copy=False))
        ys.append(epochs.events[:, 2])
        subjects += [i] * len(epochs)
    X, y = np.concatenate(xs), np.concatenate(ys)
    test = np.isin(subjects, [len(paths) - 1])
    train, val = train_test_split(np.flatnonzero(~test), test_size=0.2, stratify=y[~test])
    return len(X)


async def through_study(data_dir: Path, paths: list[Path]) -> int:
    from brainchat.eeg.study.study import Study
    from brainchat.eeg.tools.tools import build_eeg_tools

    study = Study(data_dir)
    tools = {t.name: t for t in build_eeg_tools(study)}
    await tools["load_data"].ainvoke({"files": [p.name for p in paths]})
    await tools["bandpass_filter"].ainvoke({"l_freq": 8, "h_freq": 30})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    await tools["split_dataset"].ainvoke({"by": "subject", "test_ratio": 0.12, "val_ratio": 0.18})
    return len(study.state.epochs.y)


def main() -> None:
    from brainchat.eeg.io.synthetic import write_demo_set

    parser = argparse.ArgumentParser()
    parser.add_argument("--subjects", type=int, default=9)
    parser.add_argument("--trials", type=int, default=288)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        paths = write_demo_set(tmp, subjects=args.subjects, sessions=1, trials=args.trials)
        print(f"demo set: {len(paths)} EDF files x {args.trials} trials, written in "
              f"{time.perf_counter() - t:.1f} s")  # fmt: skip
        best = {"mne": float("inf"), "study": float("inf")}
        for _ in range(args.repeats):  # interleaved, best of n: the machine is shared
            for name in ("mne", "study"):
                gc.collect()
                t = time.perf_counter()
                n = (
                    direct_mne(paths)
                    if name == "mne"
                    else asyncio.run(through_study(Path(tmp), paths))
                )
                best[name] = min(best[name], time.perf_counter() - t)
                print(f"  {name}: {time.perf_counter() - t:.2f} s ({n} epochs)")
    ratio = best["study"] / best["mne"]
    print(
        f"load+filter+epoch+split, {args.subjects} subjects x {args.trials} trials: "
        f"MNE {best['mne']:.2f} s, Study {best['study']:.2f} s, ratio {ratio:.3f} (target <= 1.1)"
    )


if __name__ == "__main__":
    main()
