"""Configs for the test servers, and a free-port HTTP server runner."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from brainchat.tools.mcp_config import McpServerConfig

EEG_LAB = Path(__file__).with_name("eeg_lab.py")
VENV_BIN = Path(sys.executable).parent


def lab_config(name: str = "lab", **kwargs) -> McpServerConfig:
    """The FastMCP test server over stdio."""
    return McpServerConfig(name=name, command=sys.executable, args=[str(EEG_LAB)], **kwargs)


def time_config(name: str = "time", **kwargs) -> McpServerConfig:
    """The third-party `mcp-server-time` from PyPI, pinned to UTC."""
    exe = VENV_BIN / "mcp-server-time"
    command, args = (str(exe), []) if exe.exists() else (sys.executable, ["-m", "mcp_server_time"])
    return McpServerConfig(
        name=name, command=command, args=[*args, "--local-timezone", "UTC"], **kwargs
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_lab(mode: str = "--http", script: Path = EEG_LAB) -> Iterator[str]:
    """Run a test server (the EEG lab unless `script` names another) over streamable HTTP (or
    SSE) on a free port; yield its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(script), mode, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90  # a loaded machine (suite workers) starts it slowly
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("test MCP HTTP server exited") from None
                if time.monotonic() > deadline:  # it used to go on as if up: a confusing failure
                    raise RuntimeError(f"test MCP HTTP server not on port {port} in 90 s") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}" + ("/mcp" if mode == "--http" else "/sse")
    finally:
        proc.terminate()
        proc.wait(10)


HINTED_NOTES = Path(__file__).with_name("hinted_notes.py")


def notes_entry(log: Path, **flags: object) -> dict[str, object]:
    """An `mcpServers` entry for the hinted-notes server over stdio, logging calls to `log`."""
    return {"command": sys.executable, "args": [str(HINTED_NOTES), str(log)], **flags}


STUDY_NOTES = Path(__file__).with_name("study_notes.py")


def notes_config(name: str = "notes", *flags: str, **kwargs) -> McpServerConfig:
    """The study-notes server (instructions, resources, prompts) over stdio."""
    return McpServerConfig(
        name=name, command=sys.executable, args=[str(STUDY_NOTES), *flags], **kwargs
    )


@contextmanager
def http_notes() -> Iterator[str]:
    """The study-notes server over streamable HTTP on a free port; yield its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(STUDY_NOTES), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("study-notes HTTP server exited") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
