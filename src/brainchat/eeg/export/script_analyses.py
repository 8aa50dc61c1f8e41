"""The analysis steps of the study (eeg/core/analyses.py) as code of the exported script.

Each analysis is computed in the script by the same entry function brainchat ran, its source
(and that of the functions it calls) copied from its module in eeg/analysis/, as the
cross-validation's code is: one implementation, so the script's numbers cannot drift from the
study's. Its result joins RESULTS["analyses"] with its op and parameters.
"""

from __future__ import annotations

import importlib
import inspect
import textwrap
from typing import Any

from brainchat.eeg.core.analyses import ANALYSES

INPUT = '''def analysis_data(scope: dict) -> dict:
    """What an analysis reads: the recordings, their names, the epochs and a fitted ICA."""
    return {
        "raws": scope["raws"],
        "names": [r["file"] for r in scope["RECORDINGS"]],
        "epochs": scope.get("epochs"),
        "ica": scope.get("ica"),
    }
'''


def analysis_call(entry: dict[str, Any]) -> str:
    """The script's lines for one analysis entry of the log."""
    spec = ANALYSES[entry["op"]]
    params = dict(entry.get("params") or {})
    return (
        f"result = {spec.entry}(analysis_data(globals()), **{params!r})\n"
        f"RESULTS.setdefault('analyses', []).append("
        f"{{'op': {spec.op!r}, 'params': {params!r}, 'result': result}})\n"
        f"log({spec.about!r} + ' done')"
    )


def _module_source(module_name: str) -> str:
    module = importlib.import_module(f"brainchat.eeg.analysis.{module_name}")
    parts = []
    for name in module.EXPORTED:
        value = getattr(module, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            parts.append(textwrap.dedent(inspect.getsource(value)).strip())
        else:  # a constant the functions read
            parts.append(f"{name} = {value!r}")
    return "\n\n\n".join(parts)


def analyses_source(ops: set[str]) -> str:
    """The functions a script with these analysis steps needs (empty: none)."""
    if not ops:
        return ""
    modules = sorted({ANALYSES[op].module for op in ops})
    head = "# ---- analyses (brainchat.eeg.analysis) " + "-" * 52 + "\n"
    body = "\n\n\n".join(_module_source(m) for m in modules)
    return head + "import math\nimport warnings\n\n\n" + INPUT + "\n\n" + body + "\n"
