"""Study handles for one-shot MCP clients: before #43 every new session (the Inspector's CLI, a
script) got a new, empty study, so no multi-step analysis was possible from them. Now load_data
returns a handle; separate sessions that pass it as `study` reach the same study; handles expire
when unused and are capped per token."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.mcpserver.handles import HandleTable, owner_of
from test_mcp_server import http_server, http_session, text

EDF = "sub-01_ses-01_task-mi_eeg.edf"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=20, seed=3)
    return tmp_path / "data"


async def one_shot(url: str, name: str, args: dict[str, Any]) -> Any:
    """A client that opens a session for one call and closes it, as the Inspector's CLI does."""
    async with http_session(url) as s:
        return await s.call_tool(name, args)


async def test_three_one_shot_sessions_run_one_analysis_through_the_handle(data):
    with http_server(data) as url:
        loaded = await one_shot(url, "load_data", {"files": [EDF]})
        handle = loaded.structuredContent["study"]
        filtered = await one_shot(
            url, "bandpass_filter", {"l_freq": 8, "h_freq": 30, "study": handle}
        )
        epoched = await one_shot(url, "epoch_data", {"study": handle})
        described = await one_shot(url, "get_study_state", {"study": handle})
        fresh = await one_shot(url, "get_study_state", {})  # no handle: a session's own study
    assert handle.startswith("study-") and f"study={handle!r}" in text(loaded)
    assert not filtered.isError and filtered.structuredContent["steps"][0]["op"] == "bandpass"
    assert not epoched.isError, text(epoched)
    assert epoched.structuredContent["stage"] == "epoched"
    assert described.structuredContent["study"] == handle
    assert "band-pass 8-30 Hz" in text(described) and "stage: epoched" in text(described)
    assert "empty" in text(fresh).lower() and fresh.structuredContent["study"] is None


async def test_a_wrong_handle_is_refused_with_what_to_do_and_changes_nothing(data):
    with http_server(data) as url:
        async with http_session(url) as s:
            await s.call_tool("load_data", {"files": [EDF]})
            wrong = await s.call_tool("epoch_data", {"study": "study-not-a-handle"})
            state = await s.call_tool("get_study_state", {})
    assert wrong.isError and "unknown, expired" in text(wrong) and "load_data" in text(wrong)
    assert state.structuredContent["stage"] == "loaded"  # the session's study was not touched


async def test_past_the_cap_a_new_study_gets_no_handle_but_its_session_keeps_it(data):
    with http_server(data, BRAINCHAT_MCP_STUDY_HANDLES="1") as url:
        async with contextlib.AsyncExitStack() as stack:
            a, b = [await stack.enter_async_context(http_session(url)) for _ in range(2)]
            first = await a.call_tool("load_data", {"files": [EDF]})
            again = await a.call_tool("load_data", {"files": [EDF]})  # the same study: same handle
            second = await b.call_tool("load_data", {"files": [EDF]})
            kept = await b.call_tool("get_study_state", {})
    assert first.structuredContent["study"] == again.structuredContent["study"] is not None
    assert not second.isError and second.structuredContent["study"] is None
    assert "no study handle" in text(second) and "BRAINCHAT_MCP_STUDY_HANDLES" in text(second)
    assert kept.structuredContent["stage"] == "loaded"


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


class Study:
    released = 0

    async def release(self) -> None:
        self.released += 1


class Entry:
    def __init__(self) -> None:
        self.study, self.handle = Study(), None


async def test_handles_expire_when_unused_and_belong_to_the_token_that_got_them():
    clock = Clock()
    table = HandleTable(cap=2, idle_s=600, clock=clock)
    used, idle, third = Entry(), Entry(), Entry()
    h_used = await table.issue(used, "token:a")
    h_idle = await table.issue(idle, "token:a")
    assert h_used and h_idle and await table.issue(third, "token:a") is None  # the cap
    assert await table.issue(third, "token:b") is not None  # another token has its own
    assert await table.find(h_used, "token:b") is None  # not another token's to use
    clock.now = 500
    assert await table.find(h_used, "token:a") is used  # in use: its life starts again
    clock.now = 700
    assert await table.find(h_idle, "token:a") is None  # 700 s unused: expired
    assert idle.study.released == 1 and idle.handle is None and used.study.released == 0
    assert await table.find(h_used, "token:a") is used
    assert await table.issue(Entry(), "token:a") is not None  # the expired one's place is free


def test_a_handle_belongs_to_a_digest_of_the_token_never_the_token():
    class Request:
        headers = {"authorization": "Bearer secret-token-0123456789"}

    owner = owner_of(Request())
    assert "secret-token" not in owner and owner.startswith("token:")
    assert owner_of(None) == "stdio"


async def test_a_handle_outlives_its_stdio_server_process(data):
    """The Inspector's CLI over stdio starts a new server for every call: the handle's study
    comes back in the next process from its log (a replay)."""
    from test_mcp_server import stdio_session

    async with stdio_session(data) as s:
        handle = (await s.call_tool("load_data", {"files": [EDF]})).structuredContent["study"]
    async with stdio_session(data) as s:
        filtered = await s.call_tool(
            "bandpass_filter", {"l_freq": 8, "h_freq": 30, "study": handle}
        )
    async with stdio_session(data) as s:
        epoched = await s.call_tool("epoch_data", {"study": handle})
        described = text(await s.call_tool("get_study_state", {"study": handle}))
    assert not filtered.isError and not epoched.isError, text(epoched)
    assert "band-pass 8-30 Hz" in described and "stage: epoched" in described
    assert sorted(p.name for p in (data.parent / "st" / "mcp-handles").rglob("*.json")) == [
        f"{handle}.json"
    ]


class Kept(Entry):
    def __init__(self, log: list | None = None) -> None:
        super().__init__()
        self.study.pending, self.study.log = None, log or []


async def test_a_kept_handle_expires_on_disk_too(tmp_path):
    clock = Clock()
    log = [{"op": "load", "files": [EDF]}]
    first = HandleTable(cap=1, idle_s=600, clock=clock, folder=tmp_path, make=Kept)
    handle = await first.issue(Kept(log), "stdio")
    later = HandleTable(cap=1, idle_s=600, clock=clock, folder=tmp_path, make=Kept)  # a new process
    assert await later.issue(Kept(), "stdio") is None  # the cap counts the kept one
    clock.now = 300
    found = await later.find(handle, "stdio")
    assert found is not None and found.study.pending == log and found.handle == handle
    assert await later.find("study-../../etc/passwd", "stdio") is None
    clock.now = 1000
    other = HandleTable(cap=1, idle_s=600, clock=clock, folder=tmp_path, make=Kept)
    assert await other.find(handle, "stdio") is None and not list(tmp_path.rglob("*.json"))


INSPECTOR = os.environ.get("BRAINCHAT_TEST_INSPECTOR_CLI")  # .../inspector-cli/build/index.js


def inspector(*args: str, env: dict[str, str]) -> dict:
    """One call of the MCP Inspector's CLI (npm @modelcontextprotocol/inspector-cli): a new
    process and session each time. It reads its package.json relative to its working folder."""
    where = Path(str(INSPECTOR)).parent
    out = subprocess.run(["node", str(INSPECTOR), *args], cwd=where, env=env,
                         capture_output=True, text=True, timeout=180)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(not INSPECTOR, reason="set BRAINCHAT_TEST_INSPECTOR_CLI to its build/index.js")
def test_the_inspector_cli_runs_a_multi_step_analysis_over_stdio(data):
    from test_mcp_server import BIN, server_env

    env, call = server_env(data), ["--method", "tools/call", "--tool-name"]
    loaded = inspector(str(BIN), "mcp-server", *call, "load_data",
                       "--tool-arg", f'files=["{EDF}"]', env=env)  # fmt: skip
    handle = loaded["structuredContent"]["study"]
    steps = [("bandpass_filter", "l_freq=8", "h_freq=30"), ("epoch_data",)]
    done = [inspector(str(BIN), "mcp-server", *call, name, "--tool-arg", *args,
                      f"study={handle}", env=env) for name, *args in steps]  # fmt: skip
    assert [d.get("isError") for d in done] == [False, False]
    assert done[-1]["structuredContent"]["stage"] == "epoched"
    assert done[-1]["structuredContent"]["steps"][0]["op"] == "bandpass"
