"""A user connects their own MCP server from the chat bar (Chainlit's plug button) in a real browser.

Its tools ask before their first use in a conversation (the server marks none read-only):
Approve once / Approve for this conversation / Reject.

The app runs from a copy of the repo's .chainlit/config.toml whose user-server allowlist names this
test's ports: Chainlit matches `allowed_urls` on exact scheme, host and port, and the servers here
listen on free ports. Everything else (public/, translations, chainlit.md) is the repo's own.
"""

from __future__ import annotations

import os
import re

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import ROOT, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle
from mcp_servers.helpers import free_port, http_lab, http_notes
from mcp_servers.study_notes import PROTOCOL

pytestmark = pytest.mark.browser
PLUG = "#message-composer button:has(> svg.lucide-plug)"  # the MCP button in the message bar
DIALOG = "#mcp-servers"
FORM = "#brainchat-elicitation-form"
ELICIT_LAB = ROOT / "tests" / "mcp_servers" / "elicit_lab.py"
STEP_BODY = "xpath=ancestor::div[starts-with(@id, 'step-')][1]"  # a step title's whole step
ALLOWED = re.compile(r"allowed_urls = \[[^\]]*\]")


@pytest.fixture(scope="module")
def lab_url():
    with http_lab("--http") as url:  # FastMCP test server over streamable HTTP
        yield url


@pytest.fixture(scope="module")
def notes_url():
    with http_notes() as url:  # resources, a template and prompts, over streamable HTTP
        yield url


@pytest.fixture(scope="module")
def elicit_url():
    with http_lab("--http", ELICIT_LAB) as url:  # its tools ask the user mid-call
        yield url


@pytest.fixture(scope="module")
def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory, lab_url, notes_url, dead_url, elicit_url):
    root = tmp_path_factory.mktemp("approot")
    (root / ".chainlit").mkdir()
    origins = [
        re.match(r"http://[^/]+", u).group(0) for u in (lab_url, notes_url, dead_url, elicit_url)
    ]
    config = (ROOT / ".chainlit" / "config.toml").read_text()
    assert len(ALLOWED.findall(config)) == 1, "the repo config has one user-server allowlist"
    config = ALLOWED.sub(f"allowed_urls = {origins!r}".replace("'", '"'), config)
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


def connect(page, name: str, url: str) -> None:
    """Fill the dialog's "Connect an MCP" form for a streamable-http server and confirm."""
    page.click(PLUG)
    dialog = page.locator(DIALOG)
    dialog.get_by_role("tab", name="Connect an MCP").click()
    page.fill("#server-name", name)
    page.click("#server-type")
    page.get_by_role("option", name="streamable-http").click()
    page.fill("#server-url", url)
    dialog.get_by_role("button", name="Confirm").click()


def approve_for_conversation(page, tool: str) -> None:
    """The first call of a user server's tool asks, says why, and offers three answers."""
    question = page.locator(".step", has_text=f"wants to run {tool}").last
    question.wait_for()
    assert "an MCP server you connected" in question.inner_text()
    for label in ("Approve once", "Approve for this conversation", "Reject"):
        assert page.get_by_role("button", name=label, exact=True).count() == 1, label
    page.get_by_role("button", name="Approve for this conversation", exact=True).click()
    page.wait_for_selector(f"text=Approved for this conversation: {tool}")


def close_dialog(page) -> None:
    page.keyboard.press("Escape")
    page.wait_for_selector(DIALOG, state="detached")


def tool_listing(page, n: int) -> str:
    """The text of the n-th (1-based) `/tools` answer, once it is there."""
    listings = page.locator(".step", has_text="Agent tools")
    listings.nth(n - 1).wait_for()
    return str(listings.nth(n - 1).inner_text())


def test_user_connects_a_server_the_agent_uses_its_tool_then_disconnects(
    model_server, app, browser, lab_url
):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    connect(page, "mylab", lab_url)
    page.wait_for_selector("text=MCP added!")  # the dialog's toast
    dialog = page.locator(DIALOG)
    dialog.get_by_text("mylab").wait_for()  # "My MCPs" tab, with the server's tool badges
    assert "add" in dialog.inner_text().split("\n")
    page.wait_for_selector("text=/MCP server mylab connected; Agent mode can now use/")
    close_dialog(page)
    assert page.inner_text(PLUG).strip() == "1"  # one connected server on the plug

    send(page, "/tools")
    listing = tool_listing(page, 1)
    assert re.search(r"MCP server mylab: .*\badd\b", listing), listing

    model_server.queue("fc-m", ToolCalls([Call("add", {"a": 2, "b": 40})]), Text("done"))
    model_server.queue("ans-m", Text("2 + 40 is 42, computed by your MCP server."))
    send(page, "What is 2 + 40? Use my server.")
    approve_for_conversation(page, "add")
    page.wait_for_selector("text=computed by your MCP server")
    wait_idle(page)
    expand_all_steps(page)
    assert page.locator("button[id^='step-add · done']").count() == 1
    result = page.locator("button[id^='step-add · done']").locator(STEP_BODY)
    assert re.search(r"\b42\b", result.inner_text())  # the tool's result, shown in its step
    first, last = model_server.requests_for("fc-m")[0], model_server.requests_for("fc-m")[-1]
    assert "add" in [t["function"]["name"] for t in first.tools or []]  # offered to the model
    assert any(m["role"] == "tool" and "42" in str(m.get("content")) for m in last.messages)

    model_server.queue("fc-m", ToolCalls([Call("add", {"a": 1, "b": 1})]), Text("done"))
    model_server.queue("ans-m", Text("1 + 1 is 2, and nobody was asked again."))
    send(page, "And 1 + 1?")  # approved for this conversation: a second call does not ask
    page.wait_for_selector("text=nobody was asked again")
    wait_idle(page)
    assert "wants to run add" not in page.inner_text("body")
    assert page.get_by_text("Approved for this conversation: add").count() == 1

    page.click(PLUG)
    dialog.get_by_role("tab", name="My MCPs").click()
    dialog.locator("button:has(svg[class*='lucide-trash'])").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Confirm").click()
    page.wait_for_selector("text=MCP removed!")
    page.wait_for_selector("text=/MCP server mylab disconnected; its tools are removed/")
    close_dialog(page)
    send(page, "/tools")
    listing = tool_listing(page, 2)
    assert "mylab" not in listing and not re.search(r"\badd\b", listing), listing
    page.close()


def test_connecting_to_a_dead_url_shows_an_error_and_the_chat_goes_on(
    model_server, app, browser, dead_url
):
    page = open_chat(browser, app)
    connect(page, "nobody", dead_url)
    error = page.locator("[data-sonner-toast][data-type='error']")
    error.filter(has_text="Could not connect to the MCP").wait_for(timeout=45_000)  # limit: 30 s
    assert "MCP added!" not in page.inner_text("body")
    page.locator(DIALOG).get_by_role("tab", name="My MCPs").click()
    page.locator(DIALOG).get_by_text("No MCP servers connected").wait_for()
    close_dialog(page)
    assert page.inner_text(PLUG).strip() == ""  # nothing connected
    assert "MCP server nobody connected" not in page.inner_text("body")

    model_server.queue("chat-m", Text("Still here after the failed connect."))
    send(page, "hello?")
    page.wait_for_selector("text=Still here after the failed connect.")
    wait_idle(page)
    page.close()


def test_a_connected_servers_prompts_are_commands_and_its_resources_attach(
    model_server, app, browser, notes_url
):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    connect(page, "mynotes", notes_url)
    said = page.locator(".step", has_text="MCP server mynotes connected").last
    said.wait_for()
    assert "/mcp.mynotes.summarise" in said.inner_text() and "/resource" in said.inner_text()
    close_dialog(page)

    page.fill("#chat-input", "/mcp.mynotes")  # its prompts joined the command menu
    page.get_by_text("mcp.mynotes.summarise", exact=False).first.wait_for()
    page.fill("#chat-input", "")
    send(page, "/resource")
    page.wait_for_selector("text=notes://subject/{subject}")
    assert "**mynotes**" not in page.inner_text("body")  # rendered, not raw markdown
    page.get_by_role("button", name="Attach notes://protocol").click()
    page.wait_for_selector("text=/Attached notes://protocol from MCP server mynotes/")
    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("The cue lasts 4 s, says your server."))
    send(page, "How long is the cue?")
    page.wait_for_selector("text=says your server")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert PROTOCOL in users[-1]["content"]  # the plugged server's resource went with it

    model_server.queue("fc-m", Text("Nothing to call."))
    model_server.queue("ans-m", Text("S03 is fine."))
    send(page, "/mcp.mynotes.summarise subject=S03")
    page.wait_for_selector("text=S03 is fine.")
    wait_idle(page)
    users = [m for m in model_server.requests_for("fc-m")[-1].messages if m["role"] == "user"]
    assert users[-1]["content"].startswith("Summarise subject S03 in a short style")
    page.close()


def test_a_connected_server_asks_its_question_in_a_form_and_gets_the_answer(
    model_server, app, browser, elicit_url
):
    """Chainlit opens a plug-button server's session itself: brainchat still declares form
    elicitation there and routes the server's question to the run whose call is open."""
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    connect(page, "registry", elicit_url)
    page.wait_for_selector("text=/MCP server registry connected/")
    close_dialog(page)
    result = "registered Ada <ada@example.org>, 36 y, 70 kg, consent=True"
    model_server.queue("fc-m", ToolCalls([Call("register_participant", {})]), Text("Enough."))
    model_server.queue("ans-m", Text("Ada is registered with your server."))
    send(page, "Register the participant on my server")
    approve_for_conversation(page, "register_participant")
    form = page.locator(FORM)
    form.wait_for(timeout=90_000)
    body = page.inner_text("body")
    assert "MCP server registry asks" in body and "Who is the participant?" in body
    form.get_by_label("Name *").fill("Ada")
    form.get_by_label("Email *").fill("ada@example.org")
    form.get_by_label("Age *").fill("36")
    form.get_by_label("Consent *").check()
    form.locator("#elicit_accept").click()
    page.wait_for_selector("text=Ada is registered with your server.", timeout=90_000)
    wait_idle(page)
    assert page.locator(FORM).count() == 0
    told = [m for m in model_server.requests_for("ans-m")[-1].messages if result in str(m)]
    assert told  # the server's result, made of the answers, reached the answer model
    expand_all_steps(page)
    page.wait_for_selector(f"text={result}")
    page.close()
