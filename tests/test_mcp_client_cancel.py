"""Stop (or a timeout) sends the server `notifications/cancelled` for the call (#25)."""

from __future__ import annotations

import asyncio

from brainchat.tools.mcp import McpHub
from mcp_servers.helpers import notes_config

from support import wait_until


async def test_a_cancelled_call_is_cancelled_on_the_server_too(tmp_path):
    marker = tmp_path / "hold.txt"
    hub = McpHub([notes_config()])
    await hub.start()
    try:
        hold = {t.name: t for t in hub.toolset().tools}["hold"]
        call = asyncio.ensure_future(hold.ainvoke({"path": str(marker)}))
        await wait_until(lambda: marker.exists(), what="the server started the call")
        call.cancel()  # what Stop does to the running tool
        await asyncio.gather(call, return_exceptions=True)
        await wait_until(
            lambda: marker.read_text() == "cancelled", timeout=15, what="the server's cancel"
        )
        assert hub.status()[0]["state"] == "connected"  # the session lives on
        tools = {t.name: t for t in hub.toolset().tools}
        assert await tools["list_subjects"].ainvoke({}) == "S01, S02, S03"
    finally:
        await hub.close()
