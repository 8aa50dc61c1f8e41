"""How results are shown: JSON lines, a progress bar, a table per pair, a markdown report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from brainchat.evals.harness import PairSummary, Result

COLUMNS = (
    ("pair", "pair"),
    ("pass rate", "pass_rate"),
    ("passed", "passed"),
    ("failures by check", "failures_by_check"),
    ("valid calls", "tool_call_validity"),
    ("rounds", "rounds"),
    ("tokens", "tokens"),
    ("cost $", "cost"),
    ("ttft s", "mean_ttft"),
    ("total s", "total_seconds"),
)


class Progress:
    """A one-line progress bar on a terminal stream (stderr), redrawn as results arrive."""

    def __init__(self, total: int, out: TextIO = sys.stderr, width: int = 30) -> None:
        self.total, self.done, self.failed, self.out, self.width = total, 0, 0, out, width

    def update(self, result: Result) -> None:
        self.done += 1
        self.failed += not result.passed
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        mark = "ok" if result.passed else "FAIL"
        self.out.write(
            f"\r[{bar}] {self.done}/{self.total} ({self.failed} failed) {mark} {result.scenario[:40]:<40}"
        )
        if self.done == self.total:
            self.out.write("\n")
        self.out.flush()


def summary_dict(summaries: list[PairSummary]) -> dict[str, Any]:
    """The last JSON object: overall pass rate and each pair's aggregates."""
    scenarios = sum(s.scenarios for s in summaries)
    passed = sum(s.passed for s in summaries)
    return {
        "type": "summary",
        "pass_rate": round(passed / scenarios, 4) if scenarios else 0.0,
        "passed": passed,
        "scenarios": scenarios,
        "pairs": [s.to_dict() for s in summaries],
    }


def json_lines(results: list[Result], summaries: list[PairSummary]) -> list[str]:
    return [json.dumps(r.to_dict(), default=str) for r in results] + [
        json.dumps(summary_dict(summaries), default=str)
    ]


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key == "failures_by_check":
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    if key in ("pass_rate", "tool_call_validity"):
        return f"{value:.0%}"
    if key == "cost":
        return f"{value:.5f}"
    return str(value)


def rows(summaries: list[PairSummary]) -> list[list[str]]:
    return [[_cell(k, s.to_dict()[k]) for _, k in COLUMNS] for s in summaries]


def table(summaries: list[PairSummary]) -> str:
    """A plain-text table, one row per model pair."""
    head = [h for h, _ in COLUMNS]
    body = rows(summaries)
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, body)])


def markdown(suite: str, results: list[Result], summaries: list[PairSummary]) -> str:
    """The markdown report: the table, then every failed scenario with its failures."""
    head = [h for h, _ in COLUMNS]
    out = [f"# brainchat eval: suite `{suite}`", ""]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows(summaries)]
    failed = [r for r in results if not r.passed]
    out += ["", f"## Failed scenarios ({len(failed)})", ""]
    for r in failed:
        out.append(f"- **{r.scenario}** ({r.pair.name}):")
        out += [f"  - `{f['check']}`: {f['message']}" for f in r.failures]
    if not failed:
        out.append("None.")
    return "\n".join(out) + "\n"


def write_reports(
    folder: Path, suite: str, results: list[Result], summaries: list[PairSummary]
) -> tuple[Path, Path]:
    """results.json (every run and the summary) and report.md in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "suite": suite,
        "results": [r.to_dict() for r in results],
        "summary": summary_dict(summaries),
    }
    js = folder / "results.json"
    js.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    md = folder / "report.md"
    md.write_text(markdown(suite, results, summaries), encoding="utf-8")
    return js, md
