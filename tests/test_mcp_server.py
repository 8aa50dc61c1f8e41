"""`brainchat mcp-server` as MCP clients see it: real server processes (stdio and streamable
HTTP) driven by the official `mcp` client SDK, real EDF files written by the synthetic generator."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from brainchat.eeg.io.synthetic import write_demo_set

BIN = Path(sys.executable).parent / "brainchat"
TOKEN = "test-token-0123456789abcdef"
PNG = b"\x89PNG\r\n\x1a\n"


def server_env(data: Path, **extra: str) -> dict[str, str]:
    """This environment (PYTHONPATH: the worktree's code) less brainchat's own variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAINCHAT_", "AGENT_"))}
    return {
        **env,
        "BRAINCHAT_DATA_DIR": str(data),
        "BRAINCHAT_STATE_DIR": str(data.parent / "st"),
        **extra,
    }


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder with one real EDF recording, and a recording outside it."""
    folder = tmp_path / "data"
    write_demo_set(folder, subjects=1, sessions=1, trials=20, seed=3)
    write_demo_set(tmp_path / "private", subjects=1, sessions=1, trials=4, seed=4)
    return folder


@asynccontextmanager
async def stdio_session(data: Path, **kwargs: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=str(BIN), args=["mcp-server"], env=server_env(data), cwd=str(data.parent)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write, **kwargs) as s:
        await s.initialize()
        yield s


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_tools_are_listed_with_hints_from_the_tool_flags_and_their_own_schemas(data):
    async with stdio_session(data) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert {"list_data_files", "load_data", "epoch_data", "train_model", "plot_psd"} <= set(tools)
    state, clear, bandpass = (
        tools["get_study_state"],
        tools["clear_study"],
        tools["bandpass_filter"],
    )
    assert state.annotations.readOnlyHint is True and state.annotations.openWorldHint is False
    assert clear.annotations.destructiveHint is True and clear.annotations.readOnlyHint is False
    assert (
        bandpass.annotations.destructiveHint is False
        and bandpass.annotations.idempotentHint is False
    )
    assert tools["fetch_dataset"].annotations.openWorldHint is True  # it downloads
    assert tools["band_power"].annotations.openWorldHint is False
    assert tools["load_data"].inputSchema["required"] == ["files"]
    assert tools["bandpass_filter"].inputSchema["properties"]["l_freq"]["anyOf"]


async def test_the_server_names_itself_brainchat_with_its_version(data):
    """Before #43 serverInfo.version was the SDK's (1.30.0)."""
    from importlib import metadata

    params = StdioServerParameters(
        command=str(BIN), args=["mcp-server"], env=server_env(data), cwd=str(data.parent)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        info = (await s.initialize()).serverInfo
    assert info.name == "brainchat" and info.version == metadata.version("brainchat")
    assert info.version != metadata.version("mcp")


async def test_a_real_recording_is_loaded_and_a_figure_comes_back_as_a_png_image(data):
    async with stdio_session(data) as s:
        listed = text(await s.call_tool("list_data_files", {}))
        name = "sub-01_ses-01_task-mi_eeg.edf"
        assert name in listed
        loaded = await s.call_tool("load_data", {"files": [name]})
        assert not loaded.isError, text(loaded)
        assert "22" in text(loaded)  # channels, as MNE read them from the EDF
        plot = await s.call_tool("plot_psd", {"fmin": 2, "fmax": 40})
    assert not plot.isError, text(plot)
    images = [c for c in plot.content if isinstance(c, types.ImageContent)]
    assert images and images[0].mimeType == "image/png"
    assert base64.b64decode(images[0].data).startswith(PNG)
    assert text(plot)  # the tool's text beside the image


async def test_an_analysis_returns_its_numbers_as_structured_content(data):
    """band_power's rows come back as structuredContent beside the text and the figure: a client
    reads the numbers without parsing the table (the study lives in the server's kernel)."""
    async with stdio_session(data) as s:
        await s.call_tool("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
        result = await s.call_tool("band_power", {"bands": ["alpha"]})
    assert not result.isError, text(result)
    rows = result.structuredContent["rows"]
    assert len(rows) == 22 and {r["band"] for r in rows} == {"alpha"}
    top = max(rows, key=lambda r: r["power_uv2"])
    assert f"alpha {top['channel']} {top['power_uv2']:.4g} µV²" in text(result)
    assert any(isinstance(c, types.ImageContent) for c in result.content)


async def test_long_steps_report_progress_to_a_client_that_asks_for_it(data):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with stdio_session(data) as s:
        await s.call_tool("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
        await s.call_tool("bandpass_filter", {"l_freq": 8, "h_freq": 30})
        epoched = await s.call_tool("epoch_data", {}, progress_callback=on_progress)
        assert not epoched.isError, text(epoched)
        epoch_seen, seen[:] = list(seen), []
        await s.call_tool("split_dataset", {"test_ratio": 0.25, "val_ratio": 0.0})
        trained = await s.call_tool(
            "train_model", {"model": "csp_lda"}, progress_callback=on_progress
        )
        assert not trained.isError, text(trained)
    assert [m for _, _, m in epoch_seen] == ["epoch_data: started", "epoch_data: finished"]
    values = [p for p, _, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values)  # always increasing
    assert values[-1] == 1.0 and all(t == 1.0 for _, t, _ in seen)
    assert any("epoch 1/1" in (m or "") for _, _, m in seen), seen  # the trainer's own report


async def test_a_client_that_cancels_a_training_stops_it_and_the_study_stays_as_it_was(data):
    tokens: list[types.ProgressToken] = []
    second_epoch = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ProgressNotification
        ):
            tokens.append(message.root.params.progressToken)  # the request's id, in this SDK
            if "epoch 2/" in (message.root.params.message or ""):
                second_epoch.set()

    async def on_progress(*_: Any) -> None:
        return None

    async with stdio_session(data, message_handler=on_message) as s:
        await s.call_tool("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
        await s.call_tool("epoch_data", {})
        await s.call_tool("split_dataset", {})
        args = {"model": "eegnet", "epochs": 1000}
        training = asyncio.create_task(
            s.call_tool("train_model", args, progress_callback=on_progress)
        )
        await asyncio.wait_for(second_epoch.wait(), 120)
        stop = types.CancelledNotificationParams(requestId=tokens[-1], reason="user stop")
        await s.send_notification(
            types.ClientNotification(types.CancelledNotification(params=stop))
        )
        with pytest.raises(McpError, match="cancelled"):
            await training
        state = text(await s.call_tool("get_study_state", {}))  # waits for the stopped step
    assert "split by trial" in state and "eegnet" not in state.lower()


async def test_paths_outside_the_data_folder_and_bad_steps_come_back_as_clear_errors(data):
    outside = data.parent / "private" / "sub-01_ses-01_task-mi_eeg.edf"
    async with stdio_session(data) as s:
        for path in (str(outside), "../private/sub-01_ses-01_task-mi_eeg.edf"):
            refused = await s.call_tool("load_data", {"files": [path]})
            assert refused.isError and "outside the data folder" in text(refused), text(refused)
        early = await s.call_tool("epoch_data", {})
        bad = await s.call_tool("bandpass_filter", {"l_freq": 30, "h_freq": 8})
        state = text(await s.call_tool("get_study_state", {}))
    assert early.isError and "load" in text(early).lower() and "Traceback" not in text(early)
    assert bad.isError and "must be below" in text(bad)
    assert "empty" in state.lower()  # nothing of the refused file was read


async def test_a_destructive_tool_asks_the_user_through_elicitation(data):
    answers = iter(["decline", "accept"])
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        action = next(answers)
        return types.ElicitResult(
            action=action, content={"confirm": True} if action == "accept" else None
        )

    async with stdio_session(data, elicitation_callback=elicit) as s:
        await s.call_tool("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
        declined = await s.call_tool("clear_study", {})
        kept = text(await s.call_tool("get_study_state", {}))
        accepted = await s.call_tool("clear_study", {})
        cleared = text(await s.call_tool("get_study_state", {}))
    assert declined.isError and "did not approve" in text(declined)
    assert "sub-01_ses-01" in kept and not accepted.isError and "empty" in cleared.lower()
    assert len(asked) == 2 and "clear_study" in asked[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Logs:
    text = ""


@contextmanager
def http_server(
    data: Path,
    token: str | None = TOKEN,
    logs: Logs | None = None,
    host: str = "127.0.0.1",
    **extra: str,
) -> Iterator[str]:
    """A server on `host` (reached at 127.0.0.1), with `extra` in its environment."""
    port = free_port()
    env = server_env(data, **({"BRAINCHAT_MCP_TOKEN": token} if token else {}), **extra)
    proc = subprocess.Popen(
        [str(BIN), "mcp-server", "--http", "--host", host, "--port", str(port)],
        env=env,
        cwd=data.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mcp-server did not start: {proc.stderr.read()}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(20)
        if logs is not None and proc.stderr is not None:
            logs.text = proc.stderr.read()


@asynccontextmanager
async def http_session(url: str, token: str = TOKEN) -> AsyncIterator[ClientSession]:
    client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with client, streamable_http_client(url, http_client=client) as (read, write, _):
        async with ClientSession(read, write) as s:
            await s.initialize()
            yield s


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


async def test_http_needs_the_bearer_token(data):
    logs = Logs()
    with http_server(data, logs=logs) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            headers = {"Accept": "application/json, text/event-stream"}
            for auth in (None, "Bearer wrong-token-0123456789", f"Basic {TOKEN}", TOKEN):
                sent = {**headers, **({"Authorization": auth} if auth else {})}
                answer = await client.post(url, json=INIT, headers=sent)
                assert answer.status_code == 401, (auth, answer.status_code)
                assert TOKEN not in answer.text
                challenge = answer.headers["www-authenticate"]  # a bearer token, not OAuth
                assert challenge.startswith("Bearer ") and "resource_metadata" not in challenge
                assert ("invalid_token" in challenge) == (auth is not None)  # RFC 6750
            ok = await client.post(
                url, json=INIT, headers={**headers, "Authorization": f"Bearer {TOKEN}"}
            )
            assert ok.status_code == 200
            rebound = await client.post(
                url, json=INIT, headers={**headers, "Authorization": f"Bearer {TOKEN}",
                                         "Host": "attacker.example:80"}
            )  # fmt: skip
            assert rebound.status_code >= 400  # a loopback server answers loopback names only
        async with http_session(url) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert "load_data" in names
            failed = await s.call_tool("load_data", {"files": ["nothere.edf"]})
            assert failed.isError
    assert TOKEN not in logs.text  # whatever the server logged on its way


async def test_two_sessions_at_once_never_see_each_others_study(data):
    with http_server(data) as url:
        async with http_session(url) as a, http_session(url) as b:
            loaded = await a.call_tool("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
            assert not loaded.isError, text(loaded)
            seen_by_b = text(await b.call_tool("get_study_state", {}))
            seen_by_a = text(await a.call_tool("get_study_state", {}))
            cleared_early = await b.call_tool("epoch_data", {})
    assert "sub-01_ses-01" in seen_by_a and "sub-01_ses-01" not in seen_by_b
    assert "empty" in seen_by_b.lower() and cleared_early.isError


def test_http_refuses_to_start_without_a_token_and_stdio_without_a_data_folder(tmp_path):
    (tmp_path / "data").mkdir()
    out = subprocess.run(
        [str(BIN), "mcp-server", "--http"],
        env=server_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "BRAINCHAT_MCP_TOKEN" in out.stderr
    missing = subprocess.run(
        [str(BIN), "mcp-server"],
        env=server_env(tmp_path / "nowhere"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_the_readme_snippets_are_the_clients_formats_and_start_this_server():
    import json
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## brainchat as an MCP server", 1)[1].split("\n## ", 1)[0]
    claude, vscode = (json.loads(b) for b in re.findall(r"```json\n(.*?)```", section, re.S))
    assert claude["mcpServers"]["brainchat"]["args"] == ["mcp-server"]
    assert "BRAINCHAT_DATA_DIR" in claude["mcpServers"]["brainchat"]["env"]
    stdio, http = vscode["servers"]["brainchat"], vscode["servers"]["brainchat-http"]
    assert stdio["type"] == "stdio" and stdio["args"] == ["mcp-server"]
    assert http["type"] == "http" and http["url"].endswith(":8765/mcp")  # --port's default
    assert http["headers"]["Authorization"] == "Bearer ${input:brainchat-token}"
    assert vscode["inputs"][0]["id"] == "brainchat-token" and vscode["inputs"][0]["password"]


async def test_sessions_kept_open_hold_no_more_study_processes_than_the_cap(data):
    """Before: every session's study stayed in the server for 30 minutes, uncapped (five
    one-shot Inspector calls took it from 166 MB to 792 MB). Sessions share the server's data
    folder, so BRAINCHAT_KERNELS_PER_USER (2) kernels live at most; the others' studies wait as
    their logs and come back when their session calls again."""
    import contextlib

    import psutil

    with http_server(data) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        (server,) = [p for p in psutil.process_iter(["cmdline"])
                     if "mcp-server" in " ".join(p.info["cmdline"] or []) and str(port) in
                     " ".join(p.info["cmdline"] or [])]  # fmt: skip
        async with contextlib.AsyncExitStack() as stack:
            sessions = [await stack.enter_async_context(http_session(url)) for _ in range(5)]
            for s in sessions:
                loaded = await s.call_tool(
                    "load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]}
                )
                assert not loaded.isError, text(loaded)
            workers = [c for c in server.children(recursive=True)
                       if "brainchat.eeg.kernel.worker" in " ".join(c.cmdline())]  # fmt: skip
            assert 1 <= len(workers) <= 2, [w.pid for w in workers]
            first = text(await sessions[0].call_tool("get_study_state", {}))
            assert "sub-01_ses-01" in first and "stage: loaded" in first  # its study came back
