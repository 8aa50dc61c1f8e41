"""Ten users through the app (#37): three stop their 1,000-permutation cross-validations, seven chat.

Starts the scripted model server in this process and `chainlit run src/brainchat/app.py` with
password accounts (bench/concurrency.py's `start_app`), makes ten accounts, and connects each over
socket.io as the page does (bench/concurrency.py's `Client`, tests/e2e/sio_client.py). Accounts,
not ten sessions of one login: a kernel's owner is the user's data folder, and one user may run
BRAINCHAT_KERNELS_PER_USER (2) kernels, so three computing sessions of one user would measure the
queue, not three users. socket.io, not ten browsers: Chainlit's protocol (connect, login cookie,
`client_message`, `stop`) is what the page sends, and ten chromiums would take the 2 cores the
figures are about.

Three users (`cv0`..`cv2`, Agent mode, each with a demo data folder of their own) ask for a
cross-validation; the scripted model calls load_data, bandpass_filter, epoch_data and
cross_validate with 1,000 permutations (bench/kernels.py's PIPELINE and PERMUTED). Seven users
(`chat0`..`chat6`, Chat mode; the model answers 40 tokens, 0.2 s to the first, 20 ms apart) ask
turn after turn. One run prints:

a. seconds from Stop (the page's `stop` event, sent by the three at once) until the three
   kernels' CPU time stops growing (psutil, 0.2 s steps; target <= 2 s);
b. the seven users' answer time p95 while the three compute against the same seven on the idle
   app just before (and again after the Stop), and the ratio (target <= 1.2);
c. the app's and the kernels' resident memory, idle, while computing and after the Stop.

    .venv/bin/python bench/app_users.py [--turns 8]

Before it measures it waits (up to 10 minutes) until no `llama-server` runs, and prints `uptime`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from kernel_cpu import CpuWatch, study_kernels  # noqa: E402
from sio_client import password_login  # noqa: E402

from brainchat.eeg.io.synthetic import write_demo_set  # noqa: E402
from brainchat.testing.scripted_server import (  # noqa: E402
    Call,
    RecordedRequest,
    Reply,
    ScriptedServer,
    Text,
    ToolCalls,
    message_text,
)
from concurrency import Client, pct, start_app, stop  # noqa: E402
from kernels import PERMUTED, PIPELINE  # noqa: E402

PASSWORD = "bench-password-37"
CHAT_ANSWER = " ".join(["token"] * 40)
COMPUTE, CHATTERS = 3, 7
SPIN = "import os\nos.nice(10)\nwhile True:\n    pass"  # as a kernel runs, at nice 10


def reply_for(rec: RecordedRequest) -> Reply:
    """Replies chosen from the request, so ten concurrent sessions never take each other's."""
    asked = " ".join(message_text(m) for m in rec.messages if m.get("role") == "user")
    if "cross-validate" not in asked:  # a chat user's turn (Chat mode: no tools offered)
        return Text(CHAT_ANSWER, ttft=0.2, token_delay=0.02)
    if rec.model == "answer":
        return Text("The cross-validation was stopped.")
    if any(m.get("role") == "tool" for m in rec.messages):
        return Text("enough")
    calls = [Call(name, args) for name, args in PIPELINE[:3]]
    return ToolCalls([*calls, Call("cross_validate", PERMUTED)])


@dataclass
class User(Client):
    """One account's conversation; for the cross-validating users, when their run computes and
    when the page was told it stopped."""

    watch_steps: bool = False
    computing: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    async def _on(self, event: str, data: Any = None) -> None:
        await super()._on(event, data)
        if self.watch_steps:
            text = str(data)
            if "fold 1/" in text:
                self.computing.set()
            if "Task manually stopped" in text:
                self.stopped.set()

    async def ask(self, text: str, mode: str) -> float:
        """Send a message as the page does; seconds until its answer arrived in full."""
        self.done.clear()
        self.answer_ids.clear()
        self.first_token = self.final = None
        message = {"threadId": "", "id": str(uuid.uuid4()), "name": "User", "type": "user_message",
                   "output": text, "createdAt": datetime.now(UTC).isoformat(),
                   "modes": {"mode": mode}}  # fmt: skip
        self.sent_at = time.perf_counter()
        await self.sock.sio.emit("client_message", {"message": message, "fileReferences": []})
        await self.done.wait()
        assert self.final is not None
        return self.final - self.sent_at


def wait_for_quiet_machine(limit: float = 600) -> None:
    """Another helper's real-model bench (llama-server) takes the cores: wait until none runs."""
    deadline = time.monotonic() + limit
    while subprocess.run(["pgrep", "-f", "llama-server"], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            print("llama-server still runs after 10 minutes: measuring beside it")
            return
        time.sleep(5)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def add_accounts(names: list[str], data: Path) -> None:
    env = {**os.environ, "BRAINCHAT_DATA_DIR": str(data), "BRAINCHAT_AUTH": "password"}
    for name in names:
        subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", name],
                       input=PASSWORD + "\n", text=True, cwd=ROOT, check=True, timeout=120,
                       stdout=subprocess.DEVNULL,
                       env=env)  # fmt: skip


async def connect(url: str, name: str, watch_steps: bool = False) -> User:
    user = User(name, watch_steps=watch_steps)
    cookie = await password_login(url, name, PASSWORD)
    assert cookie, f"{name} could not log in"
    await user.sock.connect(url, origin=url, cookie=cookie)
    await user.sock.sio.emit("connection_successful")
    await asyncio.wait_for(user.welcomed.wait(), 120)
    return user


async def chat_round(users: list[User], turns: int, label: str) -> list[float]:
    """Each chat user asks `turns` questions one after another, all users at once."""

    async def one(user: User) -> list[float]:
        return [
            await user.ask(f"{label} question {i} from {user.tag}", "chat") for i in range(turns)
        ]

    async with asyncio.timeout(120 + 30 * turns):
        return [t for times in await asyncio.gather(*(one(u) for u in users)) for t in times]


def memory(app_pid: int) -> tuple[float, float, int]:
    """The app's resident MB, its kernels' resident MB in all, and how many kernels live."""
    kernels = study_kernels(app_pid)
    return (
        psutil.Process(app_pid).memory_info().rss / 2**20,
        CpuWatch(kernels).rss_mb(),
        len(kernels),
    )


async def start_computing(users: list[User], app_pid: int) -> CpuWatch:
    """The three ask for their cross-validations; their kernels' CPU, once all three compute."""
    await asyncio.gather(*(u.sock.sio.emit("client_message", {"message": {
        "threadId": "", "id": str(uuid.uuid4()), "name": "User", "type": "user_message",
        "output": "cross-validate my two sessions with 1,000 permutations",
        "createdAt": datetime.now(UTC).isoformat(), "modes": {"mode": "agent"}},
        "fileReferences": []}) for u in users))  # fmt: skip
    async with asyncio.timeout(300):
        await asyncio.gather(*(u.computing.wait() for u in users))
    kernels = study_kernels(app_pid)
    if len(kernels) != COMPUTE:
        raise RuntimeError(f"expected {COMPUTE} kernels, found {len(kernels)}")
    watch = CpuWatch(kernels)
    await asyncio.to_thread(watch.wait_growing, 0.5, 0.3, 60)
    return watch


async def stop_all(users: list[User], watch: CpuWatch) -> float:
    """Stop the three runs at once; seconds until their kernels' CPU time stopped growing."""
    await asyncio.to_thread(watch.wait_growing, 0.5, 0.3, 10)  # still computing before Stop
    stopped = time.monotonic()
    await asyncio.gather(*(u.sock.sio.emit("stop") for u in users))
    seconds = await asyncio.to_thread(watch.wait_quiet, 0.2, 0.02, 60, stopped)
    async with asyncio.timeout(60):
        await asyncio.gather(*(u.stopped.wait() for u in users))
    return seconds


def p95_line(name: str, times: list[float], base: float) -> str:
    p95 = pct(times, 0.95)
    return f"{name:<34} p95 {p95:6.3f} s  p50 {pct(times, 0.5):6.3f} s  n={len(times)}  ratio {p95 / base:.2f}"


def spin(n: int) -> list[subprocess.Popen[bytes]]:
    """`n` processes that only burn CPU at nice 10, as kernels run."""
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]


async def phase(users: list[User], turns: int, label: str, app_pid: int) -> dict[str, Any]:
    """A chat round: the answer times, and the CPU seconds per second of the app and of this
    process (the clients and the model server) meanwhile."""
    app, me = psutil.Process(app_pid), psutil.Process()
    cpu0, mine0, t0 = sum(app.cpu_times()[:2]), sum(me.cpu_times()[:2]), time.perf_counter()
    times = await chat_round(users, turns, label)
    spent = time.perf_counter() - t0
    return {"times": times, "app_cpu": (sum(app.cpu_times()[:2]) - cpu0) / spent,
            "bench_cpu": (sum(me.cpu_times()[:2]) - mine0) / spent}  # fmt: skip


async def measure(url: str, app_pid: int, turns: int) -> dict[str, Any]:
    """The three phases (idle, computing, after the Stop) and the Stop between them."""
    cv = [await connect(url, f"cv{i}", watch_steps=True) for i in range(COMPUTE)]
    chat = [await connect(url, f"chat{i}") for i in range(CHATTERS)]
    await chat_round(chat, 1, "warm-up")
    out: dict[str, Any] = {"mem_idle": memory(app_pid)}
    out["idle"] = await phase(chat, turns, "idle", app_pid)
    watch = await start_computing(cv, app_pid)
    cpu0, t0 = watch.total(), time.perf_counter()
    out["busy"] = await phase(chat, turns, "busy", app_pid)
    out["kernel_cpu"] = (watch.total() - cpu0) / (time.perf_counter() - t0)
    out["mem_busy"] = memory(app_pid)
    out["quiet"] = await stop_all(cv, watch)
    out["mem_after"] = memory(app_pid)
    out["after"] = await phase(chat, turns, "after", app_pid)
    spinners = spin(COMPUTE)
    try:  # the control: what any three nice-10 busy processes cost the chat on this machine
        out["spin"] = await phase(chat, turns, "spin", app_pid)
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()
    for user in cv + chat:
        await user.sock.close()
    return out


def report(out: dict[str, Any], turns: int) -> None:
    base = pct(out["idle"]["times"], 0.95)
    print(f"\n(a) CPU idle after Stop of {COMPUTE} runs  {out['quiet']:5.2f} s (target <= 2; the "
          f"kernels used {out['kernel_cpu']:.2f} CPU s/s while the others chatted)")  # fmt: skip
    print(
        f"(b) {CHATTERS} chat users x {turns} turns, answer time (40 tokens, 0.2 s to the first):"
    )
    for key, label in (("idle", "idle app (baseline)"), ("busy", f"while {COMPUTE} kernels compute"),
                       ("after", "after the Stop"),
                       ("spin", f"control: {COMPUTE} nice-10 busy loops")):  # fmt: skip
        target = " (target <= 1.2)" if key == "busy" else ""
        print(f"    {p95_line(label, out[key]['times'], base)}{target}   CPU s/s: app "
              f"{out[key]['app_cpu']:.2f}, this bench {out[key]['bench_cpu']:.2f}")  # fmt: skip
    print("(c) resident memory:")
    for key, label in (
        ("mem_idle", "idle"),
        ("mem_busy", "computing"),
        ("mem_after", "after the Stop"),
    ):
        app, kernels, n = out[key]
        print(f"    {label:<15} app {app:6.0f} MB   {n} kernel(s) {kernels:6.0f} MB")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=8, help="chat turns per user per phase")
    parser.add_argument("--trials", type=int, default=48, help="trials per session of the demo")
    parser.add_argument("--no-wait", action="store_true",
                        help="measure even while llama-server runs (a trial, not a record)")  # fmt: skip
    args = parser.parse_args()
    if not args.no_wait:
        wait_for_quiet_machine()
    print(f"before: {uptime()}")
    os.environ.update({"BRAINCHAT_AUTH": "password", "AGENT_TOOL_TIMEOUT": "600",
                       "AGENT_MAX_TIME": "600"})  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp_name, ScriptedServer(responder=reply_for) as server:
        tmp = Path(tmp_name)
        names = [f"cv{i}" for i in range(COMPUTE)] + [f"chat{i}" for i in range(CHATTERS)]
        add_accounts(names, tmp / "data")
        for i in range(COMPUTE):
            write_demo_set(tmp / "data" / "users" / f"cv{i}", subjects=1, sessions=2,
                           trials=args.trials, seed=i)  # fmt: skip
        proc, url, cold = start_app(server, tmp)
        try:
            report(await measure(url, proc.pid, args.turns), args.turns)
        finally:
            stop(proc, None)
        if server.unexpected:
            print(f"note: {len(server.unexpected)} request(s) found no scripted reply")
    print(f"after:  {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
