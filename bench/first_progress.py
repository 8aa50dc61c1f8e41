"""Seconds from a train_model(EEGNet) call to its first word, and to its first epoch line (#40).

A study reloaded (its kernel ends, the saved log is replayed in a new one), then EEGNet trained
for 3 epochs on the demo generator's files; every progress event is printed with its time.
Before #40 the first event was the first epoch line (4.7 s here, ~30 s on the demo under load).

    .venv/bin/python bench/first_progress.py [--subjects 1 --sessions 2 --trials 24]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from brainchat import events
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.kernel.client import KernelStudy, kernel_tools
from brainchat.eeg.kernel.pool import KernelPool


async def main(subjects: int, sessions: int, trials: int) -> None:
    folder = Path(tempfile.mkdtemp())
    paths = write_demo_set(folder, subjects=subjects, sessions=sessions, trials=trials, seed=3)
    files = [str(p.relative_to(folder)) for p in paths]
    pool = KernelPool(max_kernels=2, per_user=2)
    try:
        study = KernelStudy(folder, None, pool)
        tools = {t.name: t for t in kernel_tools(study)}
        steps: list[tuple[str, dict[str, Any]]] = [
            ("load_data", {"files": files}),
            ("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
            ("split_dataset", {}),
        ]
        for name, args in steps:
            events.set_tool_call("c", name)
            await tools[name].ainvoke(args)
        study.pending = list(study.log)  # as after a reload
        seen: list[tuple[float, Any]] = []
        start = time.perf_counter()
        token = events._sink.set(lambda e: seen.append((time.perf_counter() - start, e)))
        events.set_tool_call("c", "train_model")
        await tools["train_model"].ainvoke({"model": "eegnet", "epochs": 3})
        events._sink.reset(token)
    finally:
        pool.end_all()
    shown = [(t, e) for t, e in seen if isinstance(e, events.ToolProgress)]
    for t, e in shown:
        print(f"{t:6.2f} s  {e.phase or '-':10} {e.message[:70]}")
    first_epoch = next(t for t, e in shown if e.data.get("epoch"))
    print(f"first word after {shown[0][0]:.2f} s; first epoch line after {first_epoch:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=1)
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--trials", type=int, default=24)
    a = parser.parse_args()
    asyncio.run(main(a.subjects, a.sessions, a.trials))
