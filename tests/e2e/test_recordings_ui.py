"""One's recordings in a real browser (#40): /files lists them with size and origin and removes one
after asking; a file brainchat cannot read (.docx) reaches brainchat and is named with the formats it
reads, instead of vanishing in the browser; the page loads without MIME-type warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.testing.scripted_server import Text
from conftest import click_until, open_chat, poll, screenshot, send, spec, wait_idle

pytestmark = pytest.mark.browser
FILE_INPUT = "#upload-button-input"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("files")
    raw = make_recording(1, 1, trials=6).crop(tmax=20, include_tmax=False)
    raw.pick(raw.ch_names[:8])
    write_raw(raw, root / "my_8ch.edf")
    # not .txt: a text file is a document now, added to the user's collection (#41)
    (root / "notes.docx").write_text("not a recording")
    return root


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recordings") / "data"


@pytest.fixture(scope="module")
def app(model_server, app_factory, data_dir):
    return app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                        "BRAINCHAT_DATA_DIR": str(data_dir)})  # fmt: skip


def attach(page, path: Path) -> None:
    page.set_input_files(FILE_INPUT, [str(path)])
    page.wait_for_selector(f"text={path.name}")
    page.wait_for_function("() => !document.querySelector('#chat-submit')?.disabled")
    page.click("#chat-submit")


def test_an_unsupported_file_is_named_with_the_formats_and_the_page_logs_no_mime_warning(
    app, browser, files, data_dir
) -> None:
    """The accept map of config.toml made the page drop a .txt without a word and log five
    "Skipped "application/*"" warnings a load; now any file reaches brainchat, and the only
    such warnings left are the two Chainlit's page logs before its settings arrive (its own
    fallback map, out of the app's reach), none once they have."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    said: list[tuple[bool, str]] = []
    settings: list[str] = []
    page.on("response", lambda r: settings.append(r.url) if "/project/settings" in r.url else None)
    page.on("console", lambda m: said.append((bool(settings), m.text)))
    page.goto(app)
    page.wait_for_selector("text=/brainchat is (ready|not ready)/")
    attach(page, files / "notes.docx")
    page.wait_for_selector("text=/Refused `?notes.docx`?/", timeout=60_000)
    body = page.inner_text("body")
    assert "not an EEG recording; accepted: EDF, BDF, GDF, FIF, EEGLAB" in body
    mime = [(late, m) for late, m in said if "MIME" in m or "Skipped" in m]
    assert mime == [], mime  # none, before or after the project's settings arrive
    assert not (data_dir / "uploads" / "notes.docx").exists()
    page.close()


def test_files_lists_ones_recordings_and_removes_one_after_asking(
    model_server, app, browser, files, data_dir
) -> None:
    model_server.queue("fc-m", Text("Switch to Agent mode to open it."))
    page = open_chat(browser, app)
    attach(page, files / "my_8ch.edf")
    page.wait_for_selector("text=/Uploaded `?uploads\\/my_8ch.edf/", timeout=60_000)
    wait_idle(page)
    send(page, "what is in my 8-channel recording?")  # the conversation's title
    page.wait_for_selector("text=Switch to Agent mode to open it.", timeout=60_000)
    wait_idle(page)
    send(page, "/files")
    page.wait_for_selector("text=Your recordings", timeout=30_000)
    table = page.locator("table").last
    assert "uploads/my_8ch.edf" in table.inner_text()
    assert "uploaded in this conversation" in table.inner_text()
    screenshot(page, "recordings.png")
    other = open_chat(browser, app)  # a New chat: the same recording, from another conversation
    send(other, "/files")
    # named by the title of the conversation it came from
    other.wait_for_selector("text=/uploaded in “.*8-channel recording.*”/", timeout=30_000)
    other.close()
    asked = "text=/Remove `?uploads\\/my_8ch.edf`? .* from your data folder/"
    click_until(page, page.get_by_role("button", name="Remove my_8ch.edf"), asked)
    # asked first: Keep keeps it; Chainlit keeps the choice, not the list
    click_until(page, page.get_by_role("button", name="Keep it"), "text=Selected: Keep it")
    page.wait_for_selector("text=Your recordings", timeout=30_000)  # the list shown again
    assert (data_dir / "uploads" / "my_8ch.edf").is_file()
    click_until(page, page.get_by_role("button", name="Remove my_8ch.edf"), asked)
    removed = "text=/Removed `?uploads\\/my_8ch.edf/"
    click_until(page, page.get_by_role("button", name="Remove", exact=True), removed, 30_000)
    poll(lambda: not (data_dir / "uploads" / "my_8ch.edf").exists(), "the file removed")
    page.wait_for_selector("text=/holds no recordings/", timeout=30_000)
    page.close()


def login(browser, url: str, name: str, password: str):
    """A page of its own (its own cookies) signed in as `name`."""
    import re

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url)
    page.fill("#email", name)
    page.fill("#password", password)
    page.get_by_role("button", name=re.compile("continue|sign in|log in", re.I)).click()
    page.wait_for_selector("#chat-input")
    page.wait_for_selector("text=/brainchat is (ready|not ready)/")
    return page


@pytest.mark.attack
def test_with_accounts_one_user_never_sees_nor_removes_anothers_recordings(
    model_server, app_factory, browser, files, tmp_path
) -> None:
    from test_persist_ui import add_user

    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "BRAINCHAT_AUTH": "password"}
    add_user(tmp_path, env, "ana", "correct horse battery")
    add_user(tmp_path, env, "bob", "battery staple horse")
    url = app_factory(env, home=tmp_path)
    ana = login(browser, url, "ana", "correct horse battery")
    attach(ana, files / "my_8ch.edf")
    ana.wait_for_selector("text=/Uploaded `?uploads\\/my_8ch.edf/", timeout=60_000)
    kept = tmp_path / "data" / "users" / "ana" / "uploads" / "my_8ch.edf"
    assert kept.is_file()
    bob = login(browser, url, "bob", "battery staple horse")
    send(bob, "/files")
    bob.wait_for_selector("text=/holds no recordings/", timeout=30_000)
    assert "my_8ch" not in bob.inner_text("body")
    assert bob.get_by_role("button", name="Remove my_8ch.edf").count() == 0
    send(ana, "/files")
    ana.wait_for_selector("text=Your recordings", timeout=30_000)
    assert "uploads/my_8ch.edf" in ana.locator("table").last.inner_text()
    assert kept.is_file()
    ana.context.close()
    bob.context.close()
