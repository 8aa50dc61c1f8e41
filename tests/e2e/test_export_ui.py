"""Taking the analysis home in a real browser: the export_analysis tool and the Export button both
offer the script and the report as downloads; downloaded, the script parses and the report holds
the metrics. An export before any step says there is nothing to export."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import download, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
FILES = [f"demo/sub-0{s}_ses-0{k}_task-mi_eeg.edf" for s in (1, 2) for k in (1, 2)]
EXPORT_BUTTON = "Export analysis"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("eeg") / "data"
    write_demo_set(root / "demo", subjects=2, sessions=2, trials=24, seed=0)
    return root


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "BRAINCHAT_DATA_DIR": str(data_dir),
                        "AGENT_MAX_EXECUTION_TIME": "300"})  # training on a busy CPU  # fmt: skip


def pipeline(server) -> None:
    """Load, filter, epoch, split; train CSP+LDA and EEGNet; evaluate and export; then answer."""
    server.queue(
        "fc-m",
        ToolCalls(
            [
                Call("load_data", {"files": FILES}),
                Call("bandpass_filter", {"l_freq": 8, "h_freq": 30}),
                Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
                Call("split_dataset", {"by": "trial", "seed": 4}),
            ]
        ),
        ToolCalls(
            [
                Call("train_model", {"model": "csp_lda"}),
                Call("train_model", {"model": "eegnet", "epochs": 2, "seed": 1}),
            ]
        ),
        ToolCalls([Call("evaluate_model", {"model": "csp_lda"}), Call("export_analysis", {})]),
        Text("Trained, evaluated and exported."),
        Text("Here are the results; the script and the report are below."),
    )


def check_files(page, message, data_dir: Path) -> tuple[str, str]:
    """The message's two download links: the script parses, the report holds the metrics."""
    script_link = message.locator("a[download$='.py']")
    report_link = message.locator("a[download$='.html']")
    assert script_link.count() == 1 and report_link.count() == 1, message.inner_html()
    name = script_link.get_attribute("download")
    script, report = download(page, script_link), download(page, report_link)
    assert (data_dir / "exports" / name).read_text(encoding="utf-8") == script  # the saved copy
    tree = ast.parse(script)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {"mne", "torch"} <= imported and not [m for m in imported if "brainchat" in m]
    assert "'model': 'eegnet', 'epochs': 2" in script and "seed=4" in script
    assert '<table class="metrics">' in report and "csp_lda" in report and "eegnet" in report
    assert "fc-m" in report and "data:image/png;base64," in report
    return name or "", report


def test_export_tool_and_button_offer_the_script_and_report_for_download(
    model_server, app, browser, data_dir
):
    page = open_chat(browser, app)
    pick_mode(page, "Agent")

    # an empty study: the tool says there is nothing to export, and no button is offered
    model_server.queue(
        "fc-m",
        ToolCalls([Call("export_analysis", {})]),
        Text("Nothing to export yet."),
        Text("There is nothing to export yet: load some recordings first."),
    )
    send(page, "Export my analysis")
    page.wait_for_selector("text=There is nothing to export yet", timeout=60_000)
    wait_idle(page, timeout=60_000)
    step = page.locator("button[id^='step-export_analysis']").first
    step.click()
    page.wait_for_selector("text=/nothing to export: the study has no steps yet/")
    assert page.get_by_role("button", name=EXPORT_BUTTON).count() == 0
    assert not (data_dir / "exports").exists() or not list((data_dir / "exports").iterdir())

    # a run that trains and calls export_analysis: the files come under the answer
    pipeline(model_server)
    send(page, "Train CSP+LDA and EEGNet on the demo set and export the analysis")
    page.wait_for_selector("text=Here are the results", timeout=240_000)
    wait_idle(page, timeout=60_000)
    answer = page.locator(".step").filter(has_text="Here are the results").last
    tool_script, _ = check_files(page, answer, data_dir)
    button = page.get_by_role("button", name=EXPORT_BUTTON)
    assert button.count() == 1  # under the answer that changed the study

    # the button exports the study as it is now, into new files
    button.click()
    page.wait_for_selector("text=Analysis exported", timeout=120_000)
    exported = page.locator(".step").filter(has_text="Analysis exported").last
    exported.locator("a[download$='.html']").wait_for(timeout=30_000)
    button_script, report = check_files(page, exported, data_dir)
    text = exported.inner_text()  # the folder as the tool names it, never the server's own path
    assert "saved in the data folder's exports/" in text and str(data_dir) not in text, text
    assert button_script != tool_script  # a second export never overwrites the first
    assert re.search(r"analysis-\d{8}-\d{6}(-\d+)?\.py", button_script), button_script
    saved = sorted(p.name for p in (data_dir / "exports").iterdir())
    assert len(saved) == 4, saved
    assert "api_key" not in report  # the settings table names models, never keys
    page.close()
