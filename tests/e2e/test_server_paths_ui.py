"""Where the server keeps its folders is not the user's business: in a real browser, the welcome,
the demo-set messages, the agent's steps and the exported script and report name files relative
to the data folder, never by the server's absolute path (nor do the requests to the model)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import download, expand_all_steps, open_chat, pick_mode, send, spec, wait_idle

pytestmark = pytest.mark.browser
FILES = [f"demo/sub-0{s}_ses-01_task-mi_eeg.edf" for s in (1, 2)]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("srv") / "data"  # empty: the welcome offers the demo set


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "BRAINCHAT_DATA_DIR": str(data_dir)})  # fmt: skip


def server_paths(data_dir: Path) -> list[str]:
    """The data folder's absolute path as given and as resolved, and the folder it lies in."""
    return sorted({str(data_dir), str(data_dir.resolve()), str(data_dir.parent.resolve())})


def assert_no_server_path(text: str, data_dir: Path, where: str) -> None:
    leaked = [p for p in server_paths(data_dir) if p in text]
    assert not leaked, f"{where} shows the server path {leaked}: {text[-3000:]}"


def test_no_absolute_server_path_in_the_ui_or_the_exported_files(
    model_server, app, browser, data_dir, tmp_path
):
    page = open_chat(browser, app)
    page.wait_for_selector("text=is empty")
    welcome = page.locator(".step").filter(has_text="is empty").last.inner_text()
    assert_no_server_path(welcome, data_dir, "the welcome")
    assert "demo/" in welcome, welcome  # where the set goes, relative to the data folder

    page.get_by_role("button", name="Write the demo EEG set").click()
    page.wait_for_selector("text=/Wrote 4 recordings/", timeout=120_000)
    wrote = page.locator(".step").filter(has_text="Wrote 4 recordings").last.inner_text()
    assert_no_server_path(wrote, data_dir, "the demo-set message")
    assert "demo/" in wrote and "sub-01_ses-01_task-mi_eeg.edf" in wrote, wrote

    model_server.queue(
        "fc-m",
        ToolCalls([Call("list_data_files", {}), Call("load_data", {"files": FILES})]),
        ToolCalls([Call("bandpass_filter", {"l_freq": 8, "h_freq": 30})]),
        Text("Loaded and filtered."),
        Text("Both recordings are loaded and band-passed."),
    )
    pick_mode(page, "Agent")
    send(page, "Load the first session of both demo subjects and band-pass them")
    page.wait_for_selector("text=Both recordings are loaded", timeout=120_000)
    wait_idle(page, timeout=60_000)
    page.get_by_role("button", name="Export analysis").click()
    page.wait_for_selector("text=Analysis exported", timeout=120_000)
    exported = page.locator(".step").filter(has_text="Analysis exported").last
    exported.locator("a[download$='.html']").wait_for(timeout=30_000)
    script = download(page, exported.locator("a[download$='.py']"))
    report = download(page, exported.locator("a[download$='.html']"))
    assert_no_server_path(script, data_dir, "the exported script")
    assert_no_server_path(report, data_dir, "the exported report")
    assert f"{FILES[0]!r}" in script  # recordings named relative to the data folder

    expand_all_steps(page)
    assert_no_server_path(page.inner_text("body"), data_dir, "the page")
    assert_no_server_path(page.content(), data_dir, "the page's HTML")
    sent = json.dumps([dataclasses.asdict(r) for r in model_server.requests])
    assert_no_server_path(sent, data_dir, "the requests to the model")

    # run in place (in the data folder's exports/), the script finds the recordings by itself;
    # downloaded elsewhere and run without DATA_DIR, it says which folder to give
    name = exported.locator("a[download$='.py']").get_attribute("download") or ""
    in_place = subprocess.run([sys.executable, "-I", str(data_dir / "exports" / name)],
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert in_place.returncode == 0, in_place.stderr[-3000:]
    assert json.loads(in_place.stdout.splitlines()[-1])["recordings"], in_place.stdout[-2000:]
    elsewhere = tmp_path / "Downloads" / name
    elsewhere.parent.mkdir()
    elsewhere.write_text(script, encoding="utf-8")
    lost = subprocess.run([sys.executable, "-I", str(elsewhere)], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert lost.returncode != 0 and FILES[0] in lost.stderr and "DATA_DIR" in lost.stderr, (
        lost.stderr[-3000:]
    )
    assert "Traceback" not in lost.stderr, lost.stderr[-3000:]
    page.close()
