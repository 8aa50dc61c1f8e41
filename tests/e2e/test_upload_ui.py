"""Uploading recordings in a real browser: Chainlit's file input, the check step, the data folder,
and the agent using what arrived (its request names the uploaded path; load_data on it succeeds)."""

from __future__ import annotations

import shutil
import sqlite3
import zipfile
from pathlib import Path

import mne
import numpy as np
import pytest
from scipy.io import loadmat, savemat

from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import (
    expand_all_steps,
    open_chat,
    pick_mode,
    poll,
    screenshot,
    send,
    spec,
    step_titles,
    wait_idle,
)

pytestmark = pytest.mark.browser
FILE_INPUT = "#upload-button-input"  # Chainlit's hidden input behind the attach button


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("upload") / "data"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Recordings of 30 s (22 ch, 250 Hz) as EDF and BrainVision, a damaged EDF, a zip, a big file."""
    root = tmp_path_factory.mktemp("files")
    raw = make_recording(1, 1, trials=6).crop(tmax=30, include_tmax=False)
    write_raw(raw, root / "sub-01.edf")
    write_raw(raw, root / "rec.vhdr")
    (root / "alone").mkdir()
    write_raw(raw, root / "alone" / "lonely.vhdr")
    (root / "alone" / "lonely.eeg").unlink()
    (root / "junk.edf").write_bytes(b"0       " + b"this is not an EDF header " * 40)
    other = make_recording(2, 1, trials=6).crop(tmax=20, include_tmax=False)
    write_raw(other, root / "sub-02.edf")
    with zipfile.ZipFile(root / "study.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(root / "sub-02.edf", "sub-02.edf")
        for ext in ("vhdr", "vmrk", "eeg"):
            zf.write(root / f"rec.{ext}", f"bv/rec.{ext}")
        zf.writestr("notes.txt", "not EEG")
    (root / "big.edf").write_bytes((root / "sub-01.edf").read_bytes() * 6)  # ~2 MB
    third = make_recording(3, 1, trials=6).crop(tmax=20, include_tmax=False)
    mne.export.export_raw(root / "sub-03.bdf", third, fmt="bdf", verbose="error")
    write_raw(third, root / "embedded.set")
    mat = loadmat(root / "embedded.set", appendmat=False)
    np.asarray(mat["data"], dtype=np.float32).T.tofile(root / "sub-04.fdt")
    mat = {k: v for k, v in mat.items() if not k.startswith("__")} | {"data": "sub-04.fdt"}
    savemat(root / "sub-04.set", mat, appendmat=False)  # EEGLAB's default: data in a .fdt
    return root


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "BRAINCHAT_DATA_DIR": str(data_dir),
                        "BRAINCHAT_UPLOAD_MAX_MB": "1"})  # fmt: skip


def attach(page, *paths: Path) -> None:
    """Choose files as the attach button's picker would, and wait for their upload to finish."""
    page.set_input_files(FILE_INPUT, [str(p) for p in paths])
    for p in paths:
        page.wait_for_selector(f"text={p.name}")
    page.wait_for_function("() => !document.querySelector('#chat-submit')?.disabled")


def uploads(data_dir: Path) -> list[str]:
    """Every file and folder under uploads/ (a staging folder left behind would show here), less
    the uploads index (.index.json: where each upload came from, #40)."""
    root = data_dir / "uploads"
    found = root.rglob("*") if root.exists() else []
    return sorted(p.relative_to(root).as_posix() for p in found if p.name != ".index.json")


def test_a_good_edf_is_checked_shown_stored_and_analysed_by_the_agent(
    model_server, app, browser, data_dir, files
) -> None:
    model_server.queue("fc-m", ToolCalls([Call("load_data", {"files": ["uploads/sub-01.edf"]})]),
                       Text("Loaded the uploaded file."), Text("It has 22 channels at 250 Hz."))  # fmt: skip
    page = open_chat(browser, app)
    pick_mode(page, "Agent")
    attach(page, files / "sub-01.edf")
    send(page, "analyse the file I just uploaded")
    page.wait_for_selector("text=It has 22 channels at 250 Hz.", timeout=60_000)
    wait_idle(page)
    body = page.inner_text("body")
    assert "📥 Uploaded uploads/sub-01.edf (22 ch, 250 Hz, 30 s)" in body
    assert any(t.startswith("Upload · 1 accepted · ") for t in step_titles(page)), step_titles(page)
    expand_all_steps(page)
    body = page.inner_text("body")
    assert "uploads/sub-01.edf: EDF, 22 channels, 30.0 s at 250 Hz" in body
    assert "Channels: Fz, FC3, FC1, FCz" in body
    screenshot(page, "upload.png", full_page=True)
    assert (data_dir / "uploads" / "sub-01.edf").read_bytes() == (files / "sub-01.edf").read_bytes()
    system = model_server.requests_for("fc-m")[0].messages[0]["content"]
    assert (
        "Uploaded this conversation (paths relative to the data folder): uploads/sub-01.edf (22 ch, 250 Hz, 30 s)"
        in system
    )
    assert any(t.startswith("load_data · done") for t in step_titles(page)), step_titles(page)
    # the thread is titled by the question, not by the mode switch's answer ("agent") that
    # came first, nor by the text-less upload
    threads = {"pagination": {"first": 5}, "filter": {}}
    names = page.request.post(f"{app}/project/threads", data=threads).json()["data"]
    assert [t["name"] for t in names] == ["analyse the file I just uploaded"], names
    page.close()


def test_a_damaged_file_is_refused_with_its_reason_and_nothing_is_left(
    app, browser, data_dir, files
) -> None:
    before = uploads(data_dir)
    page = open_chat(browser, app)
    attach(page, files / "junk.edf")
    page.click("#chat-submit")  # attachments only, no text: no model turn
    page.wait_for_selector("text=/Refused junk.edf/")
    wait_idle(page)
    assert "Refused junk.edf: MNE cannot read it as EDF" in page.inner_text("body")
    assert uploads(data_dir) == before and "junk.edf" not in before
    page.close()


def test_a_brainvision_set_of_three_files_is_one_recording(app, browser, data_dir, files) -> None:
    page = open_chat(browser, app)
    attach(page, *(files / f"rec.{e}" for e in ("vhdr", "vmrk", "eeg")))
    page.click("#chat-submit")
    page.wait_for_selector("text=/Uploaded uploads.rec.vhdr/")
    wait_idle(page)
    body = page.inner_text("body")
    assert body.count("📥 Uploaded") == 1 and "uploads/rec.vhdr (22 ch, 250 Hz, 30 s)" in body
    assert {"rec.vhdr", "rec.vmrk", "rec.eeg"} <= set(uploads(data_dir))
    page.close()


def test_a_vhdr_without_its_eeg_names_the_missing_file(app, browser, data_dir, files) -> None:
    page = open_chat(browser, app)
    attach(page, files / "alone" / "lonely.vhdr", files / "alone" / "lonely.vmrk")
    page.click("#chat-submit")
    page.wait_for_selector("text=/Refused lonely.vhdr/")
    wait_idle(page)
    assert "needs 'lonely.eeg' (its DataFile), which was not uploaded with it" in page.inner_text(
        "body"
    )
    assert not [n for n in uploads(data_dir) if n.startswith("lonely")]
    page.close()


def test_a_zip_of_two_recordings_lands_in_its_folder(app, browser, data_dir, files) -> None:
    page = open_chat(browser, app)
    attach(page, files / "study.zip")
    page.click("#chat-submit")
    page.wait_for_selector("text=/Uploaded uploads.study.sub-02.edf/")
    wait_idle(page)
    body = page.inner_text("body")
    assert "📥 Uploaded uploads/study/bv/rec.vhdr (22 ch, 250 Hz, 30 s)" in body
    assert "📥 Uploaded uploads/study/sub-02.edf (22 ch, 250 Hz, 20 s)" in body
    assert "Ignored 1 file(s) that are not EEG recordings." in body
    assert {"study/sub-02.edf", "study/bv/rec.vhdr", "study/bv/rec.eeg"} <= set(uploads(data_dir))
    assert "study/notes.txt" not in uploads(data_dir)
    page.close()


def test_a_file_over_the_limit_gets_the_limit_and_how_to_raise_it(
    app, browser, data_dir, files
) -> None:
    """Refused while it uploads (HTTP 413 from the upload route): the browser's notice says why."""
    page = open_chat(browser, app)
    page.set_input_files(FILE_INPUT, [str(files / "big.edf")])
    notice = page.wait_for_selector("text=/Failed to upload/")
    assert (
        "is over the upload limit of 1 MB; to accept larger files, set BRAINCHAT_UPLOAD_MAX_MB"
        in notice.inner_text()
    )
    assert "big.edf" not in uploads(data_dir)
    shutil.rmtree(data_dir / "uploads", ignore_errors=True)
    page.close()


def test_with_accounts_an_upload_lands_in_the_users_own_folder_once(
    model_server, app_factory, browser, files, tmp_path
) -> None:
    import os
    import re
    import subprocess
    import sys

    from conftest import ROOT, WAIT_MS

    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "BRAINCHAT_AUTH": "password"}
    subprocess.run([sys.executable, "-m", "brainchat.cli", "users", "add", "ana"],
                   input="correct horse battery\n", text=True, cwd=ROOT, check=True, timeout=60,
                   env={**os.environ, "BRAINCHAT_DATA_DIR": str(tmp_path / "data"), **env})  # fmt: skip
    url = app_factory(env, home=tmp_path)
    page = browser.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(url)
    page.fill("#email", "ana")
    page.fill("#password", "correct horse battery")
    page.get_by_role("button", name=re.compile("continue|sign in|log in", re.I)).click()
    page.wait_for_selector("text=/brainchat is ready/")
    attach(page, files / "sub-01.edf")
    page.click("#chat-submit")
    page.wait_for_selector("text=/Uploaded uploads.sub-01.edf/")
    wait_idle(page)
    assert (tmp_path / "data" / "users" / "ana" / "uploads" / "sub-01.edf").is_file()
    assert not (tmp_path / "data" / "uploads").exists()

    def element_rows() -> list[tuple[str, str | None]]:
        with sqlite3.connect(tmp_path / "state" / "brainchat.db") as db:
            return db.execute("SELECT name, objectKey FROM elements").fetchall()

    # the thread's elements are written in the background: wait for the upload's row
    poll(lambda: ("sub-01.edf", None) in element_rows(), "the upload's element row, without a file")
    stored = [p for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert not [p for p in stored if p.name.endswith(".edf")]  # no second copy
    page.close()


def test_bdf_and_fdt_pass_with_the_mime_types_browsers_send(app, browser, data_dir, files) -> None:
    """Linux browsers send .bdf as application/x-font-bdf and .fdt as application/fdt+xml
    (shared-mime-info); Chainlit's server checks that type against config.toml's accept table."""
    page = open_chat(browser, app)
    sent = [("sub-03.bdf", "application/x-font-bdf"), ("sub-04.set", "application/octet-stream"),
            ("sub-04.fdt", "application/fdt+xml")]  # fmt: skip
    page.set_input_files(
        FILE_INPUT,
        files=[{"name": n, "mimeType": m, "buffer": (files / n).read_bytes()} for n, m in sent],
    )
    for name, _ in sent:
        page.wait_for_selector(f"text={name}")
    page.wait_for_function("() => !document.querySelector('#chat-submit')?.disabled")
    page.click("#chat-submit")
    page.wait_for_selector("text=/Uploaded uploads.sub-04.set/")
    wait_idle(page)
    body = page.inner_text("body")
    assert "uploads/sub-03.bdf (22 ch, 250 Hz, 20 s)" in body, body[-2000:]
    assert "uploads/sub-04.set (22 ch, 250 Hz, 20 s)" in body
    assert {"sub-03.bdf", "sub-04.set", "sub-04.fdt"} <= set(uploads(data_dir))
    page.close()
