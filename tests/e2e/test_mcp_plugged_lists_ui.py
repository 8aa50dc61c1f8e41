"""A server plugged in with the plug button is heard while the page sits idle (#43): a prompt it
adds (prompts/list_changed) joins the `/` menu without another message, and a resource attached
from it is updated when the server says it changed (resources/updated, subscribed at attach).

The change is made by another client of the same server (tests/mcp_servers/broadcast_lab.py
tells every session), so no run of the page is open when it arrives.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading

import pytest

from conftest import ROOT, open_chat, send
from mcp_servers.helpers import http_lab

pytestmark = pytest.mark.browser
PLUG = "#message-composer button:has(> svg.lucide-plug)"  # the MCP button in the message bar
DIALOG = "#mcp-servers"
LAB = ROOT / "tests" / "mcp_servers" / "broadcast_lab.py"
ALLOWED = re.compile(r"allowed_urls = \[[^\]]*\]")


@pytest.fixture(scope="module")
def lab_url():
    with http_lab("--http", LAB) as url:
        yield url


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory, lab_url):
    from conftest import spec

    root = tmp_path_factory.mktemp("approot")
    (root / ".chainlit").mkdir()
    origin = re.match(r"http://[^/]+", lab_url).group(0)  # type: ignore[union-attr]
    config = (ROOT / ".chainlit" / "config.toml").read_text()
    assert len(ALLOWED.findall(config)) == 1, "the repo config has one user-server allowlist"
    (root / ".chainlit" / "config.toml").write_text(
        ALLOWED.sub(f'allowed_urls = ["{origin}"]', config)
    )
    for name in (".chainlit/translations", "public", "chainlit.md"):
        os.symlink(ROOT / name, root / name)
    return app_factory({
        "CHAINLIT_APP_ROOT": str(root),
        "CHAT_MODEL": spec(model_server, "chat-m"),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
    })  # fmt: skip


def as_another_client(url: str, tool: str) -> str:
    """Call one of the lab's tools from a client of its own (in a thread: the page's loop is
    Playwright's)."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def call() -> str:
        async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as c:
            await c.initialize()
            return (await c.call_tool(tool, {})).content[0].text  # type: ignore[union-attr]

    said: list[str] = []
    thread = threading.Thread(target=lambda: said.append(asyncio.run(call())))
    thread.start()
    thread.join(60)
    assert said, f"the lab's {tool} did not answer"
    return said[0]


def test_an_idle_pages_menu_and_attachment_follow_its_plugged_server(app, browser, lab_url):
    page = open_chat(browser, app)
    page.click(PLUG)
    dialog = page.locator(DIALOG)
    dialog.get_by_role("tab", name="Connect an MCP").click()
    page.fill("#server-name", "bcast")
    page.click("#server-type")
    page.get_by_role("option", name="streamable-http").click()
    page.fill("#server-url", lab_url)
    dialog.get_by_role("button", name="Confirm").click()
    page.locator(".step", has_text="MCP server bcast connected").last.wait_for()
    page.keyboard.press("Escape")
    page.wait_for_selector(DIALOG, state="detached")

    send(page, "/resource")
    page.get_by_role("button", name="Attach lab://counter").click()
    page.wait_for_selector("text=/Attached lab://counter from MCP server bcast/")
    page.wait_for_selector("text=You will see its updates here")

    assert as_another_client(lab_url, "grow") == "told 1"  # the page's session listed prompts
    page.fill("#chat-input", "/mcp.bcast")  # no message sent: the menu came by itself
    page.get_by_text("mcp.bcast.late_prompt", exact=False).first.wait_for()
    page.fill("#chat-input", "")

    assert as_another_client(lab_url, "bump") == "count=1 told 1"  # subscribed at attach
    page.wait_for_selector("text=/MCP server bcast updated/")
    page.get_by_text("count=1").first.wait_for()
    page.close()
