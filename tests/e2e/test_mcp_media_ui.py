"""An MCP tool's JPEG (server-filesystem's read_media_file shape) is shown in the page (#43)."""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, open_chat, pick_mode, screenshot, send, spec, wait_idle

pytestmark = pytest.mark.browser
MEDIA = ROOT / "tests" / "mcp_servers" / "media_lab.py"
JS_IMAGES = """() => [...document.querySelectorAll('img.inline-image')].map(i => ({
  alt: i.alt, width: i.naturalWidth, height: i.naturalHeight}))"""


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    from PIL import Image

    path = tmp_path_factory.mktemp("media") / "photo.jpg"
    Image.new("RGB", (64, 48), (200, 30, 30)).save(path, "JPEG")
    return path


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    servers = {"fs": {"command": sys.executable, "args": [str(MEDIA)], "readOnly": True}}
    config.write_text(json.dumps({"mcpServers": servers}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def test_a_jpeg_from_a_tool_is_shown_in_the_page(model_server, app, browser, photo):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    model_server.queue(
        "fc-m", ToolCalls([Call("read_media_file", {"path": str(photo)})]), Text("I have it.")
    )
    model_server.queue("ans-m", Text("Here is the photo."))
    send(page, "Show me photo.jpg")
    page.wait_for_selector("text=Here is the photo.")
    wait_idle(page)
    page.wait_for_function(f"({JS_IMAGES})().some(i => i.width === 64)")
    images = page.evaluate(JS_IMAGES)
    assert {"alt": "read_media_file image 1", "width": 64, "height": 48} in images
    screenshot(page, "mcp-jpeg.png")
    assert "read_media_file_image_1.jpg" in page.inner_text("body")  # downloads as a JPEG
    told = [m["content"] for r in model_server.requests_for("fc-m") for m in r.messages
            if m["role"] == "tool"]  # fmt: skip
    assert any("image/jpeg" in m and "shown to the user" in m for m in told), told
    page.close()
