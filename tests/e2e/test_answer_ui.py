"""Under an answer in a real browser: citation markers link to their sources, a chat answer has
one quiet usage line that unfolds its stats table in place, and the agent's table never wraps on a phone."""

from __future__ import annotations

import re

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
ANSWER = (
    "EEGNet is a compact CNN [1]; imagery suppresses mu power [2]. A marker with no source: [9]. "
    "In code it stays text: `scores[1]`.\n\n```python\nprint(results[2])\n```"
)
# every cell of every table whose text takes more than one line box (a wrapped cell)
JS_WRAPPED_CELLS = """() => [...document.querySelectorAll(".message-content table :is(td, th)")]
  .filter(cell => {
    const range = document.createRange(); range.selectNodeContents(cell);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    return tops.size > 1;
  }).map(cell => cell.innerText)"""


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({
        "CHAT_MODEL": spec(model_server, "chat-m", input_price=1.0, output_price=2.0),
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m", input_price=1.0, output_price=2.0),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-m-with-a-long-model-name"),
    })  # fmt: skip


def agent_answer(page, server) -> None:
    server.queue("fc-m", ToolCalls([Call("web_search", {"query": "EEGNet motor imagery"})]))
    server.queue("ans-m-with-a-long-model-name", Text(ANSWER))
    pick_mode(page, "Agent")
    send(page, "What is EEGNet and what happens to mu during imagery?")
    page.wait_for_selector("text=EEGNet is a compact CNN")
    wait_idle(page)


def test_citation_markers_link_to_their_sources(model_server, app, browser):
    page = open_chat(browser, app)
    agent_answer(page, model_server)
    answer = page.locator(".step", has_text="EEGNet is a compact CNN").last
    answer.locator("text=Sources").wait_for()
    markers = answer.locator("a", has_text=re.compile(r"^\[\d\]$"))
    found = {markers.nth(i).inner_text(): markers.nth(i).get_attribute("href")
             for i in range(markers.count())}  # fmt: skip
    assert found == {"[1]": "https://example.org/eegnet", "[2]": "https://example.org/mu-erd"}
    # the same URLs as the Sources list under the answer
    listed = answer.locator("li a").evaluate_all("links => links.map(a => a.href)")
    assert set(found.values()) <= set(listed), listed
    text = answer.inner_text()
    assert "[9]" in text  # no source 9: the marker stays as it was written
    assert answer.locator("code", has_text="scores[1]").count() == 1  # code is left alone
    assert answer.locator("pre", has_text="print(results[2])").count() == 1
    assert answer.locator("code a, pre a").count() == 0
    page.close()


def test_a_chat_answer_has_one_quiet_usage_line_that_opens_the_table(model_server, app, browser):
    model_server.queue("chat-m", Text("Alpha is 8 to 12 Hz."))
    page = open_chat(browser, app)
    send(page, "alpha band?")
    page.wait_for_selector("text=Alpha is 8 to 12 Hz.")
    wait_idle(page)
    answer = page.locator(".step", has_text="Alpha is 8 to 12 Hz.").last
    assert not answer.locator("table").is_visible()  # folded under the line, no side panel
    usage = model_server.requests_for("chat-m")[-1].usage
    line = answer.locator('a[href$="#brainchat-usage"]')
    line.first.wait_for(timeout=30_000)  # the usage line is added to the answer after it ends
    assert line.count() == 1
    expected = (rf"chat-m · {usage['prompt_tokens']} in / {usage['completion_tokens']} out "
                r"tokens · (\d+ ms|[\d.]+ s) · \$[\d.]+")  # fmt: skip
    assert re.fullmatch(expected, line.inner_text()), line.inner_text()
    line.click()  # the full table, unfolded under the line
    table = answer.locator("table", has_text="First token")
    table.wait_for(state="visible")
    head, row = table.inner_text().splitlines()[:2]
    assert head.split("\t") == ["Model", "In tokens", "Out tokens", "First token", "Time", "Cost"]
    assert row.split("\t")[:3] == ["chat-m", str(usage["prompt_tokens"]),
                                   str(usage["completion_tokens"])]  # fmt: skip
    page.close()


def test_the_agent_stats_table_does_not_wrap_on_a_390_px_screen(model_server, app, browser):
    page = open_chat(browser, app)
    agent_answer(page, model_server)
    page.set_viewport_size({"width": 390, "height": 844})
    table = page.locator(".message-content table", has_text="Total").last
    table.wait_for()
    table.scroll_into_view_if_needed()
    assert "ans-m-with-a-long-model-name" in table.inner_text()  # every column is still there
    wrapped = page.evaluate(JS_WRAPPED_CELLS)
    assert wrapped == [], wrapped
    # the table scrolls inside its own box; the page itself does not get wider than the screen
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    page.close()
