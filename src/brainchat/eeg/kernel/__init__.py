"""Each conversation's (and MCP session's) EEG study in a process of its own, a kernel.

`make_study` gives the study the settings ask for (BRAINCHAT_KERNELS): a `KernelStudy`, whose
tools run in its kernel, or an in-process `Study`; `study_tools` gives either's EEG tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from brainchat.eeg.kernel.pool import KernelPool

_POOL: KernelPool | None = None


def kernel_settings() -> dict[str, Any]:
    """The KernelVars in force (the environment and .env), checked."""
    from brainchat.settings.declared import KernelVars
    from brainchat.settings.fields import check
    from brainchat.settings.load import read_env

    env = read_env()
    out = {}
    for name, field in KernelVars.model_fields.items():
        raw = env.get(str(field.alias), "").strip()
        out[name] = check(KernelVars, name, raw) if raw else field.default
    return out


def shared_pool() -> KernelPool:
    """The process's kernels (made at the first study that needs one)."""
    global _POOL
    if _POOL is None:
        from brainchat.eeg.kernel.pool import KernelPool

        cfg = kernel_settings()
        _POOL = KernelPool(
            max_kernels=cfg["kernels_max"],
            per_user=cfg["kernels_per_user"],
            memory_mb=cfg["kernel_memory_mb"],
            idle_s=cfg["kernel_idle_s"],
        )
    return _POOL


def make_study(data_dir: Path | str, max_operation_mb: int | None) -> Any:
    """A study in a kernel of its own, or in this process (BRAINCHAT_KERNELS=inline)."""
    if kernel_settings()["kernels"] == "inline":
        from brainchat.eeg.study.study import Study

        return Study(data_dir, max_operation_mb)
    from brainchat.eeg.kernel.client import KernelStudy

    return KernelStudy(data_dir, max_operation_mb, shared_pool())


def study_tools(study: Any) -> list[BaseTool]:
    """The EEG tools of `study`, wherever it runs."""
    from brainchat.eeg.kernel.client import KernelStudy

    if isinstance(study, KernelStudy):
        from brainchat.eeg.kernel.client import kernel_tools

        return kernel_tools(study)
    from brainchat.eeg.tools.tools import build_eeg_tools

    return build_eeg_tools(study)


async def export_study(study: Any) -> Any:
    """Export `study` as it is now, wherever it runs (export/export.py's Exported)."""
    from brainchat.eeg.kernel.client import KernelStudy

    if isinstance(study, KernelStudy):
        return await study.export()
    from brainchat.eeg.tools.toolkit import export_study as export_here

    return await export_here(study)
