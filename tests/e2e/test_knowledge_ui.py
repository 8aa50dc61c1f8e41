"""The user's documents in a real browser (#41): a PDF and a Markdown file dropped on the chat are
added to the personal collection (a step names pages and passages), /knowledge lists them, the
agent's answer cites the PDF with its page, and Remove asks first, then removes."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import answer_last, click_until, open_chat, screenshot, send, spec, wait_idle
from knowledge_pdf import text_page, tiny_pdf

pytestmark = pytest.mark.browser
FILE_INPUT = "#upload-button-input"
TITLE = "Lab motor-imagery protocol"


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    pages = [
        text_page("Motor-imagery recording protocol", "Each session holds 4 runs of 40 trials."),
        text_page("Preprocessing", "Band-pass filter from 8 to 30 Hz, 4th-order Butterworth."),
        text_page("Epochs", "Cut epochs from 0.5 to 2.5 s after the cue."),
    ]
    (root / "mi-protocol.pdf").write_bytes(tiny_pdf(pages, title=TITLE))
    (root / "lab-notes.md").write_text("# Lab notes\n\nEEGNet runs on the lab GPU.\n")
    return root


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m"),
                        "DEFAULT_MODE": "agent"})  # fmt: skip


def attach(page, paths: list[Path]) -> None:
    page.set_input_files(FILE_INPUT, [str(p) for p in paths])
    for path in paths:
        page.wait_for_selector(f"text={path.name}")
    page.wait_for_function("() => !document.querySelector('#chat-submit')?.disabled")
    page.click("#chat-submit")


def test_dropped_documents_are_listed_cited_with_their_page_and_removed_after_asking(
    model_server, app, browser, docs
) -> None:
    page = open_chat(browser, app)
    attach(page, [docs / "mi-protocol.pdf", docs / "lab-notes.md"])
    page.wait_for_selector(f"text=/Added {TITLE}/", timeout=60_000)
    page.wait_for_selector("text=/Added Lab notes/", timeout=60_000)
    wait_idle(page)
    body = page.inner_text("body")
    assert "3 page(s)" in body and "personal collection" in body
    assert "not an EEG recording" not in body  # a document is no refused recording

    send(page, "/knowledge")
    page.wait_for_selector("text=Your documents", timeout=30_000)
    table = page.locator("table").last.inner_text()
    assert TITLE in table and "Lab notes" in table and "personal" in table
    assert "only you" in table
    row = next(line for line in table.splitlines() if TITLE in line)
    assert "\t3\t" in row  # its pages
    answer_last(page, page.get_by_role("button", name="Done", exact=True))
    wait_idle(page)

    model_server.queue("fc-m", ToolCalls([Call("search_knowledge", {"query": "band-pass filter"})]))
    model_server.queue("ans-m", Text("The protocol band-passes the data from 8 to 30 Hz [1]."))
    send(page, "What band-pass does our protocol prescribe?")
    page.wait_for_selector("text=The protocol band-passes", timeout=60_000)
    wait_idle(page)
    offered = {t["function"]["name"] for t in model_server.requests_for("fc-m")[-1].tools or []}
    assert "search_knowledge" in offered
    answer = page.locator(".step", has_text="The protocol band-passes").last
    answer.locator("text=Sources").wait_for()
    listed = answer.locator("li").all_inner_texts()
    assert listed == [f"{TITLE}, p. 2"], listed  # the source, with its page
    assert answer.locator("a[href^='knowledge:'], li a").count() == 0  # no dead link
    assert "[1]" in answer.inner_text()  # the marker stays plain text
    copied = page.evaluate(
        "(t) => window.brainchatCleanCopy(t)", "band-passes from 8 to 30 Hz [1]."
    )
    assert copied.endswith("[1].")
    screenshot(page, "knowledge-cited.png")

    send(page, "/knowledge")
    page.wait_for_selector("text=Your documents", timeout=30_000)
    asked = f"text=/Remove {TITLE} .* from personal\\?/"
    click_until(page, page.get_by_role("button", name=f"Remove {TITLE}").last, asked)
    # asked first: Keep keeps it
    click_until(page, page.get_by_role("button", name="Keep it"), "text=Selected: Keep it")
    click_until(page, page.get_by_role("button", name=f"Remove {TITLE}").last, asked)
    removed = f"text=Removed {TITLE} and its passages."
    click_until(page, page.get_by_role("button", name="Remove", exact=True), removed, 30_000)
    page.wait_for_selector("text=Your documents (1)", timeout=30_000)  # the list again
    listing = page.locator(".step", has_text="Your documents (1)").last.inner_text()
    assert TITLE not in listing and "Lab notes" in listing
    answer_last(page, page.get_by_role("button", name="Done", exact=True).last)
    page.close()


SECRET = "# Unpublished results\n\nSubject 7 reached 93 percent with the zebrafinch pipeline.\n"


def sent_to(model_server, model: str, since: int) -> str:
    """What the model was sent (tool results, sources; not the system prompt) in its requests
    from the `since`-th on."""
    sent = model_server.requests_for(model)[since:]
    return "\n".join(str(m.get("content")) for r in sent for m in r.messages
                     if m.get("role") != "system")  # fmt: skip


@pytest.mark.attack
def test_with_accounts_one_user_never_reads_anothers_documents_until_shared_in_the_page(
    model_server, app_factory, browser, tmp_path
) -> None:
    """Bob reaches for Ana's unpublished notes through the agent and /knowledge: nothing. Ana
    shares her personal collection with Bob from /knowledge: Bob's search now cites it, and he
    still cannot remove it."""
    from test_persist_ui import add_user
    from test_recordings_ui import login

    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-k"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password"}  # fmt: skip
    add_user(tmp_path, env, "ana", "correct horse battery")
    add_user(tmp_path, env, "bob", "battery staple horse")
    (tmp_path / "ana-results.md").write_text(SECRET)
    (tmp_path / "bob-notes.md").write_text("# Bob's notes\n\nThe cap has 64 channels.\n")
    url = app_factory(env, home=tmp_path)
    ana = login(browser, url, "ana", "correct horse battery")
    attach(ana, [tmp_path / "ana-results.md"])
    ana.wait_for_selector("text=/Added Unpublished results/", timeout=60_000)
    bob = login(browser, url, "bob", "battery staple horse")
    attach(bob, [tmp_path / "bob-notes.md"])  # his own document: search_knowledge is offered
    bob.wait_for_selector("text=/Added Bob's notes/", timeout=60_000)
    wait_idle(bob)

    def bob_searches(query: str, *replies: str) -> str:
        """Bob's agent searches his documents; the last reply is the answer he reads."""
        model_server.queue("fc-k", ToolCalls([Call("search_knowledge", {"query": query})]),
                           *(Text(r) for r in replies))  # fmt: skip
        reply = replies[-1]
        since = len(model_server.requests_for("fc-k"))
        send(bob, "What did subject 7 reach with the zebrafinch pipeline?")
        bob.wait_for_selector(f"text={reply}", timeout=60_000)
        wait_idle(bob)
        assert "search_knowledge" in bob.inner_text("body")  # the tool ran
        return sent_to(model_server, "fc-k", since)

    seen = bob_searches("zebrafinch", "Enough.", "Nothing found in your documents.")
    assert "Nothing in your documents matches" in seen
    assert "93 percent" not in seen and "Unpublished" not in seen
    send(bob, "/knowledge")
    bob.wait_for_selector("text=Your documents", timeout=30_000)
    assert "Unpublished results" not in bob.locator("table").last.inner_text()
    assert bob.get_by_role("button", name="Remove Unpublished results").count() == 0
    answer_last(bob, bob.get_by_role("button", name="Done", exact=True).last)
    wait_idle(bob)

    send(ana, "/knowledge")
    ana.wait_for_selector("text=Your documents", timeout=30_000)
    asked = "text=/Who may read your personal documents/"
    click_until(ana, ana.get_by_role("button", name="Share personal…"), asked, 30_000)
    send(ana, "bob")
    ana.wait_for_selector("text=/personal can now be read by: bob/", timeout=30_000)
    ana.wait_for_selector("text=Your documents (1)", timeout=30_000)  # the list again
    assert "bob" in ana.locator("table").last.inner_text()  # the "shared with" column
    answer_last(ana, ana.get_by_role("button", name="Done", exact=True).last)

    seen = bob_searches("zebrafinch pipeline", "Subject 7 reached 93 percent [1].")
    assert "Subject 7 reached 93 percent with the zebrafinch pipeline" in seen
    send(bob, "/knowledge")
    bob.wait_for_selector("text=Your documents (2)", timeout=30_000)
    assert "Unpublished results" in bob.locator("table").last.inner_text()
    assert bob.get_by_role("button", name="Remove Unpublished results").count() == 0
    assert bob.get_by_role("button", name="Share personal…").count() == 1  # his own only
    ana.context.close()
    bob.context.close()
