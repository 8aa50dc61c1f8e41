"""The agent core names no EEG tool: what it knows of the field comes through the domain
interface (brainchat.domain), which eeg/guidance implements. A string literal in agent/ (or the
answer check) that names an EEG tool is knowledge in the wrong place."""

from __future__ import annotations

import ast
from pathlib import Path

from brainchat.eeg.guidance.steps import STEPS

SRC = Path(__file__).resolve().parents[1] / "src" / "brainchat"
CORE = [*sorted((SRC / "agent").glob("*.py")), *sorted((SRC / "grounding").glob("*.py")), SRC / "domain.py"]  # fmt: skip
EEG_TOOLS = {tool for step in STEPS for tool in step.tools}


def literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module (docstrings and comments are prose, not knowledge)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_no_string_in_the_agent_core_names_an_eeg_tool() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {text[:60]!r}"
        for path in CORE
        for line, text in literals(path)
        for tool in EEG_TOOLS
        if tool in text
    ]
    assert not found, "EEG knowledge belongs in eeg/guidance/:\n" + "\n".join(found)


def test_the_check_sees_a_planted_name(tmp_path: Path) -> None:
    planted = tmp_path / "m.py"
    planted.write_text('"""doc names load_data."""\nX = "call epoch_data first"\n')
    assert [text for _, text in literals(planted)] == ["call epoch_data first"]
