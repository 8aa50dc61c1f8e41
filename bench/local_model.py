"""Bench: the local runtime brainchat starts itself (#42) against llama.cpp's server started by hand.

    nice .venv/bin/python bench/local_model.py                       # 3 runs per server
    nice .venv/bin/python bench/local_model.py --runs 5 --tokens 200 --servers direct runtime

For each server, on the same model file (default: the catalog's default, Qwen2.5-Coder
1.5B Instruct Q4_K_M, from bench/real_model_setup.py's cache) and the same number of threads:

- `direct`: llama-server started by hand as bench/real_model.py does (`--jinja -c 16384 -t N`),
  the baseline;
- `runtime`: brainchat's runtime with its default server, llama-cpp-python's
  (`python -m llama_cpp.server`, the extra brainchat[local]); skipped where it is not installed;
- `runtime-binary`: brainchat's runtime running the same llama-server (BRAINCHAT_LLAMA_SERVER).

All three run at once (three processes, each holding the model), are warmed up, then asked in
turn run by run, so a change of load on the shared cores falls on all alike. Each run streams one
chat completion (a ~300-token request, temperature 0, `--tokens` tokens at
most) and times the first token and the tokens per second after it (chunks between the first and
the last, over that time). Each run's request starts differently, so no server reuses the previous
run's prompt. Printed: the median and the best run per server and their ratios to the baseline's,
the time each took to answer after its start, and the load average (2 shared cores: other work
slows every figure, the best run least).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from brainchat.localmodels import find
from brainchat.localmodels.runtime import LocalRuntime, RuntimeUnavailable
from brainchat.localmodels.runtime_command import SERVER_ENV

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_model_setup as setup  # noqa: E402

SERVERS = ("direct", "runtime", "runtime-binary")
TEXT = (
    "EEG (electroencephalography) records the brain's electrical activity through electrodes on "
    "the scalp. Motor imagery experiments ask a participant to imagine moving the left or the "
    "right hand; the mu (8-12 Hz) and beta (13-30 Hz) rhythms over the motor cortex (C3, C4) "
    "weaken on the side opposite the imagined hand. A common pipeline band-pass filters the "
    "signal to 8-30 Hz, cuts epochs from 0.5 to 2.5 s after each cue, learns spatial filters "
    "with common spatial patterns (CSP) and classifies the log-variance of the filtered signals "
    "with linear discriminant analysis (LDA), scored by cross-validation over trials. "
)


@dataclass
class Figures:
    server: str
    ready_s: float = 0.0  # from the start to the first answer of /v1/models
    first_token_s: list[float] = field(default_factory=list)
    tokens_per_s: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    note: str = ""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", type=Path, help="a GGUF file (default: the catalog's default)")
    p.add_argument("--runs", type=int, default=3, help="timed requests per server (default 3)")
    p.add_argument("--tokens", type=int, default=128, help="max tokens per reply (default 128)")
    p.add_argument("--threads", type=int, default=2, help="threads for every server (default 2)")
    p.add_argument("--servers", nargs="+", choices=SERVERS, default=list(SERVERS))
    p.add_argument("--binary", type=Path, help="llama-server (default: the bench's build)")
    p.add_argument("--cache", type=Path, default=setup.default_cache())
    opts = p.parse_args(argv)
    if opts.runs < 1 or opts.tokens < 2:
        p.error("--runs must be at least 1 and --tokens at least 2")
    return opts


def messages(run: int) -> list[dict[str, str]]:
    # the run number first: no server finds the previous run's prompt in its cache
    return [
        {"role": "system", "content": f"Session {run}. You are a concise assistant for EEG research."},
        {"role": "user", "content": f"Request {run}. {TEXT * 2}\nExplain this pipeline step by step."},
    ]  # fmt: skip


async def one_run(client: httpx.AsyncClient, model: str, run: int, tokens: int) -> tuple[float, float, int]:  # fmt: skip
    """(seconds to the first token, tokens per second after it, tokens) of one streamed reply."""
    body = {"model": model, "messages": messages(run), "stream": True, "temperature": 0,
            "max_tokens": tokens}  # fmt: skip
    start = time.perf_counter()
    first = last = 0.0
    count = 0
    async with client.stream("POST", "/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or []
            if choices and (choices[0].get("delta") or {}).get("content"):
                last = time.perf_counter()
                first = first or last
                count += 1
    if count < 2:
        raise RuntimeError(f"the reply had {count} tokens: too few to time")
    return first - start, (count - 1) / (last - first), count


def client(base_url: str) -> httpx.AsyncClient:
    # a connection per request: llama-server closes a streamed reply's connection, and a reused
    # one fails the next request ("Server disconnected without sending a response")
    fresh = httpx.Limits(max_keepalive_connections=0)
    return httpx.AsyncClient(base_url=base_url, timeout=600, trust_env=False, limits=fresh)


@dataclass
class Running:
    """One server started for the bench: where to ask it, and how to end it."""

    fig: Figures
    base_url: str
    model: str
    stop: Callable[[], None]


def start_direct(model: Path, opts: argparse.Namespace, binary: Path) -> Running:
    fig = Figures("direct")
    log = opts.cache / "bench-local-direct.log"
    began = time.perf_counter()
    proc, url = setup.start_llama_server(binary, model, log, ctx=16384, threads=opts.threads)
    fig.ready_s = time.perf_counter() - began

    def stop() -> None:
        proc.terminate()
        proc.wait(timeout=30)

    return Running(fig, url, "model", stop)


async def start_runtime(name: str, model: Path, opts: argparse.Namespace, binary: Path | None) -> Running | Figures:  # fmt: skip
    fig = Figures(name)
    if binary is None:
        os.environ.pop(SERVER_ENV, None)
    else:
        os.environ[SERVER_ENV] = str(binary)
    entry = find(model.stem.lower())
    logs = opts.cache / "bench-local-logs"
    runtime = LocalRuntime(model, entry, threads=opts.threads, log_dir=logs)
    began = time.perf_counter()
    try:
        await runtime.start()
    except RuntimeUnavailable as exc:
        fig.note = f"skipped: {str(exc).splitlines()[0]}"
        print(f"  {name}: {fig.note}", flush=True)
        return fig
    fig.ready_s = time.perf_counter() - began
    return Running(fig, runtime.base_url, runtime.alias, runtime.stop_now)


async def measure(servers: list[Running], opts: argparse.Namespace) -> None:
    """Every server warmed up, then the runs interleaved (run 1 on each, run 2 on each...), so
    a change of load on the shared cores falls on all of them alike."""
    for s in servers:
        async with client(s.base_url) as c:
            await one_run(c, s.model, -1, 8)  # warm-up: the model's pages read in
    for run in range(opts.runs):
        for s in servers:
            async with client(s.base_url) as c:
                ttft, tps, n = await one_run(c, s.model, run, opts.tokens)
            s.fig.first_token_s.append(ttft)
            s.fig.tokens_per_s.append(tps)
            s.fig.tokens.append(n)
            print(f"  run {run + 1} {s.fig.server}: first token {ttft:.2f} s, {tps:.2f} tokens/s "
                  f"({n} tokens), load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip


def table(figures: list[Figures]) -> str:
    """Medians, and the best run of each (the least disturbed by other work on shared cores),
    each with its ratio to the baseline's."""
    base = next((f for f in figures if f.server == "direct" and f.tokens_per_s), None)
    rows = ["| server | ready after start | first token: median, best | tokens/s: median, best | ratio first token (median, best) | ratio tokens/s (median, best) |",  # fmt: skip
            "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for f in figures:
        if not f.tokens_per_s:
            rows.append(f"| {f.server} | {f.note or 'no figures'} | | | | |")
            continue
        ttft = (statistics.median(f.first_token_s), min(f.first_token_s))
        tps = (statistics.median(f.tokens_per_s), max(f.tokens_per_s))
        ratios = "- | -"
        if base is not None:
            b_ttft = (statistics.median(base.first_token_s), min(base.first_token_s))
            b_tps = (statistics.median(base.tokens_per_s), max(base.tokens_per_s))
            ratios = (f"{ttft[0] / b_ttft[0]:.2f}, {ttft[1] / b_ttft[1]:.2f} | "
                      f"{tps[0] / b_tps[0]:.2f}, {tps[1] / b_tps[1]:.2f}")  # fmt: skip
        rows.append(f"| {f.server} | {f.ready_s:.1f} s | {ttft[0]:.2f} s, {ttft[1]:.2f} s | "
                    f"{tps[0]:.2f}, {tps[1]:.2f} | {ratios} |")  # fmt: skip
    return "\n".join(rows)


async def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    model = opts.model or setup.model_file(opts.cache)
    binary = opts.binary
    if binary is None and {"direct", "runtime-binary"} & set(opts.servers):
        binary = setup.llama_server(opts.cache)
    print(f"model {model} ({model.stat().st_size / 2**20:.0f} MiB), {opts.threads} threads, "
          f"{opts.runs} runs of up to {opts.tokens} tokens, load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    figures: list[Figures] = []
    running: list[Running] = []
    try:
        for name in opts.servers:
            if name == "direct":
                assert binary is not None
                started: Running | Figures = start_direct(model, opts, binary)
            else:
                chosen = binary if name == "runtime-binary" else None
                started = await start_runtime(name, model, opts, chosen)
            if isinstance(started, Running):
                running.append(started)
                print(f"{name}: answering {started.fig.ready_s:.1f} s after its start", flush=True)
            figures.append(started.fig if isinstance(started, Running) else started)
        await measure(running, opts)
    finally:
        for s in running:
            s.stop()
    print(table(figures))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
