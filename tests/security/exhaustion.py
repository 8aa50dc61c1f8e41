"""Helpers of the resource-exhaustion attacks: an app process's memory from /proc, uploads sent
byte by byte over a raw socket, and accounts for a password app."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from e2e.conftest import ROOT
from e2e.sio_client import ChainlitSocket, password_login

MB = 2**20


def status_kb(pid: int, field: str) -> int:
    """A field of /proc/<pid>/status in kB (VmRSS: now, VmHWM: the peak since the last reset)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid: int) -> int:
    """Reset the process's peak RSS to its current RSS (Linux clear_refs); returns it in kB."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return status_kb(pid, "VmRSS")


def add_accounts(passwords: dict[str, str], env: dict[str, str], data: Path) -> None:
    for name, password in passwords.items():
        subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", name],
                       input=password + "\n", text=True, cwd=ROOT, check=True, timeout=60,
                       env={**os.environ, "BRAINCHAT_DATA_DIR": str(data), **env})  # fmt: skip


async def login(app: str, name: str, password: str) -> str:
    cookie = await password_login(app, name, password)
    assert cookie, f"{name} could not log in"
    return cookie


async def chat_as(app: str, name: str, password: str) -> tuple[ChainlitSocket, str]:
    """A logged-in user's socket with its chat started, and the login cookie."""
    cookie = await login(app, name, password)
    client = ChainlitSocket()
    await client.connect(app, origin=None, cookie=cookie)
    await client.start_chat()
    return client, cookie


def multipart(name: str, size: int, boundary: str) -> tuple[bytes, int, bytes]:
    """The head of a multipart body with one file part, the file's size, and the tail."""
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head, size, f"\r\n--{boundary}--\r\n".encode()


def raw_upload(
    url: str, cookie: str, session_id: str, size: int, *, chunked: bool, name: str = "big.edf"
) -> tuple[int | None, str, int]:
    """POST `size` bytes as a file to /project/file over a plain socket, as fast as the server
    reads them; stop sending as soon as the server answers or closes.

    Returns (status or None, response text, bytes of the file part sent before the answer).
    Chunked: no Content-Length, so only a limit enforced while reading can stop it early.
    """
    boundary = uuid.uuid4().hex
    head, _, tail = multipart(name, size, boundary)
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    length = "" if chunked else f"Content-Length: {len(head) + size + len(tail)}\r\n"
    encoding = "Transfer-Encoding: chunked\r\n" if chunked else ""
    request = (
        f"POST /project/file?session_id={session_id} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Cookie: {cookie}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
        f"{length}{encoding}Connection: close\r\n\r\n"
    ).encode()
    block = b"\0" * (256 * 1024)
    sent, answer = 0, b""
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)

        def put(data: bytes) -> None:
            sock.sendall(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)

        try:
            sock.sendall(request)
            put(head)
            while sent < size:
                sock.setblocking(False)
                try:
                    answer += sock.recv(65536)
                except BlockingIOError:
                    pass
                finally:
                    sock.setblocking(True)
                if answer:
                    break
                piece = block[: min(len(block), size - sent)]
                put(piece)
                sent += len(piece)
            else:
                put(tail)
                if chunked:
                    sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(60)
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    text = answer.decode("latin-1")
    status = int(text.split()[1]) if text.startswith("HTTP/1.1 ") else None
    return status, text, sent


def upload(url: str, cookie: str, session_id: str, path: Path, name: str | None = None) -> str:
    """Upload a file as the browser does; returns its file id (raises on a refusal)."""
    import httpx

    with path.open("rb") as f:
        r = httpx.post(
            f"{url}/project/file",
            params={"session_id": session_id},
            headers={"Cookie": cookie},
            files={"file": (name or path.name, f, "application/octet-stream")},
            timeout=120,
        )
    assert r.status_code == 200, r.text
    return str(r.json()["id"])
