"""The user's documents in a real browser (#41): a PDF and a Markdown file dropped on the chat are
added to the personal collection (a step names pages and passages), /knowledge lists them, the
agent's answer cites the PDF with its page, and Remove asks first, then removes."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import open_chat, screenshot, send, spec, wait_idle
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
    page.get_by_role("button", name="Done").click()
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
    page.get_by_role("button", name=f"Remove {TITLE}").last.click()
    page.wait_for_selector(f"text=/Remove {TITLE} .* from personal\\?/")
    page.get_by_role("button", name="Keep it").click()  # asked first: Keep keeps it
    page.wait_for_selector("text=Selected: Keep it")
    page.get_by_role("button", name=f"Remove {TITLE}").last.click()
    page.wait_for_selector(f"text=/Remove {TITLE} .* from personal\\?/")
    page.get_by_role("button", name="Remove", exact=True).click()
    page.wait_for_selector(f"text=Removed {TITLE} and its passages.", timeout=30_000)
    page.wait_for_selector("text=Your documents (1)", timeout=30_000)  # the list again
    listing = page.locator(".step", has_text="Your documents (1)").last.inner_text()
    assert TITLE not in listing and "Lab notes" in listing
    page.get_by_role("button", name="Done").last.click()
    page.close()
