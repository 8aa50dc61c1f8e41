"""Uploads on real files written by MNE: checked, placed under uploads/, never overwriting, and
the agent told of them (a scripted load_data on the uploaded path succeeds over real HTTP)."""

from __future__ import annotations

import asyncio
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.eeg.uploads.upload_names import safe_name
from brainchat.eeg.uploads.uploads import Incoming, UploadLimits, receive, receive_listed
from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls

from gdf_writer import write_raw_gdf
from support import collect, of, spec

LIMITS = UploadLimits()


@pytest.fixture(scope="module")
def src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 30 s, 22-channel recording as EDF, GDF (BCI IV codes, 0.5 s records), FIF, BrainVision,
    EEGLAB (embedded, and .set + .fdt)."""
    root = tmp_path_factory.mktemp("src")
    raw = make_recording(1, 1, trials=6)
    raw.crop(tmax=30, include_tmax=False)
    for name in ("sub-01.edf", "sub-01.fif", "rec.vhdr", "embedded.set"):
        write_raw(raw, root / name)
    write_raw_gdf(raw, root / "A01T.gdf", record_samples=125)  # a record length that is not 1 s
    other = make_recording(2, 1, trials=6).crop(tmax=20, include_tmax=False)
    (root / "other").mkdir()
    write_raw(other, root / "other" / "sub-01.edf")
    _set_with_fdt(root / "embedded.set", root / "split.set")
    return root


def _set_with_fdt(embedded: Path, out: Path) -> None:
    """An EEGLAB .set whose data lives in a separate .fdt (as EEGLAB itself writes by default)."""
    from scipy.io import loadmat, savemat

    mat = loadmat(embedded, appendmat=False)
    data = np.asarray(mat["data"], dtype=np.float32)
    data.T.tofile(out.with_suffix(".fdt"))  # EEGLAB: channels x samples, column-major float32
    mat["data"] = out.with_suffix(".fdt").name
    mat = {k: v for k, v in mat.items() if not k.startswith("__")}
    savemat(out, mat, appendmat=False)


def up(data: Path, *files: tuple[str, Path], limits: UploadLimits = LIMITS):
    return receive([Incoming(name, path) for name, path in files], data, limits)


def stored(data: Path) -> list[str]:
    """The files kept, less the uploads index (uploads/.index.json: where each came from)."""
    return sorted(
        p.relative_to(data).as_posix()
        for p in data.rglob("*")
        if p.is_file() and p.name != ".index.json"
    )


def test_an_edf_is_checked_and_stored_under_uploads(src: Path, tmp_path: Path) -> None:
    report = up(tmp_path, ("sub-01.edf", src / "sub-01.edf"))
    (a,) = report.accepted
    assert a.name == "uploads/sub-01.edf" and not report.refused
    assert (a.info.fmt, len(a.info.channels), a.info.sfreq) == ("edf", 22, 250.0)
    assert a.info.seconds == pytest.approx(30, abs=1)
    assert a.info.channels[:2] == ("Fz", "FC3") and sum(a.info.events.values()) >= 2
    assert a.line() == "uploads/sub-01.edf (22 ch, 250 Hz, 30 s)"
    assert stored(tmp_path) == ["uploads/sub-01.edf"]  # no staging folder left
    assert (tmp_path / a.name).read_bytes() == (src / "sub-01.edf").read_bytes()


def test_a_gdf_is_checked_and_stored_under_uploads(src: Path, tmp_path: Path) -> None:
    """BCI Competition IV's format: channels, rate, length and its event codes are read."""
    report = up(tmp_path, ("A01T.gdf", src / "A01T.gdf"))
    (a,) = report.accepted
    assert a.name == "uploads/A01T.gdf" and not report.refused
    assert (a.info.fmt, len(a.info.channels), a.info.sfreq) == ("gdf", 22, 250.0)
    assert a.info.seconds == 30 and a.info.channels[:2] == ("Fz", "FC3")
    assert a.info.events == {"769": 2, "770": 2}  # left_hand, right_hand in the first 30 s
    assert a.line() == "uploads/A01T.gdf (22 ch, 250 Hz, 30 s)"
    assert stored(tmp_path) == ["uploads/A01T.gdf"]
    assert (tmp_path / a.name).read_bytes() == (src / "A01T.gdf").read_bytes()


def test_fif_eeglab_and_brainvision_sets_are_accepted_as_one_recording_each(
    src: Path, tmp_path: Path
) -> None:
    files = [(n, src / n) for n in ("sub-01.fif", "rec.vhdr", "rec.vmrk", "rec.eeg", "split.set",
                                    "split.fdt", "embedded.set")]  # fmt: skip
    report = up(tmp_path, *files)
    assert not report.refused, report.refused
    by_name = {a.name: a for a in report.accepted}
    assert set(by_name) == {"uploads/sub-01.fif", "uploads/rec.vhdr", "uploads/split.set",
                            "uploads/embedded.set"}  # fmt: skip
    assert by_name["uploads/rec.vhdr"].files == ("uploads/rec.vhdr", "uploads/rec.eeg",
                                                  "uploads/rec.vmrk")  # fmt: skip
    assert by_name["uploads/split.set"].files == ("uploads/split.set", "uploads/split.fdt")
    assert all(len(a.info.channels) == 22 for a in report.accepted)


def test_a_brainvision_set_renamed_to_a_safe_name_still_finds_its_files(
    src: Path, tmp_path: Path
) -> None:
    import mne

    staged = tmp_path / "in"
    staged.mkdir()
    names = {"vhdr": "my rec.vhdr", "vmrk": "my rec markers.VMRK", "eeg": "my rec.eeg"}
    for ext, name in names.items():  # spaces and other stems, as a lab PC might write them
        shutil.copy(src / f"rec.{ext}", staged / name)
    for name in (names["vhdr"], names["vmrk"]):
        path = staged / name
        text = path.read_text().replace("=rec.eeg", "=my rec.eeg")
        path.write_text(text.replace("=rec.vmrk", "=my rec markers.VMRK"))
    data = tmp_path / "data"
    report = up(data, *[(p.name, p) for p in staged.iterdir()])
    (a,) = report.accepted
    assert a.name == "uploads/my_rec.vhdr" and "safe name" in a.note
    assert a.files == ("uploads/my_rec.vhdr", "uploads/my_rec.eeg", "uploads/my_rec.vmrk")
    raw = mne.io.read_raw_brainvision(data / a.name, preload=True, verbose="error")
    assert raw.n_times == 30 * 250  # the header points at the renamed .eeg and .vmrk


def test_same_content_is_reused_and_a_different_file_gets_a_numbered_suffix(
    src: Path, tmp_path: Path
) -> None:
    first = up(tmp_path, ("sub-01.edf", src / "sub-01.edf")).accepted[0]
    again = up(tmp_path, ("sub-01.edf", src / "sub-01.edf")).accepted[0]
    assert again.reused and again.name == first.name and "kept that one" in again.note
    other = up(tmp_path, ("sub-01.edf", src / "other" / "sub-01.edf")).accepted[0]
    assert other.name == "uploads/sub-01-2.edf" and not other.reused
    assert "already holds a different file: saved as uploads/sub-01-2.edf" in other.note
    assert (tmp_path / first.name).read_bytes() == (src / "sub-01.edf").read_bytes()
    assert stored(tmp_path) == ["uploads/sub-01-2.edf", "uploads/sub-01.edf"]


def test_without_hard_links_the_files_are_copied_and_never_replace_one(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """exFAT, some FUSE and network mounts refuse os.link (EPERM): the upload copies instead."""
    import os

    def no_links(a: object, b: object, *args: object, **kw: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "rec.vhdr").write_bytes(b"placed by hand")
    files = [(n, src / n) for n in ("sub-01.edf", "rec.vhdr", "rec.vmrk", "rec.eeg")]
    report = up(tmp_path, *files)
    assert not report.refused, report.refused
    assert sorted(a.name for a in report.accepted) == ["uploads/rec-2.vhdr", "uploads/sub-01.edf"]
    assert (uploads / "sub-01.edf").read_bytes() == (src / "sub-01.edf").read_bytes()
    assert (uploads / "rec-2.eeg").read_bytes() == (src / "rec.eeg").read_bytes()
    assert (uploads / "rec.vhdr").read_bytes() == b"placed by hand"
    assert stored(tmp_path) == [f"uploads/{n}" for n in ("rec-2.eeg", "rec-2.vhdr", "rec-2.vmrk",
                                                         "rec.vhdr", "sub-01.edf")]  # fmt: skip
    again = up(tmp_path, ("sub-01.edf", src / "sub-01.edf"))
    assert again.accepted[0].reused


def test_a_brainvision_set_with_a_taken_name_moves_as_a_whole(src: Path, tmp_path: Path) -> None:
    import mne

    up(tmp_path, ("rec.edf", src / "other" / "sub-01.edf"))  # 'rec' taken by another recording
    (tmp_path / "uploads" / "rec.eeg").write_bytes(b"someone else's data")
    report = up(tmp_path, *[(f"rec.{e}", src / f"rec.{e}") for e in ("vhdr", "vmrk", "eeg")])
    (a,) = report.accepted
    assert a.files == ("uploads/rec-2.vhdr", "uploads/rec-2.eeg", "uploads/rec-2.vmrk")
    raw = mne.io.read_raw_brainvision(tmp_path / a.name, preload=True, verbose="error")
    assert raw.n_times == 30 * 250
    assert (tmp_path / "uploads" / "rec.eeg").read_bytes() == b"someone else's data"


def test_damaged_truncated_and_unsupported_files_are_refused_and_nothing_is_left(
    src: Path, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.edf"
    junk.write_bytes(b"0       " + b"not an EDF header " * 40)
    cut = tmp_path / "cut.edf"
    cut.write_bytes((src / "sub-01.edf").read_bytes()[:60_000])
    gdf_cut = tmp_path / "cut.gdf"
    whole = (src / "A01T.gdf").read_bytes()
    record = 22 * 125 * 2  # 22 channels x 125 int16 samples
    gdf_cut.write_bytes(whole[: 256 * 23 + 20 * record + 99])  # 10 s and a bit: no event table
    fif_cut = tmp_path / "cut.fif"
    whole = (src / "sub-01.fif").read_bytes()
    fif_cut.write_bytes(whole[: len(whole) // 2])
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    data = tmp_path / "data"
    report = up(data, ("junk.edf", junk), ("cut.edf", cut), ("cut.fif", fif_cut),
                ("cut.gdf", gdf_cut), ("notes.txt", notes))  # fmt: skip
    reasons = {r.name: r.reason for r in report.refused}
    assert not report.accepted
    assert reasons["junk.edf"].startswith("MNE cannot read it as EDF")
    # said in the user's terms (#40): what is wrong, why, what to do
    cut_off = "the file is shorter than its header says: it was cut off during copying or upload"
    assert reasons["cut.edf"].startswith(cut_off) and "its header says 30 s" in reasons["cut.edf"]
    assert "truncated" in reasons["cut.fif"]
    assert (
        cut_off in reasons["cut.gdf"]
        and "header says 30 s, the file holds 10 s" in reasons["cut.gdf"]
    )
    assert reasons["notes.txt"].startswith("not an EEG recording; accepted: EDF, BDF")
    assert stored(data) == [] and [p.name for p in (data / "uploads").iterdir()] == []


def test_a_huge_brainvision_header_is_refused_unread(src: Path, tmp_path: Path) -> None:
    """MNE reads a whole header, so a name after any bound would be missed: one over HEADER_MAX
    is refused without reading it, and the refs of a real one are read in full."""
    import tracemalloc

    from brainchat.eeg.uploads.upload_check import Refusal, brainvision_refs

    assert brainvision_refs(src / "rec.vhdr") == [
        ("DataFile", "rec.eeg"),
        ("MarkerFile", "rec.vmrk"),
    ]
    big = tmp_path / "in" / "big.vhdr"
    big.parent.mkdir()
    pad = b"; padding\n" * (3 * 2**20 // 10)  # 3 MB of comment lines after a real header
    big.write_bytes((src / "rec.vhdr").read_bytes() + pad)
    tracemalloc.start()
    try:
        with pytest.raises(Refusal, match="its BrainVision header is 3.0 MB"):
            brainvision_refs(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**18  # not the whole 3 MB, nor the 1 MB bound
    files = [("big.vhdr", big), ("big.vmrk", src / "rec.vmrk"), ("big.eeg", src / "rec.eeg")]
    report = up(tmp_path / "data", *files)
    assert not report.accepted
    (refused,) = report.refused  # its .eeg and .vmrk are not refused again as lone files
    assert refused.name == "big.vhdr"
    assert "its BrainVision header is 3.0 MB; a real .vhdr is a few KB" in refused.reason
    assert stored(tmp_path / "data") == []


def test_a_missing_companion_file_is_named(src: Path, tmp_path: Path) -> None:
    report = up(tmp_path, ("rec.vhdr", src / "rec.vhdr"), ("rec.vmrk", src / "rec.vmrk"),
                ("split.set", src / "split.set"), ("lonely.eeg", src / "rec.eeg"))  # fmt: skip
    reasons = {r.name: r.reason for r in report.refused}
    assert "needs 'rec.eeg' (its DataFile), which was not uploaded with it" in reasons["rec.vhdr"]
    assert "keeps its data in 'split.fdt', which was not uploaded with it" in reasons["split.set"]
    assert "without its .vhdr header" in reasons["lonely.eeg"]
    assert not report.accepted and stored(tmp_path) == []


def test_a_zip_of_two_recordings_lands_in_its_own_folder(src: Path, tmp_path: Path) -> None:
    archive = tmp_path / "study.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(src / "sub-01.edf", "sub-01/sub-01.edf")
        for ext in ("vhdr", "vmrk", "eeg"):
            zf.write(src / f"rec.{ext}", f"bv/rec.{ext}")
        zf.writestr("README.txt", "notes")
        zf.writestr("__MACOSX/sub-01/._sub-01.edf", "resource fork")
    data = tmp_path / "data"
    report = up(data, ("My Study.zip", archive))
    assert sorted(a.name for a in report.accepted) == ["uploads/My_Study/bv/rec.vhdr",
                                                       "uploads/My_Study/sub-01/sub-01.edf"]  # fmt: skip
    assert report.ignored == [
        "My Study.zip: README.txt",
        "My Study.zip: __MACOSX/sub-01/._sub-01.edf",
    ]
    assert not report.refused and "README.txt" not in " ".join(stored(data))


def test_over_the_size_limit_the_message_names_the_limit_and_how_to_raise_it(
    src: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.edf"
    big.write_bytes(b"\0" * (2 * 2**20 + 1))
    report = up(tmp_path / "data", ("big.edf", big), limits=UploadLimits(max_mb=2))
    (r,) = report.refused
    assert r.reason.startswith("2.0 MB is over the upload limit of 2 MB")
    assert "set BRAINCHAT_UPLOAD_MAX_MB" in r.reason and "restart" in r.reason


def test_safe_names() -> None:
    assert safe_name("C:\\Users\\me\\my rec (1).EDF") == "my_rec_1.edf"
    assert safe_name("../../etc/passwd.edf") == "passwd.edf"
    assert safe_name(".hidden.fif.gz") == "hidden.fif.gz"
    assert safe_name("Müller–EEG.vhdr") == "Muller_EEG.vhdr"
    assert safe_name("...") == "upload" and len(safe_name("a" * 500 + ".edf")) == 120


async def test_the_agent_is_told_of_the_upload_and_loads_it(
    scripted_server, src: Path, tmp_path: Path
) -> None:
    s = scripted_server
    settings = Settings(function_call_model=spec(s, "fc"), answer_model=spec(s, "ans"),
                        data_dir=tmp_path)  # fmt: skip
    session = Session(settings)
    session.set_mode("agent")
    report = up(tmp_path, ("sub-01.edf", src / "sub-01.edf"))
    session.study.uploads.extend(a.line() for a in report.accepted)
    s.queue(
        "fc", ToolCalls([Call("load_data", {"files": ["uploads/sub-01.edf"]})]), Text("Loaded.")
    )
    s.queue("ans", Text("The uploaded recording has 22 channels."))
    events = await collect(session.ask("analyse the file I just uploaded"))
    first = s.requests_for("fc")[0]
    system = first.messages[0]["content"]
    assert "Uploaded this conversation (paths relative to the data folder): " \
           "uploads/sub-01.edf (22 ch, 250 Hz, 30 s)" in system  # fmt: skip
    done = [(e.name, e.status) for e in of(events, "tool_finished")]
    assert done == [("load_data", "success")]
    assert session.study.facts()["files"][0] == "uploads/sub-01.edf"


async def test_a_stop_while_files_are_checked_still_lists_what_was_placed(
    src: Path, tmp_path: Path
) -> None:
    """The check runs in a thread that a Stop cannot interrupt: what it places is still listed
    for the agent once it ends, never a file in the folder the study does not know of."""
    listed: list[str] = []
    files = [Incoming("sub-01.edf", src / "sub-01.edf")]
    task = asyncio.create_task(receive_listed(files, tmp_path, LIMITS, listed))
    await asyncio.sleep(0)  # the thread has started
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with asyncio.timeout(30):
        while not listed:
            await asyncio.sleep(0.02)
    assert listed == ["uploads/sub-01.edf (22 ch, 250 Hz, 30 s)"]
    assert (tmp_path / "uploads" / "sub-01.edf").is_file()
    report = await receive_listed(files, tmp_path, LIMITS, listed)  # and without a Stop
    # the same file again is named once, as the latest (#40: most recent last)
    assert len(report.accepted) == 1 and listed == ["uploads/sub-01.edf (22 ch, 250 Hz, 30 s)"]


async def test_chat_mode_gets_the_note_in_the_user_turn(
    scripted_server, src: Path, tmp_path: Path
) -> None:
    from brainchat.ui.uploads import chat_note

    s = scripted_server
    session = Session(Settings(chat_model=spec(s, "chat"), data_dir=tmp_path))
    report = up(tmp_path, ("sub-01.edf", src / "sub-01.edf"))
    s.queue("chat", Text("Switch to Agent mode to analyse it."))
    await collect(session.ask("what is in it?" + chat_note(report.accepted)))
    user = s.requests_for("chat")[0].messages[-1]["content"]
    assert user.startswith("what is in it?\n\n(Uploaded this conversation: uploads/sub-01.edf")
    assert "Chat mode cannot open files" in user


async def test_the_chat_note_names_at_most_uploads_shown_files(
    scripted_server, src: Path, tmp_path: Path
) -> None:
    """A 25-file upload cannot lengthen the question without bound (the note is added after the
    message-length check): like the agent's context, it names UPLOADS_SHOWN files, "+N more"."""
    from brainchat.eeg.study.study import UPLOADS_SHOWN
    from brainchat.ui.uploads import chat_note

    s = scripted_server
    session = Session(Settings(chat_model=spec(s, "chat"), data_dir=tmp_path))
    report = up(tmp_path, *[(f"sub-{i:02d}.edf", src / "sub-01.edf") for i in range(1, 26)])
    assert len(report.accepted) == 25 and UPLOADS_SHOWN == 10
    s.queue("chat", Text("Switch to Agent mode to analyse them."))
    await collect(session.ask("what is in them?" + chat_note(report.accepted)))
    user = s.requests_for("chat")[0].messages[-1]["content"]
    assert "uploads/sub-10.edf (22 ch, 250 Hz, 30 s) (+15 more); checked" in user
    assert "sub-11.edf" not in user and user.count("uploads/sub-") == 10


def test_a_failed_upload_shows_no_absolute_path_and_says_nothing_was_kept(
    src: Path, tmp_path: Path
) -> None:
    """receive raises when uploads/ cannot be made (here a file holds its name): the step names
    the path relative to the data folder, and the reply says the upload failed."""
    from brainchat.eeg.uploads.uploads import UploadReport
    from brainchat.ui.uploads import failure, summary, title

    (tmp_path / "uploads").write_text("not a folder")
    with pytest.raises(OSError) as caught:
        up(tmp_path, ("sub-01.edf", src / "sub-01.edf"))
    assert str(tmp_path) in str(caught.value)  # what the step showed before
    text = failure(caught.value, tmp_path)
    assert (
        text
        == "The upload failed (FileExistsError: [Errno 17] File exists: 'uploads'). Nothing was kept."
    )
    assert str(tmp_path) not in text and "/" not in text
    empty = UploadReport()
    assert (
        summary(empty, "agent", asked=False, failed=True) == "The upload failed; nothing was kept."
    )
    assert summary(empty, "agent", asked=False) == "No file arrived."
    assert title(empty, 0.2, failed=True).startswith("Upload · failed · ")


def test_chainlit_upload_bound_is_never_below_brainchats_limit() -> None:
    from chainlit.config import config

    from brainchat.ui.uploads import install

    feature = config.features.spontaneous_file_upload
    assert feature is not None and feature.enabled  # .chainlit/config.toml turns upload on
    assert feature.accept == {}  # every file reaches brainchat, which names what it refuses
    kept = feature.max_size_mb
    try:
        feature.max_size_mb = 10
        install(Settings(upload_max_mb=64))
        assert feature.max_size_mb == 65  # a 64 MB file reaches brainchat's own check
        install(Settings(upload_max_mb=5))
        assert feature.max_size_mb == 65  # never lowered
    finally:
        feature.max_size_mb = kept


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("sub-01.bdf", "application/x-font-bdf"),  # Linux shared-mime-info, browsers use it
        ("sub-01.fdt", "application/fdt+xml"),
        ("sub-01.edf", "application/octet-stream"),
        ("sub-01.edf", "application/edf"),
        ("sub-01.set", "application/octet-stream"),
        ("rec.vhdr", "application/octet-stream"),
        ("rec.vhdr", "text/plain"),
        ("rec.vmrk", "text/plain"),
        ("rec.eeg", "application/octet-stream"),
        ("all.zip", "application/zip"),
        ("all.zip", "application/x-zip-compressed"),
        ("sub-01.fif.gz", "application/gzip"),
        ("sub-01.fif.gz", "application/x-gzip"),
        ("sub-01.fif", "application/octet-stream"),
    ],
)
def test_the_upload_route_lets_through_the_types_browsers_send_for_recordings(
    name: str, mime: str
) -> None:
    """brainchat's upload route's type check with the repository's config."""
    from brainchat.ui.upload_route import check_type

    check_type(name, mime)


@pytest.mark.parametrize(
    ("name", "mime"),
    [("photo.png", "image/png"), ("paper.pdf", "application/pdf"), ("notes.txt", "text/plain")],
)
def test_other_files_reach_brainchat_which_names_them_with_its_formats(
    name: str, mime: str, tmp_path: Path
) -> None:
    """Not dropped by a type filter (#40: a .txt vanished without a word): brainchat refuses it
    and says which formats it reads."""
    from brainchat.ui.upload_route import check_type

    check_type(name, mime)
    path = tmp_path / name
    path.write_bytes(b"not a recording")
    (refused,) = up(tmp_path / "data", (name, path)).refused
    assert refused.reason.startswith("not an EEG recording; accepted: EDF, BDF, GDF, FIF")


def test_a_configured_accept_map_is_still_kept_by_the_route(monkeypatch) -> None:
    from chainlit.config import config

    from brainchat.ui.upload_route import Refused, check_type

    feature = config.features.spontaneous_file_upload
    monkeypatch.setattr(feature, "accept", {"application/*": [".edf"]})
    check_type("sub-01.edf", "application/octet-stream")
    with pytest.raises(Refused, match="File type not allowed"):
        check_type("notes.txt", "text/plain")


def test_staging_folders_left_by_a_killed_process_are_removed_after_an_hour(
    src: Path, tmp_path: Path
) -> None:
    import os
    import time

    uploads = tmp_path / "uploads"
    old, recent = uploads / ".upload-killed", uploads / ".upload-running"
    for folder in (old, recent):
        (folder / "files").mkdir(parents=True)
        shutil.copy(src / "sub-01.edf", folder / "files" / "sub-01.edf")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    report = up(tmp_path, ("sub-02.edf", src / "sub-01.edf"))
    assert [a.name for a in report.accepted] == ["uploads/sub-02.edf"]
    assert not old.exists()  # a killed process's leftovers
    assert (recent / "files" / "sub-01.edf").is_file()  # maybe another upload still checking


def test_a_recording_being_checked_is_not_listed(src: Path, tmp_path: Path) -> None:
    from brainchat.eeg.io.listing import list_files

    staging = tmp_path / "uploads" / ".upload-abc"
    staging.mkdir(parents=True)
    shutil.copy(src / "sub-01.edf", staging / "half.edf")
    shutil.copy(src / "sub-01.edf", tmp_path / "uploads" / "sub-01.edf")
    listed = list_files(tmp_path, "*.edf")
    assert "uploads/sub-01.edf" in listed and "half.edf" not in listed
