"""EEG in a real browser: the first-run demo-data offer, then a plot shown inside its tool step."""

from __future__ import annotations

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import expand_all_steps, open_chat, pick_mode, screenshot, send, spec, wait_idle

pytestmark = pytest.mark.browser

JS_HEADERS_AROUND_IMAGE = """(alt) => {
  let node = document.querySelector(`img[alt^="${alt}"]`);
  while (node && !node.querySelector("button[id^='step-']")) node = node.parentElement;
  if (!node) return [];
  return [...node.querySelectorAll("button[id^='step-']")].map(b => b.id.slice(5).split(" · ")[0]);
}"""


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m")})


def test_demo_set_offer_then_a_plot_appears_in_its_step(model_server, app, browser):
    page = open_chat(browser, app)
    page.wait_for_selector("text=is empty")
    page.get_by_role("button", name="Write the demo EEG set").click()
    page.wait_for_selector("text=/Wrote 4 recordings/", timeout=120_000)
    assert "sub-01_ses-01_task-mi_eeg.edf" in page.inner_text("body")
    files = ["sub-01_ses-01_task-mi_eeg.edf"]
    model_server.queue(
        "fc-m",
        ToolCalls([Call("load_data", {"files": files})]),
        ToolCalls([Call("plot_psd", {"fmin": 2, "fmax": 40})]),
        Text("Loaded and plotted."),
        Text("Here is the spectrum of subject 1."),  # the answer (one model plays both roles)
    )
    pick_mode(page, "Agent")
    send(page, "load subject 1 and plot its spectrum")
    page.wait_for_selector("text=Here is the spectrum", timeout=120_000)
    wait_idle(page, timeout=60_000)
    assert page.locator("button[id^='step-Tool call: plot_psd · done']").count() == 1
    expand_all_steps(page)
    page.wait_for_selector("img[alt^='PSD per channel group']")  # the ToolImage, shown as cl.Image
    # the plot sits in its own "Tool result: plot_psd" step: the smallest block holding both the
    # image and that step's header holds no other step's header
    headers = page.evaluate(JS_HEADERS_AROUND_IMAGE, "PSD per channel group")
    assert headers == ["Tool result: plot_psd"], headers
    page.locator("img[alt^='PSD per channel group']").scroll_into_view_if_needed()
    screenshot(page, "eeg-run.png")
    page.close()
