"""A user connects an MCP server that requires OAuth 2.1, signs in through the link in the chat,
and the agent then uses the server's tool, in a real browser (#25).

The server is mcp_servers/oauth_lab.py over real HTTP with its own authorization server, which
approves at once and sends the browser back to the app's callback. The tokens it issued are read
from its log, and the test checks they never reach the page, the app's log or the model.
"""

from __future__ import annotations

import os
import re

import pytest
from test_mcp_connect_ui import ALLOWED, DIALOG, approve_for_conversation, close_dialog, connect

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp_oauth import CALLBACK_PATH, CLIENT_METADATA_PATH
from conftest import ROOT, pick_mode, send, spec, wait_idle
from mcp_servers.oauth_helpers import oauth_lab

pytestmark = pytest.mark.browser
SIGN_IN = "text=/MCP server secure asks you to sign in/"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with oauth_lab(tmp_path_factory.mktemp("oauth")) as running:
        yield running


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory, lab):
    root = tmp_path_factory.mktemp("approot")
    (root / ".chainlit").mkdir()
    config = (ROOT / ".chainlit" / "config.toml").read_text()
    assert len(ALLOWED.findall(config)) == 1, "the repo config has one user-server allowlist"
    config = ALLOWED.sub(f'allowed_urls = ["{lab.base}"]', config)
    (root / ".chainlit" / "config.toml").write_text(config)
    os.symlink(ROOT / ".chainlit" / "translations", root / ".chainlit" / "translations")
    os.symlink(ROOT / "public", root / "public")
    os.symlink(ROOT / "chainlit.md", root / "chainlit.md")
    return app_factory({
        "CHAINLIT_APP_ROOT": str(root),
        "CHAT_MODEL": spec(model_server, "chat-m"),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
    })  # fmt: skip


def test_user_signs_in_through_the_link_and_the_agent_uses_the_servers_tool(
    model_server, app, app_factory, browser, lab
):
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # tabs share the login
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(app)
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("text=/brainchat is (ready|not ready)/")  # the session has started
    pick_mode(page, "Agent")
    connect(page, "secure", lab.url)

    # The connect waits for the sign-in; the chat shows the link, the server's name and where
    # the user signs in.
    page.wait_for_selector(SIGN_IN, timeout=60_000)  # discovery and registration first
    page.wait_for_selector("text=/You sign in at 127.0.0.1/")
    link = page.locator(f"a[href^='{lab.base}/authorize?']")
    link.wait_for()
    assert link.inner_text().strip() == "Sign in to secure at 127.0.0.1"
    href = link.get_attribute("href")
    assert href.startswith(f"{lab.base}/authorize?") and "code_challenge_method=S256" in href

    # The app's Client ID Metadata Document is public (an authorization server fetches it)
    anonymous = browser.new_context()
    document = anonymous.request.get(f"{app}{CLIENT_METADATA_PATH}").json()
    anonymous.close()
    assert document["client_id"] == f"{app}{CLIENT_METADATA_PATH}"
    assert document["redirect_uris"] == [f"{app}{CALLBACK_PATH}"]

    # A forged callback (a state that is no one's pending sign-in) is refused, and changes nothing
    tab = context.new_page()
    forged = tab.goto(f"{app}{CALLBACK_PATH}?code=stolen&state=forged")
    assert forged.status == 400 and "Sign-in not accepted" in tab.inner_text("body")

    # The user follows the link: the authorization server approves and sends them back
    answer = tab.goto(href)
    assert answer.url.startswith(f"{app}{CALLBACK_PATH}?")
    assert answer.status == 200
    assert "Signed in to MCP server 'secure'" in tab.inner_text("body")
    tab.close()

    page.wait_for_selector("text=MCP added!", timeout=60_000)  # token, initialize, tools
    page.wait_for_selector("text=/MCP server secure connected; Agent mode can now use/")
    close_dialog(page)

    model_server.queue("fc-m", ToolCalls([Call("add", {"a": 2, "b": 40})]), Text("done"))
    model_server.queue("ans-m", Text("2 + 40 is 42, computed by the signed-in server."))
    send(page, "What is 2 + 40? Use my server.")
    approve_for_conversation(page, "add")
    page.wait_for_selector("text=computed by the signed-in server")
    wait_idle(page)
    assert [e["tool"] for e in lab.events("call")] == ["add"]
    last = model_server.requests_for("fc-m")[-1]
    assert any(m["role"] == "tool" and "42" in str(m.get("content")) for m in last.messages)

    # Removing the server signs the user out
    page.click("#message-composer button:has(> svg.lucide-plug)")
    dialog = page.locator(DIALOG)
    dialog.get_by_role("tab", name="My MCPs").click()
    dialog.locator("button:has(svg[class*='lucide-trash'])").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Confirm").click()
    page.wait_for_selector("text=/you are signed out of it \\(its tokens are deleted\\)/")
    close_dialog(page)

    # The tokens the server issued never reached the page, the app's log or the model
    issued = lab.events("issued")
    secrets = [t for e in issued for t in (e["access_token"], e["refresh_token"])]
    assert secrets
    shown = page.content() + page.inner_text("body")
    app_log = (app_factory.home[app] / "app.log").read_text(errors="replace")
    to_model = repr([(r.messages, r.tools) for r in model_server.requests])
    for secret in secrets:
        assert secret not in shown
        assert secret not in app_log
        assert secret not in to_model
    assert re.search(r"MCP sign-in to 'secure': code received", app_log)
    context.close()
