"""Every model-setting block in README.md and the in-app readme works when pasted.

Pasted into a terminal, a block must export its variables (a bare `NAME=value` never reaches the
app); put into `.env`, python-dotenv must read the same values; and the app must accept them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dotenv import dotenv_values

from brainchat.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "chainlit.md")
ASSIGNMENT = re.compile(r"^(export\s+)?([A-Z][A-Z0-9_]*)=")


def bash_blocks(name: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", (ROOT / name).read_text(), re.S)


def setting_blocks(name: str) -> list[str]:
    """The blocks that set variables (every code line an assignment)."""
    out = []
    for block in bash_blocks(name):
        lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
        if lines and all(ASSIGNMENT.match(ln) for ln in lines):
            out.append(block)
    return out


def exported(block: str, tmp_path: Path) -> dict[str, str]:
    """What a program started after pasting `block` into bash sees."""
    script = tmp_path / "paste.sh"
    dump = "import json, os; print(json.dumps(dict(os.environ)))"
    script.write_text(f"{block}\n{sys.executable} -c '{dump}'\n")
    done = subprocess.run(["bash", "-e", str(script)], capture_output=True, text=True, env={})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", DOCS)
def test_no_bash_block_assigns_without_export(name):
    for block in bash_blocks(name):
        for line in block.splitlines():
            m = ASSIGNMENT.match(line)
            assert not m or m.group(1), f"{name}: `{line}` is not exported when pasted"


@pytest.mark.parametrize("name", DOCS)
def test_setting_blocks_work_in_a_terminal_and_in_dotenv_and_the_app_accepts_them(name, tmp_path):
    blocks = setting_blocks(name)
    assert blocks, f"{name} has no model-setting block"
    for block in blocks:
        names = [ASSIGNMENT.match(ln).group(2) for ln in block.splitlines() if ASSIGNMENT.match(ln)]
        assert len(names) == len(set(names)), f"{name}: a variable set twice in one block: {names}"
        env = exported(block, tmp_path)
        dotenv_file = tmp_path / ".env"
        dotenv_file.write_text(block)
        from_dotenv = dotenv_values(dotenv_file)
        assert {k: env[k] for k in names} == {k: from_dotenv[k] for k in names}
        settings = load_settings({k: env[k] for k in names}, dotenv=False)
        assert settings.errors == (), f"{name}: {settings.errors}"
        assert settings.models, f"{name}: the block configures no model"
        for spec in settings.models.values():
            assert ":8000/" not in str(spec.base_url or ""), "8000 is brainchat's own port"


def test_in_app_readme_names_the_offline_demo_and_no_model_on_the_apps_port():
    text = (ROOT / "chainlit.md").read_text()
    assert "brainchat --demo" in text
    assert "localhost:8000/v1" not in text  # the app's own port is no model server
