"""EEG in a real browser: the first-run demo-data offer, then a plot shown inside its tool step."""

from __future__ import annotations

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser


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
    page.wait_for_selector("img[alt^='PSD per channel group']")  # the ToolImage, shown as cl.Image
    page.close()
