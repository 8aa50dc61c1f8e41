"""Uploads that stay apart (#40), on real EDF files written by MNE and the real tools.

An upload belongs to its conversation: a New chat's listing (and so the demo's "load them all")
leaves it out; a load of files whose channel sets differ is refused before anything is read,
naming the groups; a file named but not there is called missing, with the nearest names; the
uploads index says where each came from; one's recordings are listed and removed by name, never
outside one's own data folder.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.io.synthetic import make_recording, write_demo_set, write_raw
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.eeg.uploads.recordings import NotRemoved, list_recordings, remove_recording
from brainchat.eeg.uploads.upload_index import read_index
from brainchat.eeg.uploads.uploads import Incoming, UploadLimits, receive, receive_listed

DEMO = [f"demo/sub-0{s}_ses-0{k}_task-mi_eeg.edf" for s in (1, 2) for k in (1, 2)]


@pytest.fixture(scope="module")
def eight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An 8-channel EDF, as a user's own cap records it."""
    raw = make_recording(3, 1, trials=6).crop(tmax=20, include_tmax=False)
    raw.pick(raw.ch_names[:8])
    path = tmp_path_factory.mktemp("src") / "my_8ch.edf"
    write_raw(raw, path)
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data" / "demo", subjects=2, sessions=2, trials=12, seed=0)
    return tmp_path / "data"


def tools(study: Study) -> dict:
    return {t.name: t for t in build_eeg_tools(study)}


async def upload(study: Study, src: Path, thread: str) -> None:
    files = [Incoming(src.name, src)]
    report = await receive_listed(files, study.data_dir, UploadLimits(), study.uploads, thread)
    assert [a.name for a in report.accepted] == [f"uploads/{src.name}"], report.refused


async def test_a_new_conversation_lists_neither_loads_another_ones_upload(
    data: Path, eight: Path
) -> None:
    first = Study(data)
    await upload(first, eight, "thread-1")
    mine = await tools(first)["list_data_files"].ainvoke({})
    assert "uploads/my_8ch.edf" in mine and all(d in mine for d in DEMO)
    assert "Uploaded this conversation (paths relative to the data folder): uploads/my_8ch.edf" \
        in first.context()  # fmt: skip

    new = Study(data)  # New chat: the upload is not part of it
    listed = await tools(new)["list_data_files"].ainvoke({"pattern": "*"})
    assert "uploads/my_8ch.edf" not in listed and all(d in listed for d in DEMO)
    assert "1 recording(s) uploaded in other conversations are not listed" in listed
    assert "pattern 'uploads/*'" in listed and "Uploaded this conversation" not in new.context()
    asked = await tools(new)["list_data_files"].ainvoke({"pattern": "uploads/*"})
    assert "uploads/my_8ch.edf (" in asked  # asked for by name: every upload is there


async def test_files_whose_channels_differ_are_refused_before_loading_with_their_groups(
    data: Path, eight: Path
) -> None:
    study = Study(data)
    await upload(study, eight, "thread-1")
    load = tools(study)["load_data"]
    with pytest.raises(ToolException) as err:
        await load.ainvoke({"files": [*DEMO, "uploads/my_8ch.edf"]})
    text = str(err.value)
    assert text.startswith("not loaded: these 5 files do not share one channel set")
    assert f"- 4 file(s) with 22 channels (Fz, FC3, FC1, FCz, FC2, FC4, …): {', '.join(DEMO)}" \
        in text  # fmt: skip
    assert "- 1 file(s) with 8 channels" in text and ": uploads/my_8ch.edf" in text
    assert "name them in load_data's files" in text and "Nothing was loaded" in text
    assert "mixed_channels=true" in text  # the way to load them all, if that is what is meant
    assert err.value.next_call == {"name": "load_data", "arguments": {"files": DEMO}}
    assert study.stage == "empty"
    done = await load.ainvoke({"files": DEMO})  # one group: loads
    assert done.startswith("loaded 4 file(s)") and study.stage == "loaded"


async def test_a_model_that_means_mixed_channels_loads_them_all_when_it_says_so(
    data: Path, eight: Path
) -> None:
    """A sound call is never refused for good: loading files of different montages to keep their
    common channels is asked for with mixed_channels, and the load warns as it always did."""
    study = Study(data)
    await upload(study, eight, "thread-1")
    done = await tools(study)["load_data"].ainvoke(
        {"files": [*DEMO, "uploads/my_8ch.edf"], "mixed_channels": True}
    )
    assert done.startswith("loaded 5 file(s)") and "files differ in channels" in done


async def test_a_file_named_but_not_there_is_called_missing_with_the_nearest_names(
    data: Path,
) -> None:
    study = Study(data)
    with pytest.raises(ToolException) as err:
        await tools(study)["load_data"].ainvoke({"files": ["data/sub-99_ses-07.edf"]})
    text = str(err.value)
    assert text.startswith("file 'data/sub-99_ses-07.edf' not found in the data folder")
    assert "closest names: 'demo/sub-0" in text
    assert study.stage == "empty"
    with pytest.raises(ToolException, match="'demo/sub-09_ses-01.edf' not found"):  # with others
        await tools(study)["load_data"].ainvoke({"files": [DEMO[0], "demo/sub-09_ses-01.edf"]})
    assert study.stage == "empty"


async def test_the_index_says_which_conversation_uploaded_what_and_when(
    data: Path, eight: Path
) -> None:
    study = Study(data)
    await upload(study, eight, "thread-1")
    await upload(Study(data), eight, "thread-2")  # the same bytes again: the first origin stays
    index = read_index(data)
    assert list(index) == ["uploads/my_8ch.edf"]
    assert (index["uploads/my_8ch.edf"].thread, index["uploads/my_8ch.edf"].shown) == (
        "thread-1",
        "my_8ch.edf",
    )
    assert index["uploads/my_8ch.edf"].at > 0
    raw = json.loads((data / "uploads" / ".index.json").read_text())
    assert raw["uploads/my_8ch.edf"]["thread"] == "thread-1"


def test_recordings_are_listed_with_size_and_origin_and_removed_by_name(
    data: Path, eight: Path
) -> None:
    receive([Incoming(eight.name, eight)], data, UploadLimits(), "thread-1")
    rows = list_recordings(data)
    assert [r.name for r in rows] == ["uploads/my_8ch.edf", *DEMO]  # uploads first
    assert [r.kind for r in rows] == ["upload", "demo", "demo", "demo", "demo"]
    assert rows[0].size == eight.stat().st_size and rows[0].origin.thread == "thread-1"
    gone = remove_recording(data, "uploads/my_8ch.edf")
    assert gone.files == ("uploads/my_8ch.edf",) and not (data / gone.name).exists()
    assert read_index(data) == {}
    with pytest.raises(NotRemoved, match="not found"):
        remove_recording(data, "uploads/my_8ch.edf")


@pytest.mark.attack
def test_one_user_cannot_remove_or_list_another_users_recording(
    tmp_path: Path, eight: Path
) -> None:
    """Each user's data folder is their own: a name that leads into another user's folder
    ('..', an absolute path, a link) removes nothing and lists nothing of theirs."""
    alice, bob = tmp_path / "users" / "alice", tmp_path / "users" / "bob"
    (alice / "uploads").mkdir(parents=True)
    (bob / "uploads").mkdir(parents=True)
    target = alice / "uploads" / "secret.edf"
    target.write_bytes(eight.read_bytes())
    (bob / "uploads" / "link.edf").symlink_to(target)
    assert list_recordings(bob) == []  # a link out of the folder is not Bob's recording
    for name in ("../alice/uploads/secret.edf", str(target), "uploads/link.edf"):
        with pytest.raises(NotRemoved):
            remove_recording(bob, name)
    assert target.is_file() and [r.name for r in list_recordings(alice)] == ["uploads/secret.edf"]


async def test_the_demo_in_a_new_chat_loads_the_demo_files_only(
    scripted_server, data: Path, eight: Path
) -> None:
    """The issue's path: one 8-channel upload, then the demo's "what is in the files" in a New
    chat loads the four demo files (not five); in the uploading chat, the five are refused
    before loading, with their groups, instead of failing later at epoch_data."""
    from brainchat.demo.replies import respond
    from test_demo import Conversation

    scripted_server.responder, scripted_server.pace = respond, 0
    first = Conversation(scripted_server, data)
    await upload(first.study, eight, "thread-1")
    new = Conversation(scripted_server, data)
    _, ran, _ = await new.ask("What is in the data files?")
    assert ran["load_data"].startswith("loaded 4 file(s)") and "my_8ch" not in ran["load_data"]
    _, ran, events = await first.ask("What is in the data files?")
    assert "load_data" not in ran and first.study.stage == "empty"
    failed = [e.error or "" for e in events if getattr(e, "status", "") == "error"]
    assert any("do not share one channel set" in f for f in failed), failed


@pytest.mark.parametrize("cut", [100, 256 * 5, 256 * 9 + 3, 40_000])
def test_an_edf_cut_off_is_refused_in_the_users_terms(
    eight: Path, tmp_path: Path, cut: int
) -> None:
    """Cut in its fixed header, its channel headers or its data: MNE's own words ("list index out
    of range", "could not convert string to float") became "the file is shorter than its
    header says ..."; in Chinese for a Chinese page."""
    from brainchat import i18n

    part = tmp_path / "cut.edf"
    part.write_bytes(eight.read_bytes()[:cut])
    (refused,) = receive([Incoming("cut.edf", part)], tmp_path / "data", UploadLimits()).refused
    assert refused.reason.startswith(
        "the file is shorter than its header says: it was cut off during copying or upload; "
        "upload the whole file"
    ), refused.reason
    i18n.use("zh-CN")
    try:
        (refused,) = receive([Incoming("cut.edf", part)], tmp_path / "data", UploadLimits()).refused
    finally:
        i18n.use(None)
    assert refused.reason.startswith("文件比其文件头声明的要短"), refused.reason


def test_the_list_of_recordings_and_the_command_menu_speak_the_users_language(
    data: Path, eight: Path
) -> None:
    from brainchat import i18n
    from brainchat.ui.commands import COMMANDS, _localized
    from brainchat.ui.recordings import table

    receive([Incoming(eight.name, eight)], data, UploadLimits(), "thread-1")
    rows = list_recordings(data)
    english = table(rows, "thread-1")
    assert english.startswith("**Your recordings** (5)") and "| `uploads/my_8ch.edf` |" in english
    assert "uploaded in this conversation, " in english and "| demo set |" in english
    assert "uploaded in another conversation, " in table(rows, "thread-2")
    files = next(c for c in COMMANDS if c["id"] == "files")
    for lang, said, menu in (("zh-CN", "**你的记录**（5 个）", "你的记录：大小、来源；可删除"),
                             ("zh-TW", "**你的記錄**（5 個）", "你的記錄：大小、來源；可刪除")):  # fmt: skip
        i18n.use(lang)
        try:
            text, described = table(rows, "thread-1"), _localized(files)["description"]
        finally:
            i18n.use(None)
        assert text.startswith(said) and "在本" in text and "| `uploads/my_8ch.edf` |" in text
        assert described == menu


def test_the_upload_step_and_message_speak_the_users_language(eight: Path, tmp_path: Path) -> None:
    """The upload's step title, its body and the message under it, for a real EDF and a .txt;
    English exactly as before, Chinese for a Chinese page."""
    from brainchat import i18n
    from brainchat.ui.uploads import details, summary, title

    notes = tmp_path / "notes.txt"
    notes.write_text("not a recording")
    files = [Incoming(eight.name, eight), Incoming("notes.txt", notes)]
    report = receive(files, tmp_path / "data", UploadLimits())
    english = summary(report, "agent", asked=False)
    assert "📥 Uploaded `uploads/my_8ch.edf` (8 ch, 250 Hz, 20 s)" in english
    assert "⚠️ Refused `notes.txt`: not an EEG recording; accepted: EDF, BDF, GDF, FIF" in english
    assert title(report, 0.2).startswith("Upload · 1 accepted, 1 refused · ")
    i18n.use("zh-CN")
    try:
        said, body, head = (
            summary(report, "agent", asked=False),
            details(report),
            title(report, 0.2),
        )
        refused = receive([Incoming("notes.txt", notes)], tmp_path / "data", UploadLimits())
    finally:
        i18n.use(None)
    assert "📥 已上传 `uploads/my_8ch.edf`" in said and "⚠️ 已拒绝 `notes.txt`" in said
    assert "✅ **uploads/my_8ch.edf**：EDF，8 个通道" in body and head.startswith(
        "上传 · 1 个已接受"
    )
    assert refused.refused[0].reason.startswith("不是 EEG 记录；可接受的格式：EDF, BDF")


async def test_the_context_names_this_conversations_uploads_the_latest_last(
    data: Path, eight: Path, tmp_path: Path
) -> None:
    """ "The file I just uploaded" is the last one named, and named again as the latest."""
    study = Study(data)
    second = tmp_path / "later.edf"
    await asyncio.to_thread(shutil.copyfile, eight, second)
    await upload(study, eight, "thread-1")
    await upload(study, second, "thread-1")
    line = study.context().splitlines()[-1]
    assert line.startswith("Uploaded this conversation (paths relative to the data folder): ")
    assert line.index("uploads/my_8ch.edf (") < line.index("uploads/later.edf (")
    assert line.endswith("; the latest: uploads/later.edf")
