"""The code stays in pieces a reader can hold: no module over 400 lines, no function over 60.

A function's length runs from its `def` line to its last line (docstring and nested functions
included, decorators not). The failure lists every offender, longest first.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "brainchat"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def too_long() -> list[tuple[int, str]]:
    """(lines, "where: what") for each module and function over its limit."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found.append((lines, f"{where}: module"))
        for node in ast.walk(ast.parse(text, filename=where)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append((length, f"{where}:{node.lineno}: {node.name}()"))
    return sorted(found, reverse=True)


def test_no_module_or_function_is_over_its_limit() -> None:
    over = [f"{where} is {lines} lines" for lines, where in too_long()]
    assert not over, (
        f"over {MAX_MODULE_LINES} lines a module or {MAX_FUNCTION_LINES} a function "
        "(split by what each part does):\n" + "\n".join(over)
    )
