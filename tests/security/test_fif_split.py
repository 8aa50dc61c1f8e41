"""A split FIF whose next-part pointer names a server path is refused, telling nothing about it
(issue #21, finding 9).

MNE saves a long recording in parts, each naming the next; its reader opens whatever the name
says. The attack: a FIF written by MNE whose pointer was made to name another user's recording,
a system file, a path that does not exist or one climbing out with '..', uploaded (the upload
pipeline, and the real app in a browser) or placed in the data folder and loaded. Before the fix the answers
differed by what was there and showed the absolute staging path.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import mne
import numpy as np
import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.uploads.upload_check import check_recording
from brainchat.eeg.uploads.uploads import Incoming, UploadLimits, receive
from e2e import conftest as e2e
from e2e.conftest import open_chat, spec, wait_idle

app_factory = e2e.app_factory  # the real app under `chainlit run`, and Debian chromium
model_server = e2e.model_server
browser = e2e.browser

pytestmark = pytest.mark.attack

SECONDS = 700  # 3 channels at 250 Hz: over 2 MB, so MNE saves it in parts of at most 2 MB


def recording(seconds: float = SECONDS) -> mne.io.RawArray:
    info = mne.create_info(["C3", "Cz", "C4"], 250.0, "eeg")
    data = np.random.default_rng(0).normal(0, 1e-5, (3, int(250 * seconds)))
    return mne.io.RawArray(data, info, verbose="error")


def save_split(path: Path, pointer: str | None = None) -> list[Path]:
    """Save a recording in 2 MB parts with MNE; `pointer` replaces the name of the second part
    that MNE writes into the first. Returns the parts written, the first first."""
    import mne.io.base as base
    from mne._fiff.constants import FIFF

    write_string = base.write_string

    def hostile(fid, kind, data):  # noqa: ANN001, ANN202 - MNE's writer signature
        if pointer is not None and kind == FIFF.FIFF_REF_FILE_NAME and str(data).endswith("-1.fif"):
            data = pointer
        return write_string(fid, kind, data)

    base.write_string = hostile
    try:
        recording().save(path, split_size="2MB", overwrite=True, verbose="error")
    finally:
        base.write_string = write_string
    return [path, *sorted(path.parent.glob(path.stem + "-*.fif"))]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder with another user's recording in it."""
    folder = tmp_path / "data"
    (folder / "users" / "bob").mkdir(parents=True)
    recording(10).save(folder / "users" / "bob" / "secret_raw.fif", verbose="error")
    return folder


def pointers(data: Path, up: str) -> dict[str, str]:
    """What the hostile first part names as its next part; `up` climbs to the data folder."""
    return {
        "another user's recording": str(data / "users" / "bob" / "secret_raw.fif"),
        "climbing to it": f"{up}users/bob/secret_raw.fif",
        "a system file": "/etc/passwd",
        "nothing there": "/nonexistent/brainchat/x_raw.fif",
        "climbing to nothing": f"{up}users/bob/none_raw.fif",
    }


def hostile_first_part(folder: Path, pointer: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    first, *rest = save_split(folder / "rec_raw.fif", pointer)
    for part in rest:
        part.unlink()  # the attacker sends the first part only
    return first


def test_an_uploaded_split_fif_pointing_anywhere_outside_gets_one_message(
    tmp_path: Path, data: Path
) -> None:
    reasons = {}
    for kind, pointer in pointers(data, "../../../").items():  # from uploads/.upload-*/rec-0/
        first = hostile_first_part(tmp_path / "src" / kind.replace(" ", "_"), pointer)
        report = receive([Incoming("rec_raw.fif", first)], data, UploadLimits())
        assert not report.accepted, kind
        (refused,) = report.refused
        reasons[kind] = refused.reason
    assert len(set(reasons.values())) == 1, reasons  # nothing tells what is at the path
    reason = next(iter(reasons.values()))
    assert "split FIF whose next part is named outside its folder" in reason
    assert str(tmp_path) not in reason and "/" not in reason and ".upload-" not in reason
    assert "secret" not in reason and "passwd" not in reason and "exist" not in reason
    assert sorted(p.name for p in (data / "uploads").iterdir()) == []


async def test_a_split_fif_placed_in_the_data_folder_pointing_outside_does_not_load(
    tmp_path: Path, data: Path
) -> None:
    from brainchat.eeg.study.study import Study
    from brainchat.eeg.tools.tools import build_eeg_tools

    ana = data / "users" / "ana"
    messages = {}
    for kind, pointer in pointers(data, "../../").items():  # from users/ana/
        hostile_first_part(ana, pointer)
        study = Study(ana)
        load = next(t for t in build_eeg_tools(study) if t.name == "load_data")
        with pytest.raises(ToolException) as refused:
            await load.ainvoke({"files": ["rec_raw.fif"]})
        messages[kind] = str(refused.value)
        assert study.state.stage == "empty", kind
    assert len(set(messages.values())) == 1, messages
    message = next(iter(messages.values()))
    assert "'rec_raw.fif' is a split FIF whose next part is named outside its folder" in message
    assert "/" not in message and "secret" not in message and "exist" not in message


def test_a_real_split_recording_uploads_whole_and_a_missing_part_is_named(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    parts = save_split(src / "rec_raw.fif")
    assert [p.name for p in parts[:2]] == ["rec_raw.fif", "rec_raw-1.fif"]
    assert check_recording(src / "rec_raw.fif").seconds == pytest.approx(SECONDS, abs=0.01)

    (tmp_path / "alone").mkdir()
    shutil.copyfile(src / "rec_raw.fif", tmp_path / "alone" / "rec_raw.fif")
    data = tmp_path / "data"
    report = receive([Incoming("rec_raw.fif", tmp_path / "alone" / "rec_raw.fif")], data,
                     UploadLimits())  # fmt: skip
    (refused,) = report.refused
    assert refused.reason == (
        "'rec_raw.fif' is a split FIF and its next part 'rec_raw-1.fif' is not beside it; "
        "keep all parts of the recording together"
    )


@pytest.mark.browser
def test_the_app_answers_an_uploaded_hostile_split_fif_the_same_whatever_is_there(
    model_server, app_factory, browser, tmp_path: Path, data: Path
) -> None:
    app = app_factory({"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"),
                       "BRAINCHAT_DATA_DIR": str(data)})  # fmt: skip
    kinds = {"there": str(data / "users" / "bob" / "secret_raw.fif"),
             "absent": "/nonexistent/brainchat/x_raw.fif"}  # fmt: skip
    firsts = []
    for kind, pointer in kinds.items():
        first = hostile_first_part(tmp_path / kind, pointer)
        firsts.append(first.rename(first.with_name(f"{kind}_raw.fif")))
    page = open_chat(browser, app)
    page.set_input_files("#upload-button-input", [str(p) for p in firsts])
    page.wait_for_function("() => !document.querySelector('#chat-submit')?.disabled")
    page.click("#chat-submit")
    for kind in kinds:
        page.wait_for_selector(f"text=/Refused {kind}_raw.fif/", timeout=60_000)
    wait_idle(page)
    lines = [ln for ln in page.inner_text("body").splitlines() if "Refused" in ln]
    said = {ln.split("Refused ", 1)[1].replace("there_", "X_").replace("absent_", "X_")
            for ln in lines}  # fmt: skip
    assert len(said) == 1, lines
    assert "split FIF whose next part is named outside its folder" in said.pop()
    assert str(data) not in "\n".join(lines) and "exist" not in "\n".join(lines)
    page.close()


def test_a_split_fif_pointing_at_itself_is_refused_not_read_forever(tmp_path: Path) -> None:
    """MNE's reader follows such a pointer without end: the upload's worker thread never came back."""
    first = hostile_first_part(tmp_path / "src", "rec_raw.fif")
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.append(
            receive([Incoming("rec_raw.fif", first)], tmp_path / "data", UploadLimits())
        ),  # fmt: skip
        daemon=True,  # on the unfixed code it never ends
    )
    worker.start()
    worker.join(timeout=120)  # a bound on a hang, far above the second the check takes
    assert done, "the upload check never finished"
    (refused,) = done[0].refused
    assert refused.reason == "'rec_raw.fif' is a split FIF whose parts point back at each other"
