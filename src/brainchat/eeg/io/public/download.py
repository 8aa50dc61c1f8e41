"""HTTP downloads into the data folder: checked for room before the first byte, cached by size,
resumed with a Range request from a partial file, bounded by the size the listing gave, checked
against an MD5 where the listing has one, stopped between chunks (the partial file is kept)."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.settings import QUOTA_ENV

MB = 2**20
MARGIN = 200 * MB  # free disk left over after a fetch
CHUNK = 64 * 1024
RETRIES = 2  # resumes within one call after a broken connection
PART = ".part"  # suffix of a file still arriving

# (message, fraction 0..1, figures) -> None: the tool turns it into a progress event
Progress = Callable[[str, float, dict[str, Any]], None]


class Offline(ToolException):
    """The host could not be reached at all (no network, a closed port, no DNS)."""


class Broken(Exception):
    """The connection broke while a file arrived (the partial file is kept)."""


@dataclass(frozen=True)
class Remote:
    """One file to fetch: where it goes (relative to the set's folder), its URL and size."""

    rel: str
    url: str
    size: int
    md5: str | None = None


@dataclass(frozen=True)
class Room:
    """What a fetch may take: the bytes the user's quota leaves (None: no quota)."""

    quota_left: int | None = None
    quota_mb: int = 0


def mb(n: float) -> str:
    return f"{n / MB:,.1f} MB"


def check_room(folder: Path, need: int, room: Room, what: str) -> None:
    """Refuse, before any byte is written, a fetch the disk or the quota cannot hold."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if need + MARGIN > free:
        raise ToolException(
            f"{what} needs {mb(need)} but the disk of the data folder has {mb(free)} free "
            f"(brainchat keeps {mb(MARGIN)} spare); nothing was downloaded: free some space, "
            "or fetch fewer subjects"
        )
    if room.quota_left is not None and need > room.quota_left:
        raise ToolException(
            f"{what} needs {mb(need)} but your disk quota of {room.quota_mb} MB leaves "
            f"{mb(max(room.quota_left, 0))}; nothing was downloaded: fetch fewer subjects, "
            f"delete files you no longer need, or ask the administrator to raise {QUOTA_ENV}"
        )


def part_of(path: Path) -> Path:
    return path.with_name(path.name + PART)


def have(path: Path, size: int) -> bool:
    """Cached: the file is there with the listed size."""
    try:
        return path.is_file() and path.stat().st_size == size
    except OSError:
        return False


def partial(path: Path, size: int) -> int:
    """Bytes of a usable partial file (0: none, or one no shorter than the whole)."""
    try:
        n = part_of(path).stat().st_size
    except OSError:
        return 0
    return n if n < size else 0


class Meter:
    """Bytes done of a total, as progress messages with speed and time left (at most ~4 a
    second, and always the last)."""

    def __init__(self, total: int, progress: Progress, done: int = 0) -> None:
        self.total, self.progress, self.done = total, progress, done
        self.start_done, self.start, self.last = done, time.monotonic(), 0.0

    def add(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.done < self.total and now - self.last < 0.25:
            return
        self.last = now
        speed = (self.done - self.start_done) / max(now - self.start, 1e-3)
        left = (self.total - self.done) / speed if speed > 0 else None
        when = f"{left:,.0f} s left" if left is not None else "time left unknown"
        fraction = self.done / self.total if self.total else 1.0
        self.progress(
            f"{mb(self.done)} of {mb(self.total)}, {mb(speed)}/s, {when}",
            min(fraction, 1.0),
            {"done_bytes": self.done, "total_bytes": self.total, "bytes_per_s": speed},
        )


def fetch_file(
    client: Any, remote: Remote, dest: Path, meter: Meter, stop: threading.Event
) -> bool:
    """Download one file to `dest` through `dest.part`, resuming after a broken connection up to
    RETRIES times; Broken when it still breaks, False when stopped (the partial file kept)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(RETRIES + 1):
        try:
            if not _transfer(client, remote, dest, meter, stop):
                return False
            break
        except Broken:
            if attempt == RETRIES or stop.is_set():
                raise
    if remote.md5 is not None and _md5(part_of(dest)) != remote.md5:
        part_of(dest).unlink(missing_ok=True)
        raise ToolException(
            f"'{remote.rel}' arrived damaged (its checksum differs from the listing's); it was "
            "removed: call fetch_dataset again"
        )
    os.replace(part_of(dest), dest)
    return True


def _transfer(client: Any, remote: Remote, dest: Path, meter: Meter, stop: threading.Event) -> bool:
    """One request for the rest of the file; False when stopped before its end."""
    import httpx

    part, start = part_of(dest), partial(dest, remote.size)
    headers = {"Range": f"bytes={start}-"} if start else {}
    try:
        with client.stream("GET", remote.url, headers=headers) as response:
            if start and response.status_code == 206:
                if not response.headers.get("content-range", "").startswith(f"bytes {start}-"):
                    raise ToolException(f"the server resumed '{remote.rel}' at the wrong place")
                mode = "ab"
            elif response.status_code == 200:
                meter.add(-start)  # the whole file again
                start, mode = 0, "wb"
            else:
                raise ToolException(
                    f"the server answered HTTP {response.status_code} for '{remote.rel}'"
                )
            return _write(response, part, mode, start, remote, meter, stop)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise Offline(str(exc)) from None
    except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ReadTimeout) as exc:
        raise Broken(str(exc)) from None


def _write(response: Any, part: Path, mode: str, start: int, remote: Remote, meter: Meter,
           stop: threading.Event) -> bool:  # fmt: skip
    written = start
    with part.open(mode) as f:
        for chunk in response.iter_bytes(CHUNK):
            if written + len(chunk) > remote.size:  # never more than the listing promised
                f.close()
                part.unlink(missing_ok=True)
                raise ToolException(
                    f"the server sent more bytes for '{remote.rel}' than its listed size "
                    f"({remote.size:,}); the file was removed and nothing more is fetched"
                )
            f.write(chunk)
            written += len(chunk)
            meter.add(len(chunk))
            if stop.is_set():
                return written == remote.size
    if written < remote.size:
        raise Broken(f"'{remote.rel}' ended after {written:,} of {remote.size:,} bytes")
    return True


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
