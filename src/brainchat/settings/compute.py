"""The operator's compute variables: where cross-validation folds run, where each study runs
(its kernel), and the demo's pace. Declared as every group is (settings/declare.py)."""

from __future__ import annotations

from typing import Literal

from brainchat.settings.declare import Declared, var


class ComputeVars(Declared):
    """Where cross-validation folds run (read at each run by eeg/protocols/runner.py); operator
    settings only: never set from the settings panel."""

    cv_workers: int = var(
        1,
        "BRAINCHAT_CV_WORKERS",
        "local processes that run a cross-validation's folds and pipelines in parallel (`1`: "
        "in the app's process); one cross-validation at a time uses them",
        ge=1,
        le=64,
        unit="processes",
    )
    dask_scheduler: str | None = var(
        None,
        "BRAINCHAT_DASK_SCHEDULER",
        "run cross-validation folds on this Dask distributed cluster instead of locally (its "
        "workers need brainchat installed); see [Past one machine](#past-one-machine)",
        allowed="`tcp://host:port` or `tls://host:port`",
    )


class KernelVars(Declared):
    """Where each study runs (read when the process's first study is made, eeg/kernel/);
    operator settings only: never set from the settings panel."""

    kernels: Literal["process", "inline"] = var(
        "process",
        "BRAINCHAT_KERNELS",
        "where each conversation's (and MCP session's) EEG study runs",
        choices={
            "process": "a process of its own (a kernel): Stop ends it at once, a crash or the "
            "memory limit ends only it",
            "inline": "in the app's process (one process to debug)",
        },
    )
    kernel_memory_mb: int = var(
        8_000,
        "BRAINCHAT_KERNEL_MEMORY_MB",
        "the memory (its heap and arrays, not reserved address space) the operating system "
        "lets one study's process use; past it the step fails with a clear message and the "
        "app goes on (`0`: no limit)",
        ge=0,
        le=10_000_000,
        unit="MB",
    )
    kernels_max: int = var(
        8,
        "BRAINCHAT_KERNELS_MAX",
        "study processes running at once; another study waits in a queue (its place shown "
        "in the step's title) or ends the least recently used idle one",
        ge=1,
        le=1_000,
        unit="processes",
    )
    kernels_per_user: int = var(
        2,
        "BRAINCHAT_KERNELS_PER_USER",
        "study processes one user (one data folder) may run at once",
        ge=1,
        le=1_000,
        unit="processes",
    )
    kernel_idle_s: int = var(
        900,
        "BRAINCHAT_KERNEL_IDLE_S",
        "a study process idle this long ends; its study is replayed from its log at its next use",
        ge=1,
        le=604_800,
        unit="seconds",
    )


class PublicDataVars(Declared):
    """Where fetch_dataset reads OpenNeuro (read at each fetch, eeg/tools/fetch_tool.py);
    operator settings only: no tool argument and no settings panel sets it."""

    openneuro_url: str | None = var(
        None,
        "BRAINCHAT_OPENNEURO_URL",
        "where `fetch_dataset` lists and downloads OpenNeuro data sets: a mirror of OpenNeuro's "
        "S3 bucket that answers its `?list-type=2&prefix=dsXXXXXX/` listing (a lab's copy, or "
        "none to reach openneuro.org's bucket)",
        allowed="an http(s) URL",
        shown_default="`https://s3.amazonaws.com/openneuro.org`",
    )


class DemoVars(Declared):
    """`brainchat --demo` (demo/): read when the demo's scripted models start."""

    demo_pace: float = var(
        1.0,
        "BRAINCHAT_DEMO_PACE",
        "how fast the `--demo` models stream: `1` like a served model (0.3 s to the first "
        "token, then 0.02 s a token), `0` every reply at once, `2` half as fast",
        ge=0,
        le=10,
    )
