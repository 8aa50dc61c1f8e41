"""Bounds on what reading one recording may cost, checked before MNE reads anything big.

A recording's events are parsed whole as it is opened, even with preload=False: MNE held about
1.3 KB per BrainVision marker (500,000 markers in a 15 MB .vmrk took 638 MB and 16 s), and
mne-bids reads a BIDS events.tsv whole. A trial-based recording has thousands of events, so a
file with more than MAX_EVENTS is refused unread, and so is an events.tsv over EVENTS_TSV_MB.
Loading then holds every sample as float64: `Budget` refuses a load whose files need more than
BRAINCHAT_MAX_OPERATION_MB, file by file, before each file's samples are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brainchat.settings import OPERATION_ENV

MAX_EVENTS = 100_000  # markers of one BrainVision file, rows of one events.tsv
EVENTS_TSV_MB = 16  # ~100 bytes a row: 160,000 rows, past MAX_EVENTS
MB = 2**20
CHUNK = 1 << 20

FEWER_EVENTS = (
    "a recording's trials number in the thousands, so these are not trial markers (a marker per "
    "sample or per stimulus-channel change?); keep the trials' events only and try again"
)


class TooBig(ValueError):
    """The file is past a bound; the message names the figure, the bound and what to do."""


def count_lines(path: Path, prefix: bytes, most: int) -> int:
    """Lines of `path` starting with `prefix` (any case), read in chunks; counting ends at
    `most` + 1, so a file past the bound is not read to its end."""
    prefix = prefix.lower()
    found, tail = 0, b""
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            found += sum(1 for line in lines if line.lstrip()[: len(prefix)].lower() == prefix)
            if found > most:
                return found
    return found + (tail.lstrip()[: len(prefix)].lower() == prefix)


def check_markers(vmrk: Path) -> None:
    """Refuse a BrainVision marker file with more than MAX_EVENTS markers (TooBig)."""
    if not vmrk.is_file():
        return  # MNE says it is missing, in its own words
    if count_lines(vmrk, b"mk", MAX_EVENTS) > MAX_EVENTS:
        raise TooBig(
            f"its marker file '{vmrk.name}' holds more than {MAX_EVENTS:,} markers (reading "
            f"them takes about 1.3 KB of memory each); {FEWER_EVENTS}"
        )


def check_events_tsv(events: Path) -> None:
    """Refuse a BIDS events.tsv over EVENTS_TSV_MB or with more than MAX_EVENTS rows (TooBig)."""
    size = events.stat().st_size
    if size > EVENTS_TSV_MB * MB:
        raise TooBig(
            f"'{events.name}' is {size / MB:,.1f} MB, over the {EVENTS_TSV_MB} MB read for one "
            f"recording's events; {FEWER_EVENTS}"
        )
    if count_lines(events, b"", MAX_EVENTS + 1) - 1 > MAX_EVENTS:  # minus the header row
        raise TooBig(
            f"'{events.name}' has more than {MAX_EVENTS:,} rows, the most events read for one "
            f"recording; {FEWER_EVENTS}"
        )


@dataclass
class Budget:
    """The memory one load may take (None: no limit), spent file by file as each is read."""

    limit_mb: int | None
    spent: int = 0
    files: int = 0

    def take(self, name: str, channels: int, samples: int) -> None:
        """Count a file's samples (float64) against the limit, or raise TooBig before they are
        read, naming the figure, the limit and what to do."""
        need = channels * samples * 8
        if self.limit_mb and self.spent + need > self.limit_mb * MB:
            before = f" with the {self.files} file(s) before it" if self.files else ""
            raise TooBig(
                f"loading '{name}'{before} needs about {(self.spent + need) / MB:,.0f} MB of "
                f"memory ({channels} channels x {samples:,} samples as float64), over the limit "
                f"of {self.limit_mb:,} MB for one operation ({OPERATION_ENV}); load fewer or "
                "shorter files, or ask the operator to raise the limit"
            )
        self.spent += need
        self.files += 1
