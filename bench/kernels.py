"""Studies in kernels (#37): the cost of the process boundary, Stop under load, and idle memory.

1. The EEG pipeline (load two files, band-pass 8-30 Hz, epoch, a 5-fold CSP+LDA
   cross-validation) through the same tools, in the app's process and in a kernel (a fresh
   kernel each run: its start is counted). Target: the kernel run within 5% of the in-process one
   once started (`warm`); the cold figure adds the kernel's start.
2. Three studies each run a 1,000-permutation cross-validation; all three are stopped. Printed:
   seconds from Stop until the kernels' CPU time stops growing (target <= 2 s), and the event
   loop's lag p95 (what every other user's streamed answer waits on) while the three compute
   against an idle loop (target <= 1.2x).
3. Twenty sessions of one data folder (as the MCP server's sessions are) each load two files:
   the kernels alive afterwards and their memory, bounded by BRAINCHAT_KERNELS_PER_USER.

    .venv/bin/python bench/kernels.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from brainchat import events
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.kernel.client import KernelStudy, kernel_tools
from brainchat.eeg.kernel.pool import KernelPool
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
PIPELINE = [
    ("load_data", {"files": FILES}),
    ("bandpass_filter", {"l_freq": 8, "h_freq": 30}),
    ("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
    ("cross_validate", {"protocol": "within_session", "pipelines": ["csp_lda"]}),
]
PERMUTED = {"protocol": "within_session", "pipelines": ["csp_lda"], "permutations": 1000}


async def call(tools: dict[str, Any], name: str, args: dict[str, Any]) -> str:
    events.set_tool_call(f"bench-{name}", name)
    return str(await tools[name].ainvoke(args))


async def pipeline(tools: dict[str, Any]) -> float:
    start = time.perf_counter()
    for name, args in PIPELINE:
        await call(tools, name, args)
    return time.perf_counter() - start


async def boundary(data: Path, runs: int) -> None:
    """Each side warmed once (its imports, its files in the page cache), then timed `runs` times;
    the kernel's first run, its start and imports included, is the cold figure."""
    tools = {t.name: t for t in build_eeg_tools(Study(data))}
    await pipeline(tools)
    await call(tools, "clear_study", {})
    inline = []
    for _ in range(runs):
        inline.append(await pipeline(tools))
        await call(tools, "clear_study", {})
    pool = KernelPool()
    tools = {t.name: t for t in kernel_tools(KernelStudy(data, None, pool))}
    started = time.perf_counter()
    await pipeline(tools)
    cold = time.perf_counter() - started
    await call(tools, "clear_study", {})
    warm = []
    for _ in range(runs):
        warm.append(await pipeline(tools))
        await call(tools, "clear_study", {})
    pool.end_all()
    a, w = statistics.median(inline), statistics.median(warm)
    print(f"pipeline in the app's process  {a:6.2f} s (median of {runs})")
    print(f"pipeline in a kernel           {w:6.2f} s  ratio {w / a:.3f} (target <= 1.05)")
    print(f"first pipeline of a new kernel {cold:6.2f} s  (its start and imports included)")


async def loop_lag(seconds: float) -> list[float]:
    """How late a 10 ms sleep wakes, again and again, for `seconds`."""
    lags, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        before = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - before - 0.01)
    return lags


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


async def chat_turns(turns: int) -> list[float]:
    """Seconds per chat answer (scripted model: 0.2 s to the first token, 40 tokens at 20 ms),
    one turn after another, as another user of the app waits for them."""
    from brainchat.session import Session
    from brainchat.settings import ModelSpec, Settings
    from brainchat.testing.scripted_server import ScriptedServer, Text

    server = ScriptedServer().start()
    answer = " ".join(["token"] * 40)
    server.set_default("chat", Text(answer, ttft=0.2, token_delay=0.02))
    spec = ModelSpec(model="chat", provider="openai-compatible", base_url=server.base_url,
                     api_key="bench")  # fmt: skip
    times = []
    try:
        for i in range(turns):
            session = Session(Settings(chat_model=spec))
            started = time.perf_counter()
            async for _ in session.ask(f"question {i}"):
                pass
            times.append(time.perf_counter() - started)
    finally:
        server.stop()
    return times


async def stop_under_load(root: Path, turns: int = 15) -> None:
    idle_lag = p95(await loop_lag(2.0))
    idle_chat = p95(await chat_turns(turns))
    pool = KernelPool(max_kernels=8, per_user=1)
    studies, tools = [], []
    for i in range(3):
        folder = root / f"user{i}"
        write_demo_set(folder, subjects=1, sessions=2, trials=48, seed=i)
        study = KernelStudy(folder, None, pool)
        studies.append(study)
        tools.append({t.name: t for t in kernel_tools(study)})
        for name, args in PIPELINE[:3]:
            await call(tools[-1], name, args)
    pids = [s._conn.process.proc.pid for s in studies]  # type: ignore[union-attr]
    runs = [asyncio.create_task(call(t, "cross_validate", PERMUTED)) for t in tools]
    await asyncio.sleep(1.0)
    busy_lag = p95(await loop_lag(2.0))
    busy_chat = p95(await chat_turns(turns))
    stopped = time.perf_counter()
    for run in runs:
        run.cancel()
    await asyncio.gather(*runs, return_exceptions=True)
    last = cpu(pids)
    while True:
        await asyncio.sleep(0.2)
        now = cpu(pids)
        if now - last < 0.02:
            break
        last = now
    quiet = time.perf_counter() - stopped
    pool.end_all()
    print(f"CPU idle after Stop of 3 runs  {quiet:6.2f} s (target <= 2)")
    print(
        f"chat answer p95 ({turns} turns)    idle {idle_chat:.3f} s, while 3 kernels compute "
        f"{busy_chat:.3f} s, ratio {busy_chat / idle_chat:.2f} (target <= 1.2)"
    )
    print(
        f"event-loop lag p95             idle {idle_lag * 1000:.2f} ms, while 3 kernels compute "
        f"{busy_lag * 1000:.2f} ms"
    )


async def idle_sessions(data: Path, sessions: int = 20, per_user: int = 2) -> None:
    pool = KernelPool(max_kernels=64, per_user=per_user)
    for _ in range(sessions):
        study = KernelStudy(data, None, pool)
        await call({t.name: t for t in kernel_tools(study)}, "load_data", {"files": FILES})
    alive = [live.conn.process.proc.pid for live in pool.live if not live.conn.ended]  # type: ignore[attr-defined]
    rss = sum(psutil.Process(pid).memory_info().rss for pid in alive) / 2**20
    pool.end_all()
    print(
        f"{sessions} sessions of one folder    {len(alive)} kernels alive (cap {per_user}), "
        f"{rss:.0f} MB resident in all"
    )


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"load average before: {psutil.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data"
        write_demo_set(data, subjects=1, sessions=2, trials=48, seed=3)
        await boundary(data, runs)
        await stop_under_load(root)
        await idle_sessions(data)
    print(f"load average after: {psutil.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
