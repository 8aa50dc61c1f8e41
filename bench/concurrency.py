"""N researchers at once: concurrent Agent turns over socket.io against one app process.

Starts the scripted model server (200 ms to first chunk, 20 ms between chunks) in this process and
`chainlit run src/brainchat/app.py` on a free loopback port, then for N = 1, 10, 25, 50 opens N
socket.io conversations the way the browser does (the app's own Origin, `connection_successful`,
one `client_message` with `modes: {"mode": "agent"}`). Each turn is one web_search round (the
function-call model streams a short reasoning and the call) then a ~40-token answer from the
answer model; each answer carries its session's tag, and the bench checks every session got its
own. Run:

    .venv/bin/python bench/concurrency.py                # N = 1, 10, 25, 50
    .venv/bin/python bench/concurrency.py --sizes 1 10   # a quicker look
    .venv/bin/python bench/concurrency.py --processes 2  # two app processes, clients spread

`--processes K` starts K app processes (each its own state folder) and puts conversation i on
process i mod K, as a sticky balancer spreads distinct users (nginx's ip_hash cannot spread the
clients of one host, so the bench connects each to its process directly; the proxy's own cost is
not in the figures). CPU and RSS are summed over the processes.

Prints per N: p50/p95 seconds to the final answer and to the first answer token, p95(N)/p50(1),
the app process's CPU seconds per turn (utime+stime from /proc before/after the turns), RSS per
session, and the first-answer-token overhead over the floor. The floor is what the model server
alone takes: the function-call reply (200 ms + 20 ms per further chunk) plus the answer reply's
200 ms to its first chunk (2 model calls + the tool; with the evaluate node a successful
web_search round goes straight to the answer). Cold start is the time from launching the app to
its first page (GET / answered 200). Every wait is bounded; the whole run stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from sio_client import ChainlitSocket  # noqa: E402

from brainchat.testing.replies import content_deltas  # noqa: E402
from brainchat.testing.scripted_server import (  # noqa: E402
    Call,
    Reply,
    ScriptedServer,
    Text,
    ToolCalls,
    message_text,
)

TTFT, DELAY = 0.2, 0.02
BEFORE = "5e23def"  # main when #15 began (its bench, batching and caches not yet in)
TAG = re.compile(r"\bS\d+x\d+\b")
REASONING = "The user asks about the mu rhythm; a web search gives sources to cite."
ANSWER = (
    "Session {tag}: the mu rhythm is an 8 to 13 Hz oscillation over the sensorimotor cortex. "
    "It desynchronises when a person moves or imagines moving a hand, which is why motor "
    "imagery interfaces track its power over C3 and C4 [1][2]."
)
SEARCH = [
    {"title": "Mu rhythm", "url": "https://example.org/mu", "snippet": "8-13 Hz over C3/C4."},
    {"title": "Motor imagery ERD", "url": "https://example.org/erd", "snippet": "Mu ERD."},
]
ENV_DROP = ("CI", "CHAT_MODEL", "AGENT_FUNCTION_CALL_MODEL", "AGENT_ANSWER_MODEL", "MCP_CONFIG",
            "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DEEPSEEK_API_KEY", "DEFAULT_MODE")  # fmt: skip


def fc_reply(tag: str) -> ToolCalls:
    call = Call("web_search", {"query": f"mu rhythm {tag}"})
    return ToolCalls([call], reasoning=REASONING, ttft=TTFT, token_delay=DELAY)


class BenchServer(ScriptedServer):
    """Replies chosen from the request, so concurrent sessions never take each other's replies."""

    def _next_reply(self, model: str, messages: list[dict[str, Any]]) -> Reply:
        found = TAG.search(" ".join(message_text(m) for m in messages if m.get("role") == "user"))
        tag = found.group(0) if found else "?"
        if model == "fc" and not any(m.get("role") == "tool" for m in messages):
            return fc_reply(tag)
        if model == "fc":
            return Text("enough", ttft=TTFT, token_delay=DELAY)
        return Text(ANSWER.format(tag=tag), ttft=TTFT, token_delay=DELAY)


@dataclass
class Client:
    """One conversation: its socket and when its first answer token and final answer arrived."""

    tag: str
    sock: ChainlitSocket = field(default_factory=ChainlitSocket)
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    answer_ids: set[str] = field(default_factory=set)
    sent_at: float = 0.0
    first_token: float | None = None
    final: float | None = None
    final_text: str = ""
    tokens: int = 0

    def __post_init__(self) -> None:
        self.sock.sio.handlers["/"].pop("*", None)  # no JSON copy of every event: keep it light
        self.sock.sio.on("*", self._on)

    async def _on(self, event: str, data: Any = None) -> None:
        now = time.perf_counter()
        if event == "new_message" and "ready" in str(data.get("output", "")):
            self.welcomed.set()
        elif event == "stream_start" and data.get("type") == "assistant_message":
            self.answer_ids.add(data["id"])
            self.first_token = self.first_token or now
            self.tokens += 1
        elif event == "stream_token" and data.get("id") in self.answer_ids:
            self.tokens += 1
        elif event == "new_message" and data.get("id") in self.answer_ids:
            self.final, self.final_text = now, str(data.get("output", ""))
            self.done.set()

    async def send(self) -> None:
        message = {"threadId": "", "id": str(uuid.uuid4()), "name": "User", "type": "user_message",
                   "output": f"What is the mu rhythm? Answer for {self.tag}",
                   "createdAt": datetime.now(UTC).isoformat()}  # fmt: skip
        self.sent_at = time.perf_counter()
        payload = {"message": {**message, "modes": {"mode": "agent"}}, "fileReferences": []}
        await self.sock.sio.emit("client_message", payload)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def baseline_tree(ref: str, tmp: Path) -> Path:
    """The app as it was at `ref` (its src, prompts and Chainlit config), unpacked under tmp."""
    dest = tmp / f"baseline-{ref[:12]}"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def start_app(
    server: ScriptedServer, tmp: Path, root: Path = ROOT, state: Path | None = None
) -> tuple[subprocess.Popen[bytes], str, float]:
    """Launch the app in `root`; return it, its URL and the seconds until its first page answered."""
    fixture = tmp / "search.json"
    fixture.write_text(json.dumps(SEARCH))

    def spec(model: str) -> str:
        return json.dumps({"provider": "openai-compatible", "model": model, "max_retries": 0,
                           "base_url": server.base_url, "api_key": "bench"})  # fmt: skip

    env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
    env.update({"CHAT_MODEL": spec("fc"), "AGENT_FUNCTION_CALL_MODEL": spec("fc"),
                "AGENT_ANSWER_MODEL": spec("answer"), "BRAINCHAT_DATA_DIR": str(tmp / "data"),
                "BRAINCHAT_SEARCH_FIXTURE": str(fixture), "CHAINLIT_AUTH_SECRET": "",
                "PYTHONPATH": str(root / "src")})  # fmt: skip
    if state is not None:
        env["BRAINCHAT_STATE_DIR"] = str(state)
    port = free_port()
    chainlit = Path(sys.executable).with_name("chainlit")
    log = tmp / f"app-{port}.log"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(chainlit), "run", str(root / "src/brainchat/app.py"), "--headless", "--port",
         str(port), "--host", "127.0.0.1"],
        cwd=root, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = started + 60
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"app exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/", timeout=2) as resp:
                if resp.status == 200:
                    return proc, url, time.perf_counter() - started
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the app did not serve its first page within 60 s")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def round_of(n: int, urls: list[str], pids: list[int], limit: float) -> dict[str, float]:
    """N conversations, one Agent turn each, all sent at once; the figures of that round.

    Conversation i goes to app process i mod K; CPU and RSS are summed over the processes.
    """
    rss0 = sum(rss_mb(pid) for pid in pids)
    clients = [Client(f"S{n}x{i:02d}") for i in range(n)]
    async with asyncio.timeout(limit):
        await asyncio.gather(*(c.sock.connect(u, origin=u) for i, c in enumerate(clients)
                               for u in [urls[i % len(urls)]]))  # fmt: skip
        await asyncio.gather(*(c.sock.sio.emit("connection_successful") for c in clients))
        await asyncio.gather(*(c.welcomed.wait() for c in clients))
    await asyncio.sleep(0.5)  # let the welcome work settle before the CPU reading
    rss1, cpu0 = sum(rss_mb(pid) for pid in pids), sum(cpu_seconds(pid) for pid in pids)
    try:
        async with asyncio.timeout(limit):
            await asyncio.gather(*(c.send() for c in clients))
            await asyncio.gather(*(c.done.wait() for c in clients))
        cpu1 = sum(cpu_seconds(pid) for pid in pids)
    finally:
        await asyncio.gather(*(c.sock.close() for c in clients), return_exceptions=True)
    wrong = [c.tag for c in clients if c.final is None or f"Session {c.tag}:" not in c.final_text]
    if wrong:
        raise RuntimeError(f"N={n}: {len(wrong)} session(s) lacked their own answer: {wrong[:5]}")
    assert all(c.first_token is not None and c.final is not None for c in clients)
    finals = [c.final - c.sent_at for c in clients if c.final]
    firsts = [c.first_token - c.sent_at for c in clients if c.first_token]
    return {"n": n, "p50": pct(finals, 0.5), "p95": pct(finals, 0.95),
            "first50": pct(firsts, 0.5), "first95": pct(firsts, 0.95),
            "cpu_ms": 1000 * (cpu1 - cpu0) / n, "rss_mb": (rss1 - rss0) / n,
            "sends": statistics.mean(c.tokens for c in clients)}  # fmt: skip


def floor_seconds() -> float:
    """Model-server time to the first answer token: the whole fc reply + the answer's ttft."""
    chunks = len(content_deltas(fc_reply("S0x00")))
    return TTFT + DELAY * (chunks - 1) + TTFT


def start_profiler(pid: int, out: str) -> subprocess.Popen[bytes]:
    py_spy = str(Path(sys.executable).with_name("py-spy"))
    cmd = [py_spy, "record", "-p", str(pid), "-r", "200", "-f", "raw", "-o", out, "--nonblocking"]
    return subprocess.Popen(cmd)


def stop(proc: subprocess.Popen[bytes], spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.send_signal(2)  # py-spy writes its file on SIGINT
        spy.wait(30)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


async def one_app(
    server: ScriptedServer,
    tmp: Path,
    root: Path,
    sizes: list[int],
    limit: float,
    profile: str | None = None,
    processes: int = 1,
) -> tuple[float, list[dict[str, float]]]:
    """Start the app from `root` (K processes), warm each up with one turn, run the rounds;
    the cold start (of the first process) and the rows."""
    apps: list[tuple[subprocess.Popen[bytes], str, float]] = []
    spy = None
    try:
        for k in range(processes):
            state = tmp / f"state-{root.name}-{k}-{uuid.uuid4().hex[:6]}"
            apps.append(start_app(server, tmp, root, state if processes > 1 else None))
        procs, urls, cold = [a[0] for a in apps], [a[1] for a in apps], apps[0][2]
        pids = [p.pid for p in procs]
        for url, pid in zip(urls, pids, strict=True):  # warm-up: imports, first agent build
            await round_of(1, [url], [pid], limit)
        if profile:  # py-spy (pip install py-spy) samples the first app during the rounds
            spy = start_profiler(pids[0], profile)
            await asyncio.sleep(1)
        return cold, [await round_of(n, urls, pids, limit) for n in sizes]
    finally:
        for i, (proc, _, _) in enumerate(apps):
            stop(proc, spy if i == 0 else None)


def median_rows(runs: list[list[dict[str, float]]]) -> list[dict[str, float]]:
    """Per N, the median of every figure over the repeats."""
    return [{k: statistics.median(run[i][k] for run in runs) for k in runs[0][i]}
            for i in range(len(runs[0]))]  # fmt: skip


def print_rows(title: str, cold: float, rows: list[dict[str, float]], floor: float) -> None:
    base = rows[0]["p50"]
    print(f"\n{title}   cold start to first page: {cold:.2f} s (median)")
    print("    N  final p50  final p95  first p50  first p95  p95/p50(1)  CPU/turn  RSS/session"
          "  answer sends  first-token overhead p50")  # fmt: skip
    for r in rows:
        print(f"{r['n']:5.0f}  {r['p50']:8.2f}s  {r['p95']:8.2f}s  {r['first50']:8.2f}s  "
              f"{r['first95']:8.2f}s  {r['p95'] / base:10.2f}  {r['cpu_ms']:6.1f}ms  "
              f"{r['rss_mb']:8.2f}MB  {r['sends']:12.1f}  {1000 * (r['first50'] - floor):8.0f} ms")  # fmt: skip


def cores_for(rows: list[dict[str, float]], target: float = 1.3) -> tuple[float, int] | None:
    """Queueing model for one process per core: the N turns' CPU splits over k processes.

    p95(N) ~ p50(1) + (N / k - 1) x CPU per turn (a turn waits behind the others' CPU in its
    process); the ratio p95(N)/p50(1) for k cores and the k at which it reaches `target`.
    """
    one, big = rows[0], rows[-1]
    if big["n"] <= 1:
        return None
    cpu, n, base = big["cpu_ms"] / 1000, big["n"], one["p50"]
    k = 1
    while base + max(n / k - 1, 0) * cpu > target * base and k < 256:
        k += 1
    return (base + max(n / 2 - 1, 0) * cpu) / base, k


async def main(
    sizes: list[int],
    limit: float,
    repeats: int,
    baseline: str | None,
    profile: str | None,
    processes: int = 1,
) -> None:
    floor = floor_seconds()
    print(f"load average before: {os.getloadavg()}   floor to first answer token "
          f"(fc reply + answer ttft): {floor * 1000:.0f} ms; app processes: {processes}; "
          f"cores: {os.cpu_count()}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp_name, BenchServer() as server:
        tmp = Path(tmp_name)
        trees = {"this tree": ROOT}
        if baseline:
            trees[f"baseline {baseline[:12]}"] = baseline_tree(baseline, tmp)
        runs: dict[str, list[list[dict[str, float]]]] = {name: [] for name in trees}
        colds: dict[str, list[float]] = {name: [] for name in trees}
        for rep in range(repeats):  # interleaved, so load from other jobs hits both sides alike
            for name, root in trees.items():
                spy = profile if profile and rep == 0 and root == ROOT else None
                cold, rows = await one_app(server, tmp, root, sizes, limit, spy, processes)
                colds[name].append(cold)
                runs[name].append(rows)
                cpu = ", ".join(f"N={r['n']:.0f} {r['cpu_ms']:.1f} ms" for r in rows)
                print(f"  run {rep + 1}/{repeats} {name}: CPU/turn {cpu}", flush=True)
    medians = {name: median_rows(r) for name, r in runs.items()}
    for name, rows in medians.items():
        print_rows(f"{name} (median of {repeats})", statistics.median(colds[name]), rows, floor)
    here = medians["this tree"]
    model = cores_for(here) if processes == 1 else None
    if model:
        ratio2, k = model
        print(f"\nmodel, one process per core (N={here[-1]['n']:.0f}): p95/p50(1) ~ {ratio2:.2f} "
              f"on 2 cores; 1.3x reached at {k} cores")  # fmt: skip
    if baseline:
        base = medians[f"baseline {baseline[:12]}"]
        for b, h in zip(base, here, strict=True):
            print(f"N={h['n']:.0f}: CPU per agent turn {b['cpu_ms']:.1f} ms -> {h['cpu_ms']:.1f} ms"
                  f"  (baseline/this = {b['cpu_ms'] / h['cpu_ms']:.2f}x);  p95 {b['p95']:.2f} s "
                  f"-> {h['p95']:.2f} s")  # fmt: skip
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 25, 50])
    parser.add_argument("--timeout", type=float, default=90, help="seconds per round at most")
    parser.add_argument("--repeats", type=int, default=1, help="runs per tree (medians printed)")
    parser.add_argument("--baseline", metavar="GIT_REF",
                        help=f"also run the app as of GIT_REF, interleaved (before #15: {BEFORE})")  # fmt: skip
    parser.add_argument("--profile", help="write py-spy's collapsed stacks of the app here")
    parser.add_argument("--processes", type=int, default=1,
                        help="app processes; conversation i goes to process i mod K")  # fmt: skip
    args = parser.parse_args()
    if args.processes < 1:
        parser.error("--processes must be 1 or more")
    asyncio.run(main(args.sizes, args.timeout, args.repeats, args.baseline, args.profile,
                     args.processes))  # fmt: skip
