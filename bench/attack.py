"""Run every attack of issue #21 against a real app and print how many were refused.

Each attack is a test under tests/security/ marked `attack`: it starts the real app (real
accounts, real HTTP and socket.io, a real browser where the attack needs one), performs the
attack as an outsider or another account would, and passes only when the app refuses it. This
script runs exactly those tests and counts them; a failed test is an attack that got through.

    .venv/bin/python bench/attack.py            # prints "N attacks, N refused"
    .venv/bin/python bench/attack.py -k ssrf    # extra arguments go to pytest
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(extra: list[str]) -> tuple[list[tuple[str, str]], float]:
    """Run the marked tests; return (test id, outcome) pairs and the wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "attacks.xml"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "attack",
             f"--junitxml={report}", f"--basetemp={tmp}/pt", "tests/security", *extra],
            cwd=ROOT, check=False,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        if not report.exists():
            return [], elapsed
        results = []
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            if case.find("skipped") is not None:
                outcome = "skipped"
            elif case.find("failure") is not None or case.find("error") is not None:
                outcome = "got through"
            else:
                outcome = "refused"
            results.append((name, outcome))
        return results, elapsed


def main() -> int:
    results, elapsed = run(sys.argv[1:])
    if not results:
        print("no attack ran (is the marker 'attack' on the tests?)")
        return 1
    width = max(len(name) for name, _ in results)
    for name, outcome in results:
        print(f"{name:<{width}}  {outcome}")
    refused = sum(outcome == "refused" for _, outcome in results)
    print(
        f"\n{len(results)} attacks, {refused} refused ({refused / len(results):.0%}) in {elapsed:.0f} s"
    )
    return 0 if refused == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
