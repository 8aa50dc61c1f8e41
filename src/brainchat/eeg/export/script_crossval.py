"""A cross_validate step of the study as code of the exported script.

The script reruns it with brainchat's own fold, pipeline, scorer and statistics code, copied into
it from eeg/protocols/ (as the networks are copied from decoding/models.py): one implementation,
so the script's folds, seeds and statistics cannot drift from the study's. What runs them is the
"crossval" section of script_helpers_crossval.py.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any

CROSSVAL_HELPERS = Path(__file__).with_name("script_helpers_crossval.py")
NETWORKS = ("eegnet", "shallowconvnet", "sccnet")
RIEMANN = ("ts_lr", "mdm")


def crossval_call(config: dict[str, Any]) -> str:
    """The script's line for one cross_validate entry (its configuration, as logged)."""
    return (
        f"cross_validate(epochs, protocol={config['protocol']!r}, "
        f"pipelines={list(config['pipelines'])!r}, folds={config['folds']!r}, "
        f"permutations={config['permutations']!r}, seed={config['seed']!r}, "
        f"net_epochs={config['epochs']!r})"
    )


def _section(name: str) -> str:
    text = CROSSVAL_HELPERS.read_text(encoding="utf-8")
    return text.split(f"# === section: {name}\n", 1)[1].split("# === end", 1)[0].strip() + "\n"


def _copied() -> str:
    """brainchat's folds, pipelines, scorer and statistics, as source text."""
    from brainchat.eeg.protocols import crossval, folds, pipelines, report, splits, stats

    constants = "\n".join(
        f"{name} = {getattr(module, name)!r}"
        for module, name in (
            (splits, "PROTOCOLS"),
            (pipelines, "CLASSICAL"),
            (pipelines, "NETWORKS"),
            (pipelines, "PIPELINES"),
            (pipelines, "FB_BANDS"),
            (pipelines, "PER_TRIAL_COVARIANCE"),
        )
    )
    parts: list[Any] = [
        splits.ProtocolError, splits.Fold, splits.make_folds, splits._ordered,
        splits._within_session, splits._cross_session, splits._cross_subject,
        pipelines.build, pipelines._whole, pipelines.bands_below, pipelines.FilterBankCSP,
        folds.scorer_name, folds.score, folds.PartScore, folds.part_score, crossval.scored_parts,
        stats.FoldRecord, stats.PipelineSummary, stats.PairedTest, stats._mean, stats._spread,
        stats._p, stats.summarise, stats._by_subject, stats.paired_tests, stats._few_differences,
        crossval.unscored_notes, report.chance_text, report.shows_balanced,
    ]  # fmt: skip
    code = "\n\n".join(textwrap.dedent(inspect.getsource(p)).strip() for p in parts)
    imports = (
        "import math\nimport warnings\nfrom dataclasses import dataclass, field\n"
        "from types import SimpleNamespace\n\n"
        "from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin\n"
    )
    return imports + "\n" + constants + "\n\n\n" + code + "\n"


def crossval_source(networks: bool) -> str:
    """The helpers a script with a cross_validate step needs (after the torch section, when a
    network is cross-validated)."""
    head = "# ---- cross-validation (brainchat.eeg.protocols) " + "-" * 42 + "\n"
    torch_part = "\n\n" + _section("crossval_torch") if networks else ""
    return head + _copied() + "\n\n" + _section("crossval") + torch_part


def needs(log: list[dict[str, Any]]) -> set[str]:
    """The pipelines cross-validated in `log` (which packages the script needs)."""
    return {p for e in log if e.get("op") == "crossval" for p in e["config"]["pipelines"]}
