"""A tool result reaches the model once (#43): server-filesystem's read_text_file (the file as
text and again as structuredContent) gives the file once; read_media_file's base64 never
reaches the model; a JPEG is shown (a ToolImage the page renders) and only then called shown."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest
from mcp import types

from brainchat.agent.graph import build_agent
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from brainchat.tools.mcp_config import McpServerConfig
from brainchat.tools.mcp_content import image_mime, model_content

from support import collect, of, spec

MEDIA_LAB = Path(__file__).parent / "mcp_servers" / "media_lab.py"


def jpeg(path: Path) -> bytes:
    from PIL import Image

    Image.new("RGB", (64, 48), (200, 30, 30)).save(path, "JPEG")
    return path.read_bytes()


@pytest.fixture
async def media():
    hub = McpHub([McpServerConfig(name="fs", command=sys.executable, args=[str(MEDIA_LAB)])])
    await hub.start()
    assert hub.status()[0]["state"] == "connected", hub.status()
    yield hub
    await hub.close()


async def run_agent(s, hub: McpHub, calls: list[Call]):
    fc, ans = spec(s, "fc"), spec(s, "ans")
    agent = build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        hub.toolset().tools,
        specs={"function_call": fc, "answer": ans},
    )
    s.queue("fc", ToolCalls(calls), Text("Enough."))
    s.queue("ans", Text("Done."))
    events = await collect(agent.run("Read the files"))
    tool_messages = [
        m["content"] for r in s.requests_for("fc") for m in r.messages if m["role"] == "tool"
    ]
    return events, tool_messages


async def test_a_text_file_reaches_the_model_once(scripted_server, media, tmp_path):
    line = "Subject S{:02d}: alpha 10 Hz, eyes closed, 64 channels, good impedance.\n"
    text = "".join(line.format(i) for i in range(150))[:10_200]
    assert len(text) == 10_200
    notes = tmp_path / "notes.txt"
    notes.write_text(text)
    _, sent = await run_agent(
        scripted_server, media, [Call("read_text_file", {"path": str(notes)})]
    )
    assert len(sent) == 1
    assert sent[0].count("Subject S07:") == 1  # once, not beside its structured copy
    assert text.strip() in sent[0] and len(sent[0]) < len(text) + 200


async def test_media_is_described_never_pasted_and_a_jpeg_is_shown(
    scripted_server, media, tmp_path
):
    photo, blob = tmp_path / "photo.jpg", tmp_path / "raw.bin"
    picture = jpeg(photo)
    blob.write_bytes(bytes(range(256)) * 40)
    events, sent = await run_agent(
        scripted_server,
        media,
        [
            Call("read_media_file", {"path": str(photo)}),
            Call("read_media_file", {"path": str(blob)}),
        ],
    )
    for encoded in (
        base64.b64encode(picture).decode(),
        base64.b64encode(blob.read_bytes()).decode(),
    ):
        assert all(encoded[:64] not in m for m in sent)  # base64 never reaches the model
    said = "\n".join(sent)
    assert f"[image image/jpeg, {len(picture)} bytes, shown to the user]" in said
    assert "raw.bin application/octet-stream, 10 KiB, binary: not shown]" in said
    assert "base64 characters" not in said  # the structured copy of the blocks is not added
    images = of(events, "tool_image")
    assert [i.png for i in images] == [picture] and image_mime(picture) == "image/jpeg"
    steps = str([e.structured for e in of(events, "tool_finished")])  # what the page shows
    assert base64.b64encode(picture).decode()[:64] not in steps and "not shown" in steps


def test_the_rule_for_each_shape():
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40).decode()
    only_data = types.CallToolResult(content=[], structuredContent={"trials": 120})
    assert model_content(only_data).text == '{"trials":120}'  # no text: the structured content
    summary = types.CallToolResult(
        content=[types.TextContent(type="text", text='{\n  "trials": 120\n}')],
        structuredContent={"trials": 120},
    )
    assert model_content(summary).text == '{"trials":120}'  # its copy, once
    svg = types.ImageContent(
        type="image", data=base64.b64encode(b"<svg/>").decode(), mimeType="image/svg+xml"
    )
    fake = types.ImageContent(
        type="image", data=base64.b64encode(b"<html>").decode(), mimeType="image/png"
    )
    real = types.ImageContent(type="image", data=png, mimeType="image/png")
    given = model_content(types.CallToolResult(content=[svg, fake, real]), can_show=True)
    lines = given.text.splitlines()
    assert "not shown: the page shows image/png" in lines[0]
    assert "its bytes are not image/png, not shown" in lines[1]
    assert lines[2].endswith("shown to the user]") and len(given.images) == 1
    around = [types.TextContent(type="text", text="before"), real]
    around.append(types.TextContent(type="text", text="after"))
    lines = model_content(types.CallToolResult(content=around)).text.splitlines()
    assert lines[0] == "before" and lines[1].startswith("[image") and lines[2] == "after"
    headless = model_content(types.CallToolResult(content=[real]), can_show=False)
    assert "not shown" in headless.text and not headless.images  # no page: never called shown
