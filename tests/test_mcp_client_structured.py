"""A tool's structuredContent is checked against its outputSchema (#25): a mismatch is the
call's error, named as such, and the server stays connected (it is not a lost connection)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig

LYING = Path(__file__).parent / "mcp_servers" / "lying_schema.py"


async def test_structured_content_against_the_output_schema():
    hub = McpHub([McpServerConfig(name="liar", command=sys.executable, args=[str(LYING)])])
    await hub.start()
    try:
        tools = {t.name: t for t in hub.toolset().tools}
        with pytest.raises(ToolException, match="does not match its outputSchema") as caught:
            await tools["stats"].ainvoke({})
        assert "'many' is not of type 'integer'" in str(caught.value)
        assert "restarted" not in str(caught.value)
        good = await tools["good_stats"].ainvoke(
            {"type": "tool_call", "id": "c1", "name": "good_stats", "args": {}}
        )
        assert good.artifact["structured"] == {"trials": 120}
        row = hub.status()[0]
        assert row["state"] == "connected" and row["restarts"] == 0, row
    finally:
        await hub.close()


def test_records_are_a_table_and_other_values_json():
    from brainchat.ui.structured_view import structured_block

    table = structured_block({"result": [{"subject": "S01", "trials": 40}, {"subject": "a|b"}]})
    assert table.splitlines() == [
        "| subject | trials |",
        "|---|---|",
        "| S01 | 40 |",
        "| a\\|b |  |",
    ]
    nested = structured_block({"city": "Oslo", "days": [1, 2]})
    assert nested.startswith("```json\n{\n") and '"city": "Oslo"' in nested
    many = structured_block([{"i": i} for i in range(60)])
    assert many.count("\n| ") == 50 and "10 more rows not shown" in many
