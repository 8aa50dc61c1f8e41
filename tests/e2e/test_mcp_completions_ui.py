"""Prompt arguments completed by the server (#43 completion/complete), in a real browser: a
prompt command sent without its required arguments shows the server's values for the first one
as buttons; a click goes on to the next (completed with the first as context), and the last
click renders the prompt and sends it as the user's turn."""

from __future__ import annotations

import json
import sys

import pytest

from brainchat.testing.scripted_server import Text
from conftest import ROOT, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
LAB = ROOT / "tests" / "mcp_servers" / "changing_lab.py"


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory):
    config = tmp_path_factory.mktemp("mcp") / "mcp.json"
    lab = {"command": sys.executable, "args": [str(LAB)]}
    config.write_text(json.dumps({"mcpServers": {"changing": lab}}))
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
        "MCP_CONFIG": str(config),
    })  # fmt: skip


def test_the_servers_values_are_offered_one_argument_after_another(model_server, app, browser):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    before = len(model_server.requests_for("fc-m"))
    send(page, "/mcp.changing.analyse")
    page.wait_for_selector("text=the server suggests")
    assert "band" in page.inner_text("body")
    page.get_by_role("button", name="mu", exact=True).click()
    page.get_by_role("button", name="C4", exact=True).wait_for()  # mu's channels only
    assert page.get_by_role("button", name="O1", exact=True).count() == 0
    assert len(model_server.requests_for("fc-m")) == before  # nothing sent yet
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("Mu at C4 analysed."))
    page.get_by_role("button", name="C4", exact=True).click()
    page.wait_for_selector("text=Mu at C4 analysed.")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert users[-1]["content"].startswith("Analyse the mu band at C4.")
    page.close()
