"""One file over HTTP into a `.part` file: resumed with a Range request, restarted cleanly when
the server ignores Range, retried when the connection drops, hashed as it arrives, with a
disk-space check before the body is written and a progress callback (speed, time left)."""

from __future__ import annotations

import errno
import hashlib
import re
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

CHUNK = 1 << 20
LOCK = ".lock"
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
MAGIC = b"GGUF"
TIMEOUT = httpx.Timeout(60.0, connect=15.0)
TICK = 0.25  # seconds between progress calls
WINDOW = 5.0  # seconds of transfer the speed is measured over
BACKOFF = (0.5, 2.0, 5.0)  # seconds before the 2nd, 3rd, 4th attempt


class DownloadError(Exception):
    """Why a model could not be installed; str() is a clear message (English, for the terminal
    and logs); `kind` and `values` let the page say it in the user's language (`explain`)."""

    def __init__(self, message: str, kind: str = "other", **values: object) -> None:
        super().__init__(message)
        self.kind, self.values = kind, values


class DownloadCancelled(DownloadError):
    """The user cancelled; the partial file is kept and the next pull resumes it."""


class Busy(DownloadError):
    """Another process is downloading the same file."""


@contextmanager
def claimed(path: Path, label: str) -> Iterator[None]:
    """Only one process (the app, a terminal) downloads a file at a time: a lock beside it."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; the sha256 check still catches a mix
        yield
        return
    lock = lock_path(path)
    lock.parent.mkdir(exist_ok=True)
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Busy(
                f"{label} is being downloaded by another brainchat process (the app or a "
                "terminal); wait for it to finish, then try again",
                "busy",
                name=label,
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def lock_path(path: Path) -> Path:
    """Where the lock of a model file is: a hidden folder beside it (kept: deleting a lock
    another process has just opened would let two downloads run)."""
    return path.parent / ".locks" / (path.name + LOCK)


class Lost(Exception):
    """The connection dropped mid-file (retried; the bytes so far are kept)."""


@dataclass(frozen=True)
class Progress:
    done: int  # bytes in the file so far (a resumed download starts above 0)
    total: int | None  # bytes of the whole file, when known
    speed_bps: float  # bytes a second over the last few seconds
    eta_s: float | None  # seconds left at that speed, when known


@dataclass
class Target:
    """What to fetch and what it must be."""

    url: str
    part: Path
    label: str  # how messages name it
    size: int | None = None  # expected bytes (catalog)
    sha256: str | None = None  # expected hash (catalog)
    hub_sha256: str | None = None  # the hash the hub states for the file (X-Linked-Etag)


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return ""


def disk_free(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def check_space(folder: Path, need: int, free_bytes: Callable[[Path], int], label: str) -> None:
    free = free_bytes(folder)
    if need > free:
        raise DownloadError(
            f"not enough disk space for {label} in {folder}: it needs {human(need)} more, "
            f"{human(free)} is free. Free some space, or set BRAINCHAT_STATE_DIR to a folder on "
            "a larger disk",
            "no_space",
            name=label, folder=folder, need=human(need), free=human(free),
        )  # fmt: skip


class Meter:
    """Progress calls at most every TICK seconds, speed over the last WINDOW seconds."""

    def __init__(self, callback: Callable[[Progress], None] | None, total: int | None) -> None:
        self.callback, self.total, self.last = callback, total, 0.0
        self.samples: deque[tuple[float, int]] = deque()

    def __call__(self, done: int, force: bool = False) -> None:
        now = time.monotonic()
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[0][0] > WINDOW:
            self.samples.popleft()
        if self.callback is None or (not force and now - self.last < TICK):
            return
        self.last = now
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        speed = (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0
        left = None if self.total is None else max(0, self.total - done)
        eta = (left / speed if speed > 0 else None) if left is not None else None
        self.callback(Progress(done, self.total, speed, 0.0 if left == 0 else eta))


def fetch(
    target: Target,
    *,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    free_bytes: Callable[[Path], int],
    attempts: int,
) -> str:
    """Download into target.part (resuming what is there); return the file's sha256."""
    hashing = Hashing()
    with httpx.Client(follow_redirects=True, timeout=TIMEOUT, headers=_headers()) as client:
        for attempt in range(attempts):
            if hashing.count != _size(target.part):  # resumed from an earlier run
                hashing.of(target.part)
            try:
                _attempt(client, target, hashing, progress, cancel, free_bytes)
                return hashing.sha.hexdigest()
            except Lost as exc:
                if attempt + 1 >= attempts:
                    raise DownloadError(
                        f"the connection to {_host(target.url)} was lost {exc} after "
                        f"{attempts} tries; the {human(_size(target.part))} received are kept: "
                        "run the same pull again to resume",
                        "lost",
                        host=_host(target.url), kept=human(_size(target.part)),
                    ) from None  # fmt: skip
                pause = BACKOFF[min(attempt, len(BACKOFF) - 1)]
                if cancel is not None and cancel.wait(pause):
                    raise cancelled(target.label) from None
                if cancel is None:
                    time.sleep(pause)
            except _Restart:
                target.part.unlink(missing_ok=True)
                hashing.reset()
    raise DownloadError(
        f"the download of {target.label} did not finish after {attempts} tries",
        "lost", host=_host(target.url), kept=human(_size(target.part)),
    )  # fmt: skip


def cancelled(label: str) -> DownloadCancelled:
    return DownloadCancelled(f"the download of {label} was cancelled", "cancelled", name=label)


class Hashing:
    """The sha256 of the bytes written to the part file so far."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sha, self.count = hashlib.sha256(), 0

    def update(self, chunk: bytes) -> None:
        self.sha.update(chunk)
        self.count += len(chunk)

    def of(self, path: Path) -> None:
        """Start from the bytes already in `path` (a download resumed from an earlier run)."""
        self.reset()
        if path.exists():
            with path.open("rb") as f:
                for block in iter(lambda: f.read(CHUNK * 4), b""):
                    self.update(block)


class _Restart(Exception):
    """The partial file cannot be continued (server ignored Range, or a range error)."""


def _attempt(
    client: httpx.Client,
    target: Target,
    hashing: Hashing,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    free_bytes: Callable[[Path], int],
) -> int:
    have = _size(target.part)
    if target.size is not None and have > target.size:
        raise _Restart
    if target.size is not None and have == target.size:
        return have
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        with client.stream("GET", target.url, headers=headers) as reply:
            if reply.status_code == 416 and have:
                raise _Restart
            _check_status(reply, target)
            _hub_hash(reply, target)
            if have and reply.status_code == 200:  # the server ignored Range: start again
                hashing.reset()
                have = 0
                target.part.write_bytes(b"")
            elif have and not reply.headers.get("content-range", "").startswith(f"bytes {have}-"):
                raise _Restart
            length = reply.headers.get("content-length")
            total = have + int(length) if length and length.isdigit() else target.size
            if target.size is not None and total != target.size:
                target.part.unlink(missing_ok=True)
                raise DownloadError(
                    f"{_host(target.url)} offers {human(total or 0)} for {target.label}, the "
                    f"catalog expects {human(target.size)}: not the pinned file; nothing kept",
                    "size",
                    name=target.label, got=human(total or 0), want=human(target.size),
                )  # fmt: skip
            if total is not None:
                check_space(target.part.parent, total - have, free_bytes, target.label)
            return _body(reply, target, hashing, have, total, progress, cancel)
    except httpx.ConnectError as exc:
        raise _offline(target.url, exc, have) from None
    except httpx.TimeoutException as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            raise _offline(target.url, exc, have) from None
        raise Lost(f"(no data for {TIMEOUT.read:.0f} s)") from None
    except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
        raise Lost(f"({type(exc).__name__})") from None


def _body(
    reply: httpx.Response,
    target: Target,
    hashing: Hashing,
    have: int,
    total: int | None,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> int:
    meter = Meter(progress, total)
    meter(have, force=True)
    head = target.part.read_bytes()[:4] if have else b""
    with target.part.open("ab") as out:
        for chunk in reply.iter_bytes():  # as received: a cut loses nothing already read
            if len(head) < 4:
                head += chunk[: 4 - len(head)]
                if len(head) == 4 and head != MAGIC:
                    target.part.unlink(missing_ok=True)
                    raise not_gguf(target.url, head, reply)
            try:
                out.write(chunk)
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise DownloadError(
                        f"the disk under {target.part.parent} filled up while downloading "
                        f"{target.label}; the part received is kept: free space and pull again",
                        "disk_full",
                        name=target.label, folder=target.part.parent,
                    ) from None  # fmt: skip
                raise
            hashing.update(chunk)
            have += len(chunk)
            meter(have)
            if cancel is not None and cancel.is_set():
                raise cancelled(target.label)
    if total is not None and have < total:
        raise Lost(f"at {human(have)} of {human(total)}")
    meter(have, force=True)
    return have


def not_gguf(source: str, head: bytes, reply: httpx.Response | None = None) -> DownloadError:
    kind = f" ({reply.headers.get('content-type')})" if reply is not None else ""
    hint = (
        "; on Hugging Face give the file's download link (.../resolve/<revision>/<file>.gguf), "
        "not its page (.../blob/...)"
        if "/blob/" in source
        else ""
    )
    return DownloadError(
        f"{source} is not a GGUF model file: it starts with {head!r}{kind}{hint}",
        "not_gguf_page" if hint else "not_gguf",
        source=source,
    )


def _hub_hash(reply: httpx.Response, target: Target) -> None:
    """Note the sha256 a Hugging Face hub states for an LFS file (X-Linked-Etag on its redirect);
    a catalog file whose stated hash differs from the pinned one is refused before its body."""
    stated = [r.headers.get("x-linked-etag", "") for r in (*reply.history, reply)]
    found = next((h.strip('W/"').lower() for h in stated if HEX64.match(h.strip('W/"'))), None)
    if found is None:
        return
    target.hub_sha256 = found
    if target.sha256 is not None and found != target.sha256:
        raise DownloadError(
            f"{_host(target.url)} states sha256 {found} for {target.label}, the catalog pins "
            f"{target.sha256}: not the vetted file, so nothing was downloaded",
            "hub_sha256",
            name=target.label, host=_host(target.url), got=found, want=target.sha256,
        )  # fmt: skip


def _check_status(reply: httpx.Response, target: Target) -> None:
    code = reply.status_code
    if code < 400:
        return
    where = f"{target.label} at {_host(target.url)}"
    kind, why = {
        401: ("gated", "needs a login or an accepted licence (a gated repository)"),
        403: ("gated", "needs a login or an accepted licence (a gated repository)"),
        404: ("not_found", "was not found (HTTP 404): the repository, revision or file name may be wrong"),
        429: ("busy_hub", "was refused: too many requests (HTTP 429); try again in a few minutes"),
    }.get(code, ("http", f"failed: HTTP {code}"))  # fmt: skip
    raise DownloadError(
        f"{where} {why}", kind, name=target.label, host=_host(target.url), code=code
    )


def _offline(url: str, exc: Exception, have: int) -> DownloadError:
    kept = f"; the {human(have)} already received are kept and resumed next time" if have else ""
    return DownloadError(
        f"cannot reach {_host(url)} ({type(exc).__name__}: {str(exc)[:120] or 'no answer'}): "
        "this machine looks offline, or a proxy or firewall blocks it. Models download once; "
        "after that brainchat runs them offline. A file you already have installs with "
        f"`brainchat models pull /path/to/model.gguf`{kept}",
        "offline",
        host=_host(url),
    )


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def _headers() -> dict[str, str]:
    return {"User-Agent": "brainchat-models/1", "Accept-Encoding": "identity"}


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
