"""Failures stay isolated: a broken server never breaks start-up, the app or the other servers."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
from langchain_core.tools import ToolException

from brainchat.redact import mask
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig, ToolOverride, parse_server
from mcp_servers.helpers import EEG_LAB, lab_config, time_config

from support import wait_until


def by_name(hub):
    return {t.name: t for t in hub.toolset().tools}


async def wait_for_state(hub, server, state, seconds=10.0):
    for _ in range(int(seconds / 0.05)):
        if hub.servers[server].state == state:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{server} is {hub.servers[server].state}, not {state}")


async def test_start_up_with_broken_servers_succeeds_and_reports_why():
    hub = McpHub(
        [
            lab_config(),
            McpServerConfig(name="ghost", command="brainchat-no-such-command-42"),
            McpServerConfig(
                name="dead_http",
                transport="streamable_http",
                url="http://127.0.0.1:9/mcp",
                connect_timeout=5,
            ),
            McpServerConfig(
                name="mute",
                command=sys.executable,
                args=["-c", "import time; time.sleep(60)"],
                connect_timeout=1,
            ),
            McpServerConfig(
                name="quits",
                command=sys.executable,
                args=["-c", "import sys; sys.stderr.write('missing API key'); sys.exit(2)"],
            ),
        ]
    )
    await hub.start()
    try:
        states = {r["server"]: (r["state"], r["error"] or "") for r in hub.status()}
        assert states["lab"][0] == "connected"
        assert (
            states["ghost"][0] == "failed" and "brainchat-no-such-command-42" in states["ghost"][1]
        )
        assert states["dead_http"][0] == "failed" and states["dead_http"][1]
        assert states["mute"][0] == "failed" and "within 1 s" in states["mute"][1]
        assert states["quits"][0] == "failed" and "missing API key" in states["quits"][1]
        toolset = hub.toolset()
        assert {f.source for f in toolset.failures} == {
            "mcp:ghost",
            "mcp:dead_http",
            "mcp:mute",
            "mcp:quits",
        }
        assert all(flag == "mcp:lab" for flag in {t.metadata["source"] for t in toolset.tools})
        assert await by_name(hub)["add"].ainvoke({"a": 1, "b": 1}) == "2"
    finally:
        await hub.close()


@pytest.fixture
async def lab():
    hub = McpHub([lab_config(timeout=30, tools={"slow": ToolOverride(timeout=1.0)}), time_config()])
    await hub.start()
    yield hub
    await hub.close()


async def test_a_call_past_its_timeout_is_cancelled_and_the_server_kept(lab):
    # #43: a timeout cancels the call, not the session (a server that still answers a ping
    # keeps its process and state; tests/test_mcp_call_timeouts.py has the rest)
    tools = by_name(lab)
    before = await tools["pid"].ainvoke({})
    with pytest.raises(ToolException, match=r"tool 'slow' was cancelled after .*still connected"):
        await tools["slow"].ainvoke({"seconds": 30})
    assert lab.servers["lab"].state == "connected"
    assert lab.servers["time"].state == "connected"
    assert await tools["pid"].ainvoke({}) == before and lab.status()[0]["restarts"] == 0
    assert await tools["slow"].ainvoke({"seconds": 0.1}) == "slept 0.1 s"


async def test_crash_mid_call_is_a_clear_error_and_a_later_call_restarts(lab):
    tools = by_name(lab)
    first = await tools["pid"].ainvoke({})
    with pytest.raises(
        ToolException, match=r"closed the connection during 'crash'.*crashing on purpose"
    ):
        await tools["crash"].ainvoke({})
    assert lab.servers["lab"].state == "unhealthy"
    assert "UTC" in await tools["get_current_time"].ainvoke({"timezone": "UTC"})
    second = await tools["pid"].ainvoke({})
    assert second != first and lab.servers["lab"].state == "connected"
    assert await tools["pid"].ainvoke({}) == second  # the new process is kept too


async def test_process_killed_mid_call(lab, tmp_path):
    tools = by_name(lab)
    pid = int(await tools["pid"].ainvoke({}))
    marker = tmp_path / "started"
    call = asyncio.create_task(tools["slow"].ainvoke({"seconds": 30, "started_file": str(marker)}))
    await wait_until(marker.exists, what="the slow call reaching the server")
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ToolException, match="MCP server 'lab'.*restarted on a later call"):
        await call
    assert int(await tools["pid"].ainvoke({})) != pid


async def test_process_killed_while_idle_is_noticed_and_restarted_on_the_next_call(lab):
    tools = by_name(lab)
    pid = int(await tools["pid"].ainvoke({}))
    os.kill(pid, signal.SIGKILL)
    await wait_for_state(lab, "lab", "unhealthy")
    assert "went away" in lab.status()[0]["error"]
    assert int(await tools["pid"].ainvoke({})) != pid


async def test_repeated_crashes_back_off_then_recover():
    hub = McpHub([lab_config()], backoff_base=2.0)  # wide enough that "within" holds on a slow CI
    await hub.start()
    try:
        tools = by_name(hub)
        with pytest.raises(ToolException):
            await tools["crash"].ainvoke({})
        with pytest.raises(ToolException, match="closed the connection"):
            await tools["crash"].ainvoke({})  # first restart is immediate, and it crashes again
        with pytest.raises(ToolException, match=r"unavailable .*next restart attempt in"):
            await tools["add"].ainvoke({"a": 1, "b": 2})  # within the backoff: refused at once
        await asyncio.sleep(2.1)  # past the backoff: a time rule, so time is what the test waits
        assert await tools["add"].ainvoke({"a": 1, "b": 2}) == "3"
        assert hub.servers["lab"].failures == 0
    finally:
        await hub.close()


async def test_failed_server_is_retried_by_reconnect_failed(tmp_path):
    script = tmp_path / "late.py"
    script.write_text("import sys; sys.exit(1)\n")
    hub = McpHub([McpServerConfig(name="late", command=sys.executable, args=[str(script)])])
    await hub.start()
    try:
        assert hub.status()[0]["state"] == "failed" and hub.toolset().tools == []
        script.write_text(EEG_LAB.read_text())
        await hub.reconnect_failed()
        assert hub.status()[0]["state"] == "connected" and "add" in hub.toolset().names()
    finally:
        await hub.close()


async def test_calls_after_close_are_refused():
    hub = McpHub([lab_config()])
    await hub.start()
    add = by_name(hub)["add"]
    await hub.close()
    with pytest.raises(ToolException, match="shut down"):
        await add.ainvoke({"a": 1, "b": 1})


async def test_a_configured_credential_is_masked_in_a_crashing_servers_stderr(monkeypatch):
    # no key shape, and the env entry's own name says nothing: only ${LAB_SERVICE_TOKEN} being
    # remembered as it is expanded keeps it out of the status
    monkeypatch.setenv("LAB_SERVICE_TOKEN", "violet-harbor-mcp-42")
    crash = (
        "import os, sys; sys.stderr.write('bad token ' + os.environ['UPSTREAM'] + ' / '"
        " + os.environ['HEADER_LIKE']); sys.exit(2)"
    )
    config = parse_server(
        "leaks",
        {
            "command": sys.executable,
            "args": ["-c", crash],
            "env": {"UPSTREAM": "${LAB_SERVICE_TOKEN}", "HEADER_LIKE": "plain-setting-value"},
        },
    )
    hub = McpHub([config])
    await hub.start()
    try:
        [row] = hub.status()
        assert row["state"] == "failed" and "bad token" in row["error"]
        assert "violet-harbor-mcp-42" not in row["error"]
        assert "plain-setting-value" in row["error"]  # not a credential: not masked everywhere
    finally:
        await hub.close()


def test_a_literal_credential_in_mcp_env_or_headers_is_remembered():
    parse_server("literal", {"command": "x", "env": {"API_KEY": "amber-literal-key-7"}})
    parse_server(
        "remote",
        {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer quiet-bearer-8"}},
    )
    shown = mask("failed with amber-literal-key-7; token quiet-bearer-8 refused")
    assert "amber-literal-key-7" not in shown and "quiet-bearer-8" not in shown


def test_names_that_only_contain_a_credential_word_are_not_remembered():
    """GIT_AUTHOR_NAME is not a credential: remembering it (and its last word) would mask the
    author's name in every later message of every user."""
    parse_server("git", {"command": "x", "env": {"GIT_AUTHOR_NAME": "Ada Byron-King"}})
    parse_server("kb", {"command": "x", "env": {"KEYBOARD_LAYOUT": "dvorak-intl"}})
    said = "commit by Ada Byron-King (Byron-King lab), layout dvorak-intl"
    assert mask(said) == said
