"""`import brainchat.app` stays light: no torch, mne or matplotlib at import time."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_the_app_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys, json, brainchat.app, brainchat.ui.render, brainchat.ui.panel; "
        "print(json.dumps([m for m in ('torch', 'mne', 'matplotlib', 'sklearn') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
