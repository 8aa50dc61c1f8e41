"""The local runtime's process logic with real processes and no llama.cpp: a fake llama-server
(tests/fake_llama_server.py) stands in for the binary through BRAINCHAT_LLAMA_SERVER. The runtime
with a real model is in test_localmodels_runtime_slow.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from brainchat import llm, netguard
from brainchat.connections import Connection
from brainchat.localmodels import CATALOG
from brainchat.localmodels.runtime import LocalRuntime, RuntimeUnavailable, runtime_for
from brainchat.localmodels.runtime_command import SERVER_ENV, Launch, Server, cores, gpu_present

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fake_llama_server.py"
MODEL = next(m for m in CATALOG if m.default)


def gone(pid: int) -> bool:
    """The process no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return "\nState:\tZ" in status


def wait_for(condition: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Fake:
    """The fake server's wrapper script, its options and what it recorded."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.record = folder / "starts.jsonl"
        self.model = folder / "tiny.gguf"
        self.model.write_bytes(b"GGUF")
        self.options: dict[str, str] = {}

    def script(self) -> Path:
        exports = "".join(f"export {k}={v}\n" for k, v in self.options.items())
        path = self.folder / "llama-server"
        path.write_text(
            f"#!/bin/sh\nexport FAKE_LLAMA_RECORD={self.record}\n{exports}"
            f'exec {sys.executable} {FAKE} "$@"\n'
        )
        path.chmod(0o755)
        return path

    def starts(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fake]:
    made = Fake(tmp_path)
    monkeypatch.setenv(SERVER_ENV, str(tmp_path / "llama-server"))
    made.script()
    yield made
    for start in made.starts():  # nothing a test started outlives it
        for pid in (start["pid"], start["child"]):
            if pid and not gone(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def runtime(fake: Fake) -> Iterator[LocalRuntime]:
    made = LocalRuntime(fake.model, MODEL, log_dir=fake.folder / "logs")
    yield made
    made.stop_now()


def get(url: str) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as resp:
        return dict(json.loads(resp.read()))


async def test_it_starts_on_a_free_loopback_port_with_threads_from_the_cores_and_answers(
    fake: Fake, runtime: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-reach-the-server")
    await runtime.start()
    assert runtime.base_url.startswith("http://127.0.0.1:")
    assert get(f"{runtime.base_url}/models")["data"][0]["id"] == MODEL.id
    (start,) = fake.starts()
    argv = start["argv"]

    def flag(name: str) -> str:
        return str(argv[argv.index(name) + 1])

    assert flag("--host") == "127.0.0.1" and runtime.base_url.endswith(f":{flag('--port')}/v1")
    assert flag("-t") == flag("-tb") == str(len(os.sched_getaffinity(0)))
    assert flag("-ngl") == ("999" if gpu_present() else "0")
    # two slots (a Chat answer and an Agent run at once), each with the catalog's window
    assert flag("--parallel") == "2" and flag("-c") == str(2 * MODEL.context)
    assert "--jinja" in argv and flag("-m") == str(fake.model) and flag("--alias") == MODEL.id
    assert "OPENAI_API_KEY" not in start["env"]  # the app's secrets stay in the app
    await runtime.start()  # already running: nothing new starts
    assert len(fake.starts()) == 1


async def test_a_request_waits_while_the_server_loads_its_model(
    fake: Fake, runtime: LocalRuntime
) -> None:
    fake.options["FAKE_LLAMA_LOADING"] = "3"  # 503 "Loading model" three times
    fake.script()
    await runtime.start()
    assert get(f"{runtime.base_url}/models")["data"][0]["id"] == MODEL.id


async def test_its_spec_and_connection_carry_the_runtime_s_mode_and_pass_netguard(
    runtime: LocalRuntime,
) -> None:
    await runtime.start()
    spec = runtime.spec()
    assert (spec.base_url, spec.context_window, spec.guidance) == (
        runtime.base_url, MODEL.context, MODEL.guidance,
    )  # fmt: skip
    assert spec.tool_calling == MODEL.tool_calling and spec.user_url is False
    assert spec.response_format and spec.timeout == 300
    conn = runtime.connection()
    (label,) = conn.specs()
    assert label == f"{MODEL.id} @ local" and conn.specs()[label].user_url is False
    assert conn.specs()[label].tool_calling == spec.tool_calling
    # with accounts, users' typed URLs may not reach loopback; the app's own runtime may
    netguard.configure(netguard.Policy())
    try:
        reply = await llm.make_chat_model(conn.specs()[label], "chat").ainvoke("ping")
        assert reply.content == "pong"
        typed = Connection("typed", runtime.base_url, None, (MODEL.id,)).spec(MODEL.id)
        with pytest.raises(Exception) as refused:
            await llm.make_chat_model(replace(typed, max_retries=0), "chat").ainvoke("ping")
        assert netguard.refused(refused.value) is not None
    finally:
        netguard.configure(netguard.Policy(anywhere=True))


def test_each_server_gets_the_tool_calling_it_can_serve() -> None:
    binary = Server("llama-server", ("llama-server",))
    python = Server("llama-cpp-python", (sys.executable, "-m", "llama_cpp.server"))
    native = next((m for m in CATALOG if m.tool_calling == "native"), None)
    assert python.tool_calling(MODEL) == "prompt" and python.tool_calling(None) == "prompt"
    assert binary.response_format and not python.response_format  # its HTTP 500 on json_schema
    assert (
        binary.tool_calling(None) == "native" and binary.tool_calling(MODEL) == MODEL.tool_calling
    )
    if native is not None:
        assert binary.tool_calling(native) == "native" and python.tool_calling(native) == "prompt"
    launch = Launch(python, Path("m.gguf"), "m", 8080, 4096, 2, 0).argv()
    # llama-cpp-python's default ends a streaming answer when another request arrives
    assert launch[launch.index("--interrupt_requests") + 1] == "false"
    assert launch[launch.index("--n_ctx") + 1] == "4096" and "--host" in launch


async def test_a_server_that_dies_is_restarted_on_the_same_port(
    fake: Fake, runtime: LocalRuntime
) -> None:
    await runtime.start()
    url, first = runtime.base_url, runtime.pid
    with pytest.raises(OSError):
        get(url.removesuffix("/v1") + "/die")
    await runtime.start()  # the next request waits for the restart
    wait_for(lambda: runtime.pid != first and runtime.running(), "the restart")
    await runtime.start()
    assert runtime.base_url == url and get(f"{url}/models")["data"][0]["id"] == MODEL.id
    assert len(fake.starts()) == 2 and first is not None and gone(first)


async def test_a_server_that_keeps_dying_is_given_up_with_its_log(
    fake: Fake, runtime: LocalRuntime
) -> None:
    fake.options["FAKE_LLAMA_DIE_SOON"] = "1"
    fake.script()
    await runtime.start()
    wait_for(lambda: runtime.problem is not None, "the supervisor to give up")
    assert "exited 3 times in a row" in str(runtime.problem)
    assert "server is listening" in str(runtime.problem)  # the log's tail
    assert len(fake.starts()) == 3


async def test_a_port_taken_while_it_was_down_is_said(fake: Fake, runtime: LocalRuntime) -> None:
    holder = fake.folder / "holder.pid"
    fake.options["FAKE_LLAMA_HOLD"] = str(holder)
    fake.script()
    await runtime.start()
    port = runtime.base_url.split(":")[2].split("/")[0]
    try:
        with pytest.raises(OSError):
            get(runtime.base_url.removesuffix("/v1") + "/die")
        wait_for(lambda: runtime.problem is not None, "the supervisor to give up")
        assert f"port {port} on 127.0.0.1" in str(runtime.problem)
        assert "taken by another program" in str(runtime.problem)
        await runtime.start()  # a new start picks a fresh port (and a new connection URL)
        assert f":{port}/" not in runtime.base_url and runtime.running()
    finally:
        wait_for(holder.exists, "the port holder")
        os.kill(int(holder.read_text()), signal.SIGKILL)


async def test_a_free_port_taken_before_the_server_binds_it_is_swapped(
    fake: Fake, runtime: LocalRuntime
) -> None:
    holder = fake.folder / "thief.pid"
    fake.options["FAKE_LLAMA_STEAL_ONCE"] = str(holder)
    fake.script()
    try:
        await runtime.start()
        first, second = (s["argv"][s["argv"].index("--port") + 1] for s in fake.starts())
        assert first != second and runtime.base_url.endswith(f":{second}/v1")
        assert get(f"{runtime.base_url}/models")["data"][0]["id"] == MODEL.id
    finally:
        wait_for(holder.exists, "the port thief")
        os.kill(int(holder.read_text()), signal.SIGKILL)


async def test_stop_ends_the_server_and_its_children(fake: Fake, runtime: LocalRuntime) -> None:
    fake.options["FAKE_LLAMA_CHILD"] = "1"
    fake.script()
    await runtime.start()
    (start,) = fake.starts()
    assert start["pgid"] == start["pid"]  # a process group of its own
    await runtime.stop()
    assert gone(start["pid"]) and gone(start["child"])
    assert not runtime.running()


async def test_a_server_that_exits_at_start_shows_its_log_masked(
    fake: Fake, runtime: LocalRuntime
) -> None:
    fake.options["FAKE_LLAMA_FAIL"] = "1"
    fake.script()
    with pytest.raises(RuntimeUnavailable) as err:
        await runtime.start()
    message = str(err.value)
    assert "exited at start (code 1)" in message and "failed to load model" in message
    assert "sk-abcdefghijklmnop0123456789" not in message  # secret-shaped text is masked


async def test_bad_set_ups_say_what_to_do(
    fake: Fake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = LocalRuntime(tmp_path / "gone.gguf", MODEL)
    with pytest.raises(RuntimeUnavailable, match=rf"missing.*brainchat models pull {MODEL.id}"):
        await missing.start()
    monkeypatch.setenv(SERVER_ENV, str(tmp_path / "no-such-server"))
    with pytest.raises(RuntimeUnavailable, match=f"{SERVER_ENV} names .* not an executable"):
        await LocalRuntime(fake.model, MODEL).start()
    monkeypatch.delenv(SERVER_ENV)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # llama-cpp-python not installed
    with pytest.raises(RuntimeUnavailable, match=r"pip install 'brainchat\[local\]'"):
        await LocalRuntime(fake.model, MODEL).start()


def test_runtime_for_shares_one_runtime_per_model_file(fake: Fake) -> None:
    assert runtime_for(fake.model, MODEL) is runtime_for(fake.folder / "." / "tiny.gguf", None)


CHILD = """
import asyncio, os, sys
from pathlib import Path
from brainchat.localmodels.runtime import runtime_for
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
r = runtime_for(Path(sys.argv[1]))
asyncio.run(r.start())
print(r.pid, flush=True)
if sys.argv[2] == "hang":
    sys.stdin.read()
"""


@pytest.mark.parametrize("end", ["exit", "killed"])
def test_no_server_outlives_the_app(fake: Fake, end: str) -> None:
    """A normal exit stops it (atexit); a SIGKILLed app takes it along (the parent-death
    signal), since nothing in the app runs then."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    app = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(fake.model),
         "hang" if end == "killed" else "exit"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    assert app.stdout is not None
    pid = int(app.stdout.readline())
    if end == "killed":
        assert not gone(pid)
        app.kill()
    app.wait(timeout=60)
    wait_for(lambda: gone(pid), f"the server to end after the app's {end}")
    (start,) = fake.starts()
    assert start["argv"][start["argv"].index("-t") + 1] == "1"  # the app's one allowed core
    assert cores() >= 1
