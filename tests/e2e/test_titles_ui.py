"""Thread titles in the sidebar (#40): each comes from its question, none stays "Untitled
Conversation" after its first message, two threads asking the same thing get distinct titles,
and a Chinese question gives a Chinese title.

Before: threads stayed "Untitled Conversation" or repeated titles.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Text
from conftest import open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
THREAD = re.compile(r"/thread/([0-9a-f-]{36})")
FILE_INPUT = "#upload-button-input"  # Chainlit's hidden input behind the attach button


@pytest.fixture(scope="module")
def app(model_server, app_factory) -> str:
    return str(app_factory({"CHAT_MODEL": spec(model_server, "chat-m"),
                            "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m")}))  # fmt: skip


def one_thread(browser: Any, url: str, server: Any, question: str, agent: bool = False) -> str:
    """Ask `question` in a new thread (Agent mode picked first when `agent`): the thread id."""
    page = open_chat(browser, url)
    if agent:
        pick_mode(page, "Agent", moved=False)
        server.queue("fc-m", Text("The answer."), Text("The answer, written."))
    else:
        server.queue("chat-m", Text("The answer."))
    send(page, question)
    page.wait_for_selector("text=The answer", timeout=60_000)
    wait_idle(page)
    page.wait_for_url(THREAD)
    tid = THREAD.search(page.url).group(1)  # type: ignore[union-attr]
    page.close()
    return tid


def threads(page: Any, url: str) -> list[dict[str, Any]]:
    """The user's threads as the sidebar gets them."""
    query = {"pagination": {"first": 100}, "filter": {}}
    return list(page.request.post(f"{url}/project/threads", data=query).json()["data"])


def sidebar(browser: Any, url: str, tids: list[str]) -> list[str]:
    """The titles the sidebar shows for `tids`, after a fresh load."""
    page = open_chat(browser, url)
    titles = []
    for tid in tids:
        item = page.locator(f"#thread-{tid}")
        item.wait_for(timeout=30_000)
        titles.append(" ".join(item.inner_text().split()))
    page.close()
    return titles


def test_sidebar_titles_come_from_the_question_unique_and_in_its_language(
    model_server, app, browser
):
    same = "What is the mu rhythm?"
    tids = [
        one_thread(browser, app, model_server, same),
        one_thread(browser, app, model_server, same),
        one_thread(browser, app, model_server, "运动想象的脑电特征是什么？"),
        one_thread(browser, app, model_server, "Which band shows ERD?", agent=True),
    ]
    titles = sidebar(browser, app, tids)
    assert "Untitled Conversation" not in titles, titles
    assert titles == [same, f"{same} (2)", "运动想象的脑电特征是什么？", "Which band shows ERD?"]


def test_files_sent_without_text_name_the_thread_until_its_first_question(
    model_server, app, browser, tmp_path
):
    """A first message of files alone left the thread "Untitled Conversation"."""
    write_demo_set(tmp_path, subjects=1, sessions=1, trials=8, seed=1)
    (edf,) = tmp_path.glob("*.edf")
    page = open_chat(browser, app)
    before = {t["id"] for t in threads(page, app)}
    page.set_input_files(FILE_INPUT, [str(edf)])
    page.wait_for_selector(f"text={edf.name}")
    page.wait_for_function("() => !document.querySelector('#chat-submit')?.disabled")
    page.click("#chat-submit")  # attachments only, no text: no model turn
    page.wait_for_selector("text=/Uploaded uploads/")
    wait_idle(page)
    new: list[dict[str, Any]] = []
    for _ in range(300):  # the thread is saved as its steps are
        new = [t for t in threads(page, app) if t["id"] not in before]
        if new and new[0]["name"]:
            break
        page.wait_for_timeout(100)
    assert [t["name"] for t in new] == [edf.name], new
    tid = new[0]["id"]
    assert sidebar(browser, app, [tid]) == [edf.name]
    model_server.queue("chat-m", Text("It holds motor imagery."))
    send(page, "什么是这个文件？")
    page.wait_for_selector("text=It holds motor imagery.")
    wait_idle(page)
    page.close()
    assert sidebar(browser, app, [tid]) == ["什么是这个文件？"]  # the first question names it
