"""Run the OAuth test server (oauth_lab.py) on a free port and read what it recorded."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_servers.helpers import free_port

OAUTH_LAB = Path(__file__).with_name("oauth_lab.py")


@dataclass
class OAuthLab:
    url: str  # the MCP endpoint, http://127.0.0.1:PORT/mcp
    base: str  # http://127.0.0.1:PORT (the authorization server too)
    log: Path

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]
        return [r for r in rows if kind is None or r["event"] == kind]


@contextmanager
def oauth_lab(folder: Path, *args: str, host: str = "127.0.0.1") -> Iterator[OAuthLab]:
    """The OAuth lab on a free port; `args` as oauth_lab.py takes them (--expires-in, --issuer)."""
    port = free_port()
    log = folder / f"oauth-lab-{port}.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(OAUTH_LAB), str(port), str(log), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90  # a loaded machine starts it slowly
        while True:
            try:
                socket.create_connection((host, port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("the OAuth lab exited") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the OAuth lab is not on port {port} in 90 s") from None
                time.sleep(0.1)
        base = f"http://{host}:{port}"
        yield OAuthLab(url=f"{base}/mcp", base=base, log=log)
    finally:
        proc.terminate()
        proc.wait(10)
