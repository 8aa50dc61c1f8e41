"""An analysis in a real browser (#39): its numbers as a table in its step, its figure under the
answer, and the answer held to those numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
FILE = "demo/sub-01_ses-01_task-mi_eeg.edf"
JS_STEP_TABLE = """() => {  // the band_power step's table: its header and its rows
  const step = [...document.querySelectorAll("button[id^='step-band_power']")][0];
  const block = step && step.closest("div[data-state]");  // the step item, not its button
  const table = block && block.querySelector("table");
  if (!table) return null;
  return {head: [...table.querySelectorAll("th")].map(th => th.innerText.trim()),
          rows: [...table.querySelectorAll("tbody tr")].map(tr =>
            [...tr.querySelectorAll("td")].map(td => td.innerText.trim()))};
}"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("analysis") / "data"
    write_demo_set(root / "demo", subjects=1, sessions=1, trials=20)
    return root


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-a"),
                        "BRAINCHAT_DATA_DIR": str(data_dir)})  # fmt: skip


def test_band_power_shows_its_table_in_the_step_and_its_figure_under_the_answer(
    model_server, app, browser
):
    model_server.queue(
        "fc-a",
        ToolCalls([Call("load_data", {"files": [FILE]})]),
        ToolCalls([Call("band_power", {"bands": ["alpha"]})]),
        Text("I have the band power."),
        Text("Alpha power is highest at C4: 99.99 µV² (invented for this test)."),
    )
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    send(page, "Which channel of sub-01 has the most alpha power?")
    page.wait_for_selector("text=Alpha power is highest", timeout=120_000)
    wait_idle(page, timeout=60_000)
    expand_all_steps(page)
    table = page.wait_for_function(JS_STEP_TABLE, timeout=30_000).json_value()
    assert table["head"][:4] == ["recording", "channel", "band", "fmin"], table["head"]
    assert "power_uv2" in table["head"] and "relative" in table["head"]
    assert len(table["rows"]) == 22 and {r[2] for r in table["rows"]} == {"alpha"}
    alts = page.evaluate("() => [...document.querySelectorAll('img.inline-image')].map(i => i.alt)")
    assert "band power" in alts, alts
    # the invented figure is marked: no tool produced 99.99
    assert page.locator("text=⚠️").count() >= 1
