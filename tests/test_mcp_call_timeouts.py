"""A call's time limit cancels the call, never the session (#43): the server is told
(notifications/cancelled), its process and state live on; progress extends the limit up to a
hard maximum (BRAINCHAT_MCP_MAX_CALL_SECONDS)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig

from support import wait_until

SLOW_LAB = Path(__file__).parent / "mcp_servers" / "slow_lab.py"


def slow_config(timeout: float = 1.0) -> McpServerConfig:
    return McpServerConfig(
        name="slow", command=sys.executable, args=[str(SLOW_LAB)], timeout=timeout
    )


@pytest.fixture
async def slow():
    hub = McpHub([slow_config()])
    await hub.start()
    assert hub.status()[0]["state"] == "connected", hub.status()
    yield hub
    await hub.close()


def tools(hub: McpHub) -> dict:
    return {t.name: t for t in hub.toolset().tools}


async def test_a_silent_call_past_its_limit_is_cancelled_and_the_session_lives_on(slow, tmp_path):
    marker = tmp_path / "nap.txt"
    t = tools(slow)
    assert await t["remember"].ainvoke({"value": "study A"}) == "kept"
    before = await t["recall"].ainvoke({})
    with pytest.raises(ToolException) as err:
        await t["nap"].ainvoke({"seconds": 60, "path": str(marker)})
    message = str(err.value)
    assert "was cancelled after" in message and "no progress for 1 s" in message
    assert "still connected" in message
    await wait_until(lambda: marker.read_text() == "cancelled", what="the server's cancel")
    assert slow.status()[0]["state"] == "connected"
    assert await t["recall"].ainvoke({}) == before  # same process, same state


async def test_progress_extends_the_limit(slow, tmp_path):
    t = tools(slow)
    # 0.3 s between progress notifications, 3 s in all: three times the 1 s idle limit
    assert await t["work"].ainvoke({"seconds": 3, "every": 0.3}) == "worked 10 steps"
    assert slow.status()[0]["state"] == "connected"


async def test_progress_stops_extending_at_the_hard_maximum(monkeypatch, tmp_path):
    monkeypatch.setenv("BRAINCHAT_MCP_MAX_CALL_SECONDS", "2")
    marker = tmp_path / "work.txt"
    hub = McpHub([slow_config()])
    await hub.start()
    try:
        t = tools(hub)
        assert await t["remember"].ainvoke({"value": "study B"}) == "kept"
        before = await t["recall"].ainvoke({})
        with pytest.raises(ToolException) as err:
            await t["work"].ainvoke({"seconds": 60, "every": 0.3, "path": str(marker)})
        message = str(err.value)
        assert "was cancelled after" in message and "hard maximum of 2 s" in message
        assert "BRAINCHAT_MCP_MAX_CALL_SECONDS" in message and "still connected" in message
        await wait_until(lambda: marker.read_text() == "cancelled", what="the server's cancel")
        assert hub.status()[0]["state"] == "connected"
        assert await t["recall"].ainvoke({}) == before
    finally:
        await hub.close()


async def test_a_server_that_answers_not_even_a_ping_is_restarted(slow):
    t = tools(slow)
    before = await t["recall"].ainvoke({})
    with pytest.raises(ToolException, match=r"did not answer within \d+ s, nor a ping after it"):
        await t["freeze"].ainvoke({"seconds": 60})
    assert slow.status()[0]["state"] == "unhealthy"
    after = await t["recall"].ainvoke({})  # a later call restarts it: a new process
    assert after != before and slow.status()[0]["restarts"] == 1


async def test_brainchats_own_server_keeps_its_study_when_a_training_runs_past_the_limit(
    monkeypatch, tmp_path
):
    """The issue's case: train_model past its limit used to end the session ("EEG study: empty")."""
    from brainchat.eeg.io.synthetic import write_demo_set

    data = tmp_path / "data"
    write_demo_set(data, subjects=1, sessions=1, trials=20, seed=3)
    monkeypatch.setenv("BRAINCHAT_MCP_MAX_CALL_SECONDS", "25")  # read by this client only
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAINCHAT_", "AGENT_"))}
    env |= {"BRAINCHAT_DATA_DIR": str(data), "BRAINCHAT_STATE_DIR": str(tmp_path / "st")}
    brainchat = Path(sys.executable).parent / "brainchat"
    config = McpServerConfig(
        name="eeg", command=str(brainchat), args=["mcp-server"], env=env, cwd=str(tmp_path),
        timeout=15, connect_timeout=60,
    )  # fmt: skip
    hub = McpHub([config])
    await hub.start()
    try:
        t = tools(hub)
        await t["load_data"].ainvoke({"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
        await t["epoch_data"].ainvoke({})
        await t["split_dataset"].ainvoke({})
        # cancelled (at 25 s, epochs' progress extending the 15 s idle limit; on a loaded
        # machine perhaps before the first epoch): the session and its study live on
        with pytest.raises(ToolException, match=r"was cancelled after .*still connected"):
            await t["train_model"].ainvoke({"model": "eegnet", "epochs": 1000})
        assert hub.status()[0]["state"] == "connected" and hub.status()[0]["restarts"] == 0
        state = await t["get_study_state"].ainvoke({})
        assert "split by trial" in state and "eegnet" not in state.lower()
    finally:
        await hub.close()
