"""Resume time of a stored 50-turn thread with an EEG study, and stored bytes per turn.

The app runs as it does for a user (`chainlit run`, a subprocess) on the SQLite default or on an
embedded Postgres, pointed at the scripted model server. Turn 1 loads, filters, epochs, splits
trains and evaluates CSP+LDA; the other turns are agent turns without tools. Then, alternately:

- resume: a new socket opens the thread; timed until the "Conversation resumed" message, which
  comes after Chainlit has sent the stored steps and brainchat has rebuilt the model history
  and queued the study (the input is usable from then on);
- fresh: a new socket starts a conversation; timed until the welcome message.

Stored bytes: the database's size after the thread minus its size before it, over the turns
(SQLite: pages in use after a checkpoint, indexes included; Postgres: pg_database_size); plots
and the saved model are files, counted apart.

    .venv/bin/python bench/resume.py [--turns 50] [--repeats 15] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))  # the socket.io client the tests use

from sio_client import ChainlitSocket, local_login  # noqa: E402

from brainchat.testing.scripted_server import Call, ScriptedServer, Text, ToolCalls  # noqa: E402

FILE = "sub-01_ses-01_task-mi_eeg.edf"
TURN_ONE = [
    Call("load_data", {"files": [FILE]}),
    Call("bandpass_filter", {"l_freq": 8, "h_freq": 30}),
    Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
    Call("split_dataset", {"by": "trial", "test_ratio": 0.25}),
    Call("train_model", {"model": "csp_lda"}),
    Call("evaluate_model", {"model": "csp_lda"}),  # its confusion matrix is a stored element
]


def start_app(home: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    full = {k: v for k, v in os.environ.items() if k != "CI"}
    full.update({"BRAINCHAT_DATA_DIR": str(home / "data"), "CHAINLIT_AUTH_SECRET": "", **env})
    chainlit = Path(sys.executable).with_name("chainlit")
    log = open(home / "app.log", "ab")  # noqa: SIM115 - the child holds it
    proc = subprocess.Popen(
        [str(chainlit), "run", "src/brainchat/app.py", "--headless", "--port", str(port)],
        cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(600):
        if proc.poll() is not None:
            break
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"app did not start:\n{(home / 'app.log').read_text()[-3000:]}")


def stop_app(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(30)


async def build_thread(url: str, server: ScriptedServer, turns: int) -> str:
    cookie = await local_login(url)
    sock = ChainlitSocket()
    await sock.connect(url, origin=None, cookie=cookie)
    await sock.start_chat()
    server.queue("fc-m", ToolCalls(TURN_ONE), Text("Tools done."), Text("Answer 1: trained."))
    await sock.send("Load subject 1, filter 8-30 Hz, epoch, split and train CSP+LDA")
    await sock.wait_for("Answer 1: trained.", timeout=300)
    for i in range(2, turns + 1):
        words = " ".join(f"w{i}x{k}" for k in range(60))  # ~60-word answers, ~15-word questions
        server.queue("fc-m", Text("No tool needed."), Text(f"Answer {i}: {words}"))
        await sock.send(f"Question {i}: how does the mu rhythm relate to imagery, point {i}?")
        await sock.wait_for(f"Answer {i}: ", timeout=60)
        await sock.wait_for(f"w{i}x59", timeout=60)
    tid = sock.thread_id
    await sock.close()
    assert tid
    return tid


async def time_open(url: str, cookie: str, thread_id: str) -> float:
    sock = ChainlitSocket()
    started = time.perf_counter()
    await sock.connect(url, origin=None, cookie=cookie, thread_id=thread_id)
    await sock.sio.emit("connection_successful")
    await sock.wait_for("Conversation resumed" if thread_id else "ready", timeout=60)
    took = time.perf_counter() - started
    await sock.close()
    return took


async def db_bytes(url: str | None, state: Path) -> int:
    if url is None:
        return sqlite_used(state / "brainchat.db")
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT pg_database_size(current_database())"))
    finally:
        await conn.close()


def sqlite_used(db: Path) -> int:
    """Bytes of the pages in use, after the write-ahead log is folded in (free pages left out)."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, size = (
            conn.execute(f"PRAGMA {p}").fetchone()[0]
            for p in ("page_count", "freelist_count", "page_size")
        )
    return int((pages - free) * size)


def sqlite_breakdown(db: Path) -> dict[str, int]:
    """Bytes of stored values per table (the file adds pages, indexes and free space)."""
    import sqlite3

    out: dict[str, int] = {}
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            total = " + ".join(f'COALESCE(LENGTH(CAST("{c}" AS BLOB)), 0)' for c in cols)
            out[table] = int(conn.execute(f'SELECT SUM({total}) FROM "{table}"').fetchone()[0] or 0)
    return out


def folder_bytes(folder: Path, pattern: str = "**/*") -> int:
    return sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file())


async def main(args: argparse.Namespace, home: Path, pg_url: str | None) -> None:
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(home / "data", subjects=1, sessions=1, trials=48, seed=3)
    recordings = folder_bytes(home / "data")
    with ScriptedServer() as server:
        spec = {"provider": "openai-compatible", "model": "fc-m", "base_url": server.base_url,
                "api_key": "bench", "max_retries": 0}  # fmt: skip
        env = {"AGENT_FUNCTION_CALL_MODEL": json.dumps(spec), "DEFAULT_MODE": "agent"}
        if pg_url:
            env["DATABASE_URL"] = pg_url
        proc, url = start_app(home, env)  # creates the schema
        stop_app(proc)
        empty = await db_bytes(pg_url, home / "state")
        proc, url = start_app(home, env)
        tid = await build_thread(url, server, args.turns)
        stop_app(proc)  # the last writes are flushed, SQLite checkpoints its journal
        full = await db_bytes(pg_url, home / "state")
        proc, url = start_app(home, env)
        cookie = await local_login(url)
        resume: list[float] = []
        fresh: list[float] = []
        await time_open(url, cookie, tid)  # warm-up: imports on first use
        await time_open(url, cookie, "")
        for _ in range(args.repeats):
            resume.append(await time_open(url, cookie, tid))
            fresh.append(await time_open(url, cookie, ""))
        stop_app(proc)
    values = {} if pg_url else sqlite_breakdown(home / "state" / "brainchat.db")
    files = folder_bytes(home / "state" / "files")
    models = folder_bytes(home / "data") - recordings
    r, f = statistics.median(resume), statistics.median(fresh)
    where = "Postgres (embedded)" if pg_url else "SQLite"
    print(
        f"store: {where}; thread: {args.turns} turns, study load+filter+epoch+split+train+evaluate"
    )
    print(f"resume to usable input: median {r * 1000:.0f} ms (min {min(resume) * 1000:.0f}) "
          f"over {args.repeats}; fresh conversation: median {f * 1000:.0f} ms "
          f"(min {min(fresh) * 1000:.0f}); ratio {r / f:.2f}")  # fmt: skip
    print(f"database: {(full - empty) / args.turns / 1024:.1f} KiB per turn "
          f"({full - empty} bytes for {args.turns} turns); element files {files} bytes, "
          f"saved models {models} bytes")  # fmt: skip
    if values:
        shown = ", ".join(f"{t} {b / args.turns / 1024:.1f}" for t, b in values.items() if b)
        print(f"stored values per turn, KiB: {shown}")


def run() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--postgres", action="store_true", help="an embedded Postgres, not SQLite")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as tmp:
        home = Path(tmp)
        if not args.postgres:
            asyncio.run(main(args, home, None))
            return
        from brainchat.testing.postgres import EmbeddedPostgres

        with EmbeddedPostgres(home / "pg") as pg:
            asyncio.run(main(args, home, pg.new_database("bench_resume")))


if __name__ == "__main__":
    run()
