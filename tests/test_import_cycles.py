"""No import circles inside brainchat, TYPE_CHECKING and in-function imports included.

import-linter's sibling contract skips TYPE_CHECKING imports (pyproject.toml) and sees only
siblings; this reads every import of every module with ast and fails on any circle, naming it.
A circle makes a reader hold several modules in mind at once, and a change in one reach the others.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The brainchat modules `name` imports, wherever the import stands in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:  # `from pkg import module` imports the module
                full = f"{base}.{alias.name}"
                out.add(full if full in modules else base)
    return {m for m in out if m in modules and m != name}


def graph(root: Path) -> dict[str, set[str]]:
    paths = {module_name(p, root): p for p in (root / "brainchat").rglob("*.py")}
    modules = set(paths)
    return {name: imports(path, name, modules) for name, path in paths.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_brainchat_has_no_import_circles() -> None:
    edges = graph(SRC)
    assert len(edges) > 100 and "brainchat.ui.state" in edges["brainchat.ui.conversation"]
    circles = cycles(edges)
    assert circles == [], "import circles (each a set of modules that reach each other):\n" + (
        "\n".join(" <-> ".join(c) for c in circles)
    )


def test_the_check_finds_a_circle_through_a_type_checking_import(tmp_path: Path) -> None:
    pkg = tmp_path / "brainchat" / "ui"
    pkg.mkdir(parents=True)
    (tmp_path / "brainchat" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from brainchat.ui import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from brainchat.ui.c import C\n"
    )
    (pkg / "c.py").write_text("def f():\n    from . import a\n")
    (pkg / "d.py").write_text("import brainchat.ui.a\n")
    assert cycles(graph(tmp_path)) == [["brainchat.ui.a", "brainchat.ui.b", "brainchat.ui.c"]]
