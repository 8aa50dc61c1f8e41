"""The memory a study operation needs, estimated before it runs (BRAINCHAT_MAX_OPERATION_MB).

One tool call could take the machine: `resample_data(10000)` on three small files held 1 GB.
Each memory-heavy operation (resampling, filtering, ICA, epoching) first estimates what it will
allocate from the loaded data's shape (samples are float64, 8 bytes) and is refused with the
figure, the limit and what to do instead when that is over the limit. The estimates count what
the operation keeps plus its largest working copy; they are rough (within a factor of about two)
and err on the high side.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.state import Op, StudyState
from brainchat.settings import OPERATION_ENV

SAMPLE = 8  # bytes: MNE holds data as float64
MB = 2**20
FILTER_BLOCK = 8  # channels filtered at once (preprocessing._by_channel_blocks)
Need = tuple[int, str, str]  # bytes, what the operation is, what to do instead


def data_bytes(raw: Any) -> int:
    return len(raw.ch_names) * raw.n_times * SAMPLE


def step_need(op: str, params: dict[str, Any]) -> Callable[[StudyState], Need]:
    """The estimate of a preprocessing step (see `preprocessing.apply_step`)."""

    def need(state: StudyState) -> Need:
        raws = state.raws
        if not raws:
            return 0, op, ""
        if op == "resample":
            new = [data_bytes(r) * params["sfreq"] / r.info["sfreq"] for r in raws]
            # the resampled data, plus a working copy of the largest recording while it is made
            return (
                int(sum(new) + max(new)),
                f"resampling to {params['sfreq']:g} Hz",
                "resample to a lower rate, or load fewer or shorter files",
            )
        if op in ("bandpass", "notch"):  # a few channels at a time, FFT buffers ~3x their size
            longest = max(r.n_times for r in raws)
            return 3 * FILTER_BLOCK * longest * SAMPLE, f"the {op} filter", "load shorter files"
        if op == "ica":  # ICA.apply unmixes and mixes one recording at a time: two copies
            biggest = max(data_bytes(r) for r in raws)
            return 2 * biggest, "applying ICA", "load fewer or shorter files"
        if op == "bad_channels" and params.get("action") == "interpolate":  # reads the good ones
            return max(data_bytes(r) for r in raws), "interpolating bad channels", "drop them"
        return 0, op, ""  # reference, channel selection, montage, other bad marks: no copy

    return need


def ica_fit_need(state: StudyState) -> Need:
    """Joined copies of the recordings (when more than one), the decimated data fitted, twice."""
    if not state.raws:
        return 0, "ICA", ""
    total = sum(data_bytes(r) for r in state.raws)
    decim = max(1, int(state.raws[0].info["sfreq"] // 100))
    joined = total if len(state.raws) > 1 else 0
    return joined + 2 * total // decim, "fitting ICA", "load fewer or shorter files"


def epoch_need(tmin: float, tmax: float) -> Callable[[StudyState], Need]:
    """Every annotated event's epoch, held by MNE and once more when stacked."""

    def need(state: StudyState) -> Need:
        total = 0
        for raw in state.raws:
            samples = math.floor((tmax - tmin) * raw.info["sfreq"]) + 1
            total += len(raw.annotations) * len(raw.ch_names) * samples * SAMPLE
        return (
            2 * total,
            f"epochs of {tmax - tmin:g} s around every event",
            "use shorter epochs (tmin..tmax), fewer event types, or fewer files",
        )

    return need


def guarded(op: Op, need: Callable[[StudyState], Need], limit_mb: int | None) -> Op:
    """`op`, refused before it starts when its estimate is over `limit_mb` (None: no limit)."""

    def checked(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        if limit_mb:
            size, what, instead = need(state)
            if size > limit_mb * MB:
                raise ToolException(
                    f"{what} needs about {size / MB:,.0f} MB of memory, over the limit of "
                    f"{limit_mb:,} MB for one operation ({OPERATION_ENV}); {instead}. "
                    "The study is unchanged"
                )
        return op(state, stop)

    return checked


def give_back() -> None:
    """Return freed heap memory to the system (glibc keeps it otherwise; elsewhere: nothing)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
