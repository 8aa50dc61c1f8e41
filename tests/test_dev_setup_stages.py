"""A first `bash scripts/dev.sh run` says what it installs as it goes (#40), offline.

Before: it printed one line ("installing . into .venv") and then nothing for 3.5 minutes while
pip ran quietly (-q). Here the real script runs against a stand-in interpreter whose pip prints
what pip prints (no network: the machine reaches package registries only, and tests none).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIP_OUTPUT = """Obtaining file:///work/main
  Installing build dependencies: started
Collecting chainlit==2.12.0 (from brainchat==0.1.0)
  Downloading chainlit-2.12.0-py3-none-any.whl (10.1 MB)
Collecting torch==2.13.0 (from brainchat==0.1.0)
WARNING: Location 'file:///opt/pypi-more/simple/mne/' is ignored: it is neither a file nor a directory.
Requirement already satisfied: numpy in ./venv/lib/python3.11/site-packages (2.3.0)
Collecting mne>=1.13 (from brainchat==0.1.0)
Installing collected packages: torch, mne, chainlit, brainchat
Successfully installed brainchat-0.1.0 chainlit-2.12.0 mne-1.13.0 torch-2.13.0
"""
PIP_FAILURE = """Collecting chainlit==2.12.0 (from brainchat==0.1.0)
ERROR: Could not find a version that satisfies the requirement torch==2.13.0 (from brainchat)
ERROR: No matching distribution found for torch==2.13.0
"""
# `python -m venv DIR` makes DIR/bin/python: pip prints $FAKE_PIP (exits $FAKE_PIP_RC), any
# other use is the real interpreter; DIR/bin/brainchat prints the usage line
FAKE_PY = f"""#!/bin/sh
if [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin"
  cat >"$3/bin/python" <<'SH'
#!/bin/sh
if [ "$1" = -m ] && [ "$2" = pip ]; then
  case "$*" in *--upgrade*) exit 0 ;; esac
  echo "pip $*" >>"$FAKE_PIP_CALLS"; cat "$FAKE_PIP"; exit "${{FAKE_PIP_RC:-0}}"
fi
exec {sys.executable} "$@"
SH
  printf '#!/bin/sh\\necho "Usage: brainchat run"\\n' >"$3/bin/brainchat"
  chmod +x "$3/bin/python" "$3/bin/brainchat"
  exit 0
fi
exec {sys.executable} "$@"
"""


def dev_run(tmp_path: Path, pip_output: str, rc: int = 0) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "python-fake"
    fake.write_text(FAKE_PY)
    fake.chmod(0o755)
    (tmp_path / "pip-output").write_text(pip_output)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update({"PYTHON": str(fake), "BRAINCHAT_VENV": str(tmp_path / "venv"),
                "FAKE_PIP": str(tmp_path / "pip-output"), "FAKE_PIP_RC": str(rc),
                "FAKE_PIP_CALLS": str(tmp_path / "pip-calls")})  # fmt: skip
    return subprocess.run(["bash", "scripts/dev.sh", "run", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_a_first_run_names_each_stage_and_each_package_as_it_goes(tmp_path: Path) -> None:
    import tomllib

    direct = len(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    done = dev_run(tmp_path, PIP_OUTPUT)
    assert done.returncode == 0, done.stderr
    venv = tmp_path / "venv"
    assert done.stderr.splitlines() == [
        f"creating the virtual environment {venv}",
        f"installing . into {venv}: brainchat and its {direct} packages with what they need "
        "(pyproject.toml is new or changed, first time: about 3 minutes)",
        "  upgrading pip",
        "  [1] chainlit==2.12.0",
        "  [2] torch==2.13.0",
        "  [3] mne>=1.13",
        "  unpacking 4 packages (quiet for a minute or two)...",
        "  installed 4 packages",
    ]
    assert "Usage: brainchat run" in done.stdout  # then the app starts, as README says
    assert "--progress-bar off -e ." in (tmp_path / "pip-calls").read_text()  # pip is not -q
    assert "Obtaining" in (venv / "pip-install.log").read_text()  # pip's whole output is kept
    again = dev_run(tmp_path, PIP_OUTPUT)  # installed: a second start says nothing
    assert again.returncode == 0 and again.stderr == "" and "Usage" in again.stdout


def test_a_failed_install_shows_pips_errors_and_where_its_whole_output_is(tmp_path: Path) -> None:
    done = dev_run(tmp_path, PIP_FAILURE, rc=1)
    assert done.returncode == 1 and "Usage" not in done.stdout
    lines = done.stderr.splitlines()
    assert "ERROR: No matching distribution found for torch==2.13.0" in lines
    assert (
        lines[-1] == f"the install failed: pip's whole output is in {tmp_path}/venv/pip-install.log"
    )
    assert not (tmp_path / "venv" / ".brainchat-installed").exists()  # tried again next time
