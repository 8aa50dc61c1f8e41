"""`brainchat eval`: parse the options, run the suite, print JSON lines or a table and reports."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from brainchat.evals.harness import run_suite, summarize
from brainchat.evals.pairs import resolve_pairs
from brainchat.evals.report import Progress, json_lines, table, write_reports
from brainchat.evals.scenario import ScenarioError, load_suite, suite_dir
from brainchat.settings import ConfigError, load_settings


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="brainchat eval", description="Run a golden-set suite against model pairs."
    )
    p.add_argument("--suite", default="scripted", help="a suite under evals/, or a folder")
    p.add_argument(
        "--models",
        nargs="+",
        default=None,
        help="pairs: 'scripted', a configured model's name, a JSON spec, or FC+ANSWER "
        "(default: the configured models, else 'scripted')",
    )
    p.add_argument(
        "--json", action="store_true", help="one JSON object per scenario, then a summary"
    )
    p.add_argument("--concurrency", type=int, default=4, help="scenarios run at once (default 4)")
    p.add_argument("--evals-dir", type=Path, default=Path("evals"), help="where suites live")
    p.add_argument("--report-dir", type=Path, default=Path("eval-report"), help="JSON + markdown")
    p.add_argument("--only", nargs="+", default=None, help="run only these scenario names")
    p.add_argument(
        "--scenario-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="each run's time limit (default: AGENT_MAX_EXECUTION_TIME, else 60); the harness "
        "waits that plus the answer's share and a minute",
    )
    p.add_argument(
        "--planted",
        action="store_true",
        help="run each scenario's copy with its planted false claim in the answer: a copy "
        "passes when the answer check flags that claim",
    )
    return p


def main(args: list[str]) -> int:
    """Exit 0 when every scenario passed, 1 when some failed, 2 on bad options or files."""
    opts = parser().parse_args(args)
    if opts.concurrency < 1:
        print("--concurrency must be at least 1", file=sys.stderr)
        return 2
    if opts.scenario_timeout is not None and not 1 <= opts.scenario_timeout <= 86_400:
        print("--scenario-timeout must be between 1 and 86400 seconds", file=sys.stderr)
        return 2
    try:
        scenarios = load_suite(suite_dir(opts.evals_dir, opts.suite))
        settings = load_settings()
        pairs = resolve_pairs(opts.models, settings, dict(os.environ))
    except (ScenarioError, ConfigError) as exc:
        print(f"brainchat eval: {exc}", file=sys.stderr)
        return 2
    limit = opts.scenario_timeout or settings.limits.max_execution_time
    if opts.only:
        missing = sorted(set(opts.only) - {s.name for s in scenarios})
        if missing:
            print(f"brainchat eval: no scenario named {missing} in the suite", file=sys.stderr)
            return 2
        scenarios = [s for s in scenarios if s.name in opts.only]
    if opts.planted:
        scenarios = [s.with_planted() for s in scenarios if s.planted]
    progress = Progress(len(scenarios) * len(pairs))
    results = asyncio.run(
        run_suite(
            scenarios,
            pairs,
            concurrency=opts.concurrency,
            on_result=progress.update,
            time_limit=limit,
        )
    )
    summaries = summarize(results)
    if opts.json:
        print("\n".join(json_lines(results, summaries)), flush=True)
    else:
        print(table(summaries))
        js, md = write_reports(opts.report_dir, opts.suite, results, summaries)
        print(f"\nreports: {js} and {md}")
    return 0 if all(r.passed for r in results) else 1
