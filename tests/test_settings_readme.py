"""README.md's configuration table, .env.example and the code agree: every variable the code reads
is declared once (brainchat.settings.declared), documented with the same allowed values and
default, and refused just outside the documented range by the code that reads it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from brainchat.settings import load_settings
from brainchat.settings.declared import GROUPS, AppVars, LimitVars, StoreVars
from brainchat.settings.fields import bounds, choices, extra, number
from brainchat.settings.table import markdown, readme_table, rows
from brainchat.store.config import load_store_config

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| (.*?) \| (.*?) \| (.*) \|$")
OLD_ROW = re.compile(r"^\| (`[A-Z][A-Z0-9_]*`(?:, `[A-Z][A-Z0-9_]*`)*) \| (.*) \|$")  # 2 columns
# set by brainchat itself for its own child processes, not by an operator
INTERNAL = {"BRAINCHAT_DEMO", "BRAINCHAT_DEMO_STATE_DIR"}
DECLARED = {str(f.alias) for g in GROUPS for f in g.model_fields.values()}


def documented() -> dict[str, tuple[str, str]]:
    """README's rows: variable -> (allowed, default)."""
    out = {}
    for line in readme_table(ROOT / "README.md").splitlines():
        if m := ROW.match(line):
            out[m[1]] = (m[2], m[3])
        elif m := OLD_ROW.match(line):  # a table without its own columns for them
            out |= {name: ("?", "?") for name in re.findall(r"`([A-Z0-9_]+)`", m[1])}
    return out


def test_the_readme_documents_every_declared_variable_with_its_range_and_default() -> None:
    declared = {name: (a, d) for name, a, d, _ in rows()}
    readme = documented()
    problems = [f"not in README: {n}" for n in declared if n not in readme]
    problems += [f"in README but not declared: {n}" for n in readme if n not in declared]
    problems += [
        f"{n}: README says allowed {readme[n][0]!r}, default {readme[n][1]!r}; declared "
        f"{declared[n][0]!r}, default {declared[n][1]!r}"
        for n in declared.keys() & readme.keys()
        if readme[n] != declared[n]
    ]
    assert not problems, "\n".join(problems)
    # the help too, and the order: the table is written by `python -m brainchat.settings.table`
    assert readme_table(ROOT / "README.md") == markdown(), (
        "README.md's configuration table differs from the declarations: paste the output of "
        "`python -m brainchat.settings.table` over it"
    )


def test_every_variable_the_code_reads_is_declared() -> None:
    read = set()
    for path in (ROOT / "src" / "brainchat").rglob("*.py"):
        read |= set(
            re.findall(r'"((?:AGENT|BRAINCHAT|OPENAI|DEEPSEEK)_[A-Z0-9_]+)"', path.read_text())
        )
    assert read - INTERNAL - DECLARED == set()


def test_env_example_names_only_declared_variables_with_their_ranges() -> None:
    text = (ROOT / ".env.example").read_text()
    named = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, re.M))
    assert named - DECLARED == set(), "in .env.example but not declared"
    assert DECLARED - named == set(), "declared but not in .env.example"
    fields = {str(f.alias): f for g in GROUPS for f in g.model_fields.values()}
    for name, lo, hi in re.findall(r"^# ([A-Z_]+)=\S*\s+# ([\d.]+)-([\d.]+)", text, re.M):
        assert (lo, hi) == tuple(number(b) for b in bounds(fields[name])), name


NUMBERS = [
    (group, name)
    for group in (LimitVars, AppVars, StoreVars)
    for name, f in group.model_fields.items()
    if bounds(f) != (None, None)
]


def refused(group: type, variable: str, raw: str) -> bool:
    """Whether the code that reads `variable` reports `raw` as a problem."""
    if group is StoreVars:
        return any(variable in e for e in load_store_config({variable: raw}).errors)
    return any(e.variable == variable for e in load_settings({variable: raw}, dotenv=False).errors)


def value(group: type, name: str, env: dict[str, str]) -> object:
    if group is StoreVars:
        return getattr(load_store_config(env), name)
    settings = load_settings(env, dotenv=False)
    return getattr(settings.limits if group is LimitVars else settings, name)


@pytest.mark.parametrize(("group", "name"), NUMBERS, ids=[n for _, n in NUMBERS])
def test_the_documented_range_and_default_are_what_the_code_enforces(group, name) -> None:
    field = group.model_fields[name]
    variable, (lo, hi) = str(field.alias), bounds(field)
    assert value(group, name, {}) == field.default
    step = 1 if float(lo).is_integer() and float(hi).is_integer() else min(lo, 1) / 10
    for ok in (number(lo), number(hi)):
        assert not refused(group, variable, ok), f"{variable}={ok}"
    for bad in (number(lo - step), number(hi + step)):
        assert refused(group, variable, bad), f"{variable}={bad}"
        assert value(group, name, {variable: bad}) == field.default  # refused, not clamped


def test_the_settings_panel_offers_the_declared_ranges() -> None:
    from brainchat.session import Session
    from brainchat.ui import panel

    boxes = [
        w
        for w in panel.limit_widgets(Session(load_settings({}, dotenv=False)))
        if isinstance(w, panel.RangeInput)
    ]
    assert [w.id for w in boxes] == ["max_iterations", "max_execution_time"]
    for box in boxes:
        lo, hi = bounds(LimitVars.model_fields[box.id])
        assert (box.min, box.max) == (lo, hi) and f"({number(lo)}–{number(hi)})" in box.label


READ_HERE = [(g, n) for g in (LimitVars, AppVars, StoreVars) for n in g.model_fields]


@pytest.mark.parametrize(("group", "name"), READ_HERE, ids=[n for _, n in READ_HERE])
def test_the_documented_default_and_words_are_what_the_code_reads(group, name) -> None:
    field = group.model_fields[name]
    variable = str(field.alias)
    if not extra(field)["shown_default"]:  # the others are computed (a folder, a file)
        assert value(group, name, {}) == field.default
    for word in choices(field):
        assert not refused(group, variable, word), f"{variable}={word}"
        assert value(group, name, {variable: word.upper()}) == word
    if choices(field):
        assert refused(group, variable, "not-a-choice")
