"""Scenario files (evals/<suite>/*.json): a question, its set-up, a scripted pair's replies, checks.

The format is documented in evals/README.md; `load_suite` validates every file and names the
file and the field that is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from brainchat.testing.replies import Reply, Text, reply_from_dict

SETUP_KEYS = {"demo_data", "search_fixture", "study", "mcp", "limits", "approve", "tool_calling",
              "knowledge"}  # fmt: skip
CHECK_KEYS = {"tools", "study", "answer", "limits", "plan"}
TOP_KEYS = {"name", "description", "question", "setup", "script", "checks", "tags", "planted"}


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message names the file and the field."""


@dataclass
class Scenario:
    """One golden-set case."""

    name: str
    question: str
    path: Path
    description: str = ""
    setup: dict[str, Any] = field(default_factory=dict)
    script: dict[str, list[Reply]] = field(default_factory=dict)  # role -> scripted replies
    checks: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    planted: str = ""  # a false claim the answer check must flag when added to the answer

    def with_planted(self) -> Scenario:
        """The same scenario whose scripted answer ends with its planted false claim; it passes
        when the answer check flags that claim."""
        answer = list(self.script.get("answer", []))
        if not self.planted or not answer:
            raise ScenarioError(
                f"{self.path}: no planted claim or no scripted answer to plant it in"
            )
        last = answer[-1]
        if not isinstance(last, Text):
            raise ScenarioError(f"{self.path}: the last scripted answer is no text reply")
        answer[-1] = replace(last, content=f"{last.content}\n\n{self.planted}")
        script = {**self.script, "answer": answer}
        checks = {"answer": {"flagged": self.planted}}
        return replace(self, name=f"{self.name}+planted", script=script, checks=checks)


def parse_scenario(data: Any, path: Path) -> Scenario:
    """Validate one scenario's JSON; raise ScenarioError naming what is wrong."""
    where = str(path)
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a scenario is a JSON object, got {type(data).__name__}")
    _known(where, "scenario", data, TOP_KEYS)
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ScenarioError(f"{where}: 'question' must be a non-empty string")
    setup = _mapping(where, "setup", data.get("setup", {}))
    _known(where, "setup", setup, SETUP_KEYS)
    checks = _mapping(where, "checks", data.get("checks", {}))
    _known(where, "checks", checks, CHECK_KEYS)
    if not checks:
        raise ScenarioError(f"{where}: 'checks' is empty; a scenario must check something")
    script: dict[str, list[Reply]] = {}
    for role, replies in _mapping(where, "script", data.get("script", {})).items():
        if role not in ("function_call", "answer"):
            raise ScenarioError(f"{where}: script role {role!r}; allowed: function_call, answer")
        if not isinstance(replies, list):
            raise ScenarioError(f"{where}: script.{role} must be a list of reply objects")
        try:
            script[role] = [reply_from_dict(r) for r in replies]
        except (ValueError, TypeError, AttributeError) as exc:
            raise ScenarioError(f"{where}: script.{role}: {exc}") from None
    return Scenario(
        name=str(data.get("name") or path.stem),
        question=question,
        path=path,
        description=str(data.get("description", "")),
        setup=setup,
        script=script,
        checks=checks,
        tags=[str(t) for t in data.get("tags", [])],
        planted=str(data.get("planted") or ""),
    )


def _mapping(where: str, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: '{key}' must be an object, got {type(value).__name__}")
    return value


def _known(where: str, what: str, data: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ScenarioError(
            f"{where}: unknown {what} field(s) {unknown}; allowed: {sorted(allowed)}"
        )


def suite_dir(root: Path, suite: str) -> Path:
    """The folder of a suite: `evals/<suite>`, or a folder path given directly."""
    direct = Path(suite)
    if direct.is_dir():
        return direct
    folder = root / suite
    if not folder.is_dir():
        found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise ScenarioError(
            f"suite {suite!r} not found under {root}; suites there: {', '.join(found) or 'none'}"
        )
    return folder


def load_suite(folder: Path) -> list[Scenario]:
    """Every *.json scenario in a suite folder, sorted by file name; names must be unique."""
    scenarios: list[Scenario] = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{path}: not valid JSON ({exc})") from None
        scenarios.append(parse_scenario(data, path))
    if not scenarios:
        raise ScenarioError(f"{folder}: no scenario files (*.json) in this suite")
    names = [s.name for s in scenarios]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ScenarioError(f"{folder}: scenario names must be unique; repeated: {dupes}")
    return scenarios
