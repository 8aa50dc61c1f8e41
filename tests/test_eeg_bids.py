"""BIDS datasets (#24): a dataset written by mne-bids (write_raw_bids) from the synthetic
generator, loaded by its folder and entities, listed as subjects/sessions, and its events.tsv
read as the annotations; names and links that would leave the data folder are refused."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.io.synthetic import make_recording
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools

TRIALS = 12


def write_bids_set(
    data_dir: Path, name: str = "ds001", subjects=(1, 2), sessions=(1, 2), runs=(1, 2)
) -> Path:
    """A BIDS dataset of synthetic motor imagery, written by mne-bids as EDF (task 'imagery')."""
    import mne_bids

    root = data_dir / name
    for subject in subjects:
        for session in sessions:
            for run in runs:
                raw = make_recording(subject, session * 10 + run, trials=TRIALS, seed=3)
                raw.info["line_freq"] = 50
                path = mne_bids.BIDSPath(
                    subject=f"{subject:02d}", session=str(session), task="imagery",
                    run=str(run), datatype="eeg", root=root,
                )  # fmt: skip
                mne_bids.write_raw_bids(
                    raw, path, format="EDF", allow_preload=True, overwrite=True, verbose="error"
                )
    return root


EDF = "ds001/sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_run-1_eeg.edf"


@pytest.fixture(scope="module")
def bids_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("bids")
    write_bids_set(data)
    return data


class Harness:
    """A study over a data folder and its tools by name."""

    def __init__(self, data_dir: Path) -> None:
        self.study = Study(data_dir)
        self.tools = {t.name: t for t in build_eeg_tools(self.study)}
        self._token = events._sink.set(lambda e: None)

    async def call(self, name: str, args: dict | None = None) -> str:
        events.set_tool_call(f"call-{name}", name)
        result = await self.tools[name].ainvoke(args or {})
        await asyncio.sleep(0)
        return result

    async def fails(self, name: str, args: dict) -> str:
        with pytest.raises(ToolException) as info:
            await self.call(name, args)
        assert self.study.state.stage == "empty" or name != "load_data"
        return str(info.value)


def _events_tsv(data_dir: Path, edf: str) -> Path:
    return data_dir / edf.replace("_eeg.edf", "_events.tsv")


async def test_a_dataset_loads_by_its_folder_and_entities(bids_dir: Path) -> None:
    h = Harness(bids_dir)
    text = await h.call("load_data", {"files": ["ds001"], "subjects": ["01"], "sessions": ["2"]})
    recs = h.study.state.recordings
    assert "loaded 2 file(s)" in text
    assert [r.name for r in recs] == [
        "ds001/sub-01/ses-2/eeg/sub-01_ses-2_task-imagery_run-1_eeg.edf",
        "ds001/sub-01/ses-2/eeg/sub-01_ses-2_task-imagery_run-2_eeg.edf",
    ]
    assert {(r.subject, r.session) for r in recs} == {("01", "2")}
    # the log keeps the files the entities chose: a resumed conversation replays those
    assert h.study.log[-1] == {"op": "load", "files": [r.name for r in recs]}


async def test_all_recordings_and_their_subjects_and_sessions_reach_the_epochs(
    bids_dir: Path,
) -> None:
    h = Harness(bids_dir)
    await h.call("load_data", {"files": ["ds001"], "runs": ["01"]})  # '01' names run-1 too
    assert len(h.study.state.recordings) == 4
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    eps = h.study.state.eps
    pairs = sorted(set(zip(eps.subjects.tolist(), eps.sessions.tolist(), strict=True)))
    assert pairs == [("01", "1"), ("01", "2"), ("02", "1"), ("02", "2")]
    assert len(eps.y) == 4 * TRIALS


async def test_a_subject_folder_selects_that_subject(bids_dir: Path) -> None:
    h = Harness(bids_dir)
    await h.call("load_data", {"files": ["ds001/sub-02"], "tasks": ["task-imagery"]})
    assert {r.subject for r in h.study.state.recordings} == {"02"}
    assert len(h.study.state.recordings) == 4


async def test_events_tsv_become_the_annotations(tmp_path: Path) -> None:
    write_bids_set(tmp_path, subjects=(1,), sessions=(1,), runs=(1,))
    events_tsv = _events_tsv(tmp_path, EDF)
    lines = events_tsv.read_text().splitlines()
    head = lines[0].split("\t")
    col = head.index("trial_type")
    rows = [line.split("\t") for line in lines[1:]]
    for row in rows:  # the events.tsv says what happened, not the EDF's own annotations
        row[col] = {"left_hand": "imagery_left", "right_hand": "imagery_right"}[row[col]]
    events_tsv.write_text("\n".join(["\t".join(head)] + ["\t".join(r) for r in rows]) + "\n")
    channels = events_tsv.with_name(events_tsv.name.replace("_events", "_channels"))
    text = channels.read_text().replace("POz\tEEG", "POz\tMISC")  # channels.tsv: types ...
    lines = text.splitlines()
    first = lines[1].split("\t")
    first[lines[0].split("\t").index("status")] = "bad"
    lines[1] = "\t".join(first)
    channels.write_text("\n".join(lines) + "\n")  # ... and bad channels

    h = Harness(tmp_path)
    text = await h.call("load_data", {"files": [EDF]})  # a BIDS file named by its path
    raw = h.study.state.raws[0]
    assert sorted(set(raw.annotations.description)) == ["imagery_left", "imagery_right"]
    assert len(raw.annotations) == TRIALS
    onsets = [float(r[head.index("onset")]) for r in rows]
    assert list(raw.annotations.onset) == pytest.approx(onsets)
    assert "imagery_left" in text
    assert raw.get_channel_types(picks=["POz"]) == ["misc"]
    assert raw.info["bads"] == [first[0]]


async def test_list_shows_a_dataset_as_subjects_and_sessions(bids_dir: Path) -> None:
    (bids_dir / "loose").mkdir(exist_ok=True)
    make_recording(1, 1, trials=4).save(bids_dir / "loose" / "rec_raw.fif", overwrite=True)
    h = Harness(bids_dir)
    text = await h.call("list_data_files", {})
    assert "ds001/ (BIDS dataset" in text
    assert "2 subject(s), 8 EEG recording(s)" in text
    assert "subjects 01, 02; sessions 1, 2; tasks imagery; runs 1, 2" in text
    assert "  sub-01: ses-1 (2 recording(s): tasks imagery; runs 1, 2), ses-2 (" in text
    assert "load_data(files=['ds001'], subjects=['01'])" in text
    assert "_eeg.edf" not in text  # not one line per file
    assert "1 file(s) in the data folder:\nloose/rec_raw.fif" in text  # other files as before
    inside = await h.call("list_data_files", {"pattern": "ds001/sub-01/**"})
    assert inside.startswith("4 file(s) in the data folder:")
    assert f"{EDF} (" in inside and "subject 01, session 1" in inside


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"subjects": ["07"]}, "no subject '07' in the BIDS dataset 'ds001'; subjects 01, 02; "
         "sessions 1, 2; tasks imagery; runs 1, 2"),
        ({"sessions": ["3"]}, "no session '3' in the BIDS dataset 'ds001'; subjects 01, 02"),
        ({"tasks": ["rest"]}, "no task 'rest' in the BIDS dataset 'ds001'"),
        ({"subjects": ["../../etc"]}, "'../../etc' is not a BIDS subject label"),
        ({"runs": ["1/../../x"]}, "is not a BIDS run label"),
    ],
)  # fmt: skip
async def test_bad_entities_name_what_exists(bids_dir: Path, args: dict, message: str) -> None:
    h = Harness(bids_dir)
    assert message in await h.fails("load_data", {"files": ["ds001"], **args})


async def test_one_label_may_be_given_as_a_string_or_a_number(bids_dir: Path) -> None:
    h = Harness(bids_dir)  # what a small model often writes instead of a list
    await h.call("load_data", {"files": ["ds001"], "subjects": "01", "sessions": 1, "runs": "2"})
    assert [r.name for r in h.study.state.recordings] == [
        "ds001/sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_run-2_eeg.edf"
    ]


async def test_filters_without_a_dataset_folder_say_how(bids_dir: Path) -> None:
    h = Harness(bids_dir)
    error = await h.fails("load_data", {"files": [EDF], "subjects": ["01"]})
    assert "name its folder in files (e.g. files=['ds001'])" in error


async def test_a_dataset_outside_the_data_folder_is_refused(bids_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_bids_set(outside, "ds002", subjects=(9,), sessions=(1,), runs=(1,))
    data = tmp_path / "data"
    data.mkdir()
    (data / "linked").symlink_to(outside / "ds002")  # a BIDS root that is a link out
    (data / "ds003").mkdir()
    (data / "ds003" / "dataset_description.json").write_text("{}")
    (data / "ds003" / "sub-09").symlink_to(outside / "ds002" / "sub-09")  # a subject link out
    h = Harness(data)
    for files in (["../outside/ds002"], [str(outside / "ds002")], ["linked"]):
        assert "outside the data folder" in await h.fails("load_data", {"files": files})
    error = await h.fails("load_data", {"files": ["ds003"], "subjects": ["09"]})
    assert "holds no EEG recordings" in error  # the linked subject folder is not walked into
    assert "sub-09" not in await h.call("list_data_files", {})


async def test_a_sidecar_linked_elsewhere_is_not_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_bids_set(data, subjects=(1,), sessions=(1,), runs=(1,))
    secret = tmp_path / "secret_events.tsv"
    secret.write_text("onset\tduration\ttrial_type\n1.0\t1.0\tsecret\n")
    events_tsv = _events_tsv(data, EDF)
    events_tsv.unlink()
    events_tsv.symlink_to(secret)
    h = Harness(data)
    error = await h.fails("load_data", {"files": [EDF]})
    assert "is a link to a file elsewhere" in error and "secret" not in error


async def test_a_resumed_study_reads_the_events_tsv_again(tmp_path: Path) -> None:
    write_bids_set(tmp_path, subjects=(1,), sessions=(1,), runs=(1,))
    events_tsv = _events_tsv(tmp_path, EDF)
    events_tsv.write_text(events_tsv.read_text().replace("left_hand", "left"))
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["ds001"]})
    await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    resumed = Harness(tmp_path)
    resumed.study.pending = list(h.study.log)
    await resumed.call("get_study_state")
    raw = resumed.study.state.raws[0]
    assert sorted(set(raw.annotations.description)) == ["left", "right_hand"]


def test_mne_bids_is_not_imported_with_the_tools() -> None:
    code = (
        "import sys, brainchat.app, brainchat.eeg.tools.tools, brainchat.eeg.tools.bids_tools; "
        "import brainchat.eeg.io.bids.read, brainchat.eeg.io.bids.listing, brainchat.eeg.io.bids.derivatives; "
        "print('mne_bids' in sys.modules, 'mne' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_the_dataset_description_names_no_server_path(bids_dir: Path) -> None:
    desc = json.loads((bids_dir / "ds001" / "dataset_description.json").read_text())
    assert desc["BIDSVersion"]  # written by mne-bids: the fixture is a real BIDS dataset


async def test_the_exported_script_reads_a_bids_recording_as_brainchat_does(
    tmp_path: Path,
) -> None:
    """The export's read_raw (no brainchat, no mne-bids) gives the same annotations, bad
    channels and types, on an events.tsv with the cases mne-bids treats specially."""
    import importlib.util

    from brainchat.eeg.export import script_helpers

    write_bids_set(tmp_path, subjects=(1,), sessions=(1,), runs=(1,))
    _events_tsv(tmp_path, EDF).write_text(
        "onset\tduration\ttrial_type\tvalue\tsample\n"
        "1.0\t4.0\tleft_hand\t1\t250\n"
        "n/a\t4.0\tright_hand\t2\tn/a\n"  # no onset: left out
        "9.0\tn/a\tright_hand\t2\t2250\n"  # no duration: 0
        "17.0\t4.0\tn/a\t3\t4250\n"  # no trial_type: left out
        "25.0\t4.0\tleft_hand\t7\t6250\n"  # left_hand with two values: left_hand/1, left_hand/7
    )
    channels = _events_tsv(tmp_path, EDF).with_name(
        EDF.split("/")[-1].replace("eeg.edf", "channels.tsv")
    )
    channels.write_text(
        channels.read_text().replace("Cz\tEEG", "Cz\tEOG").replace("good\tn/a", "bad\tn/a", 1)
    )
    h = Harness(tmp_path)
    await h.call("load_data", {"files": [EDF]})
    ours = h.study.state.raws[0]
    spec = importlib.util.spec_from_file_location("exported_helpers", script_helpers.__file__)
    assert spec is not None and spec.loader is not None
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    theirs = helpers.read_raw(tmp_path / EDF, "edf")
    assert list(ours.annotations.description) == ["left_hand/1", "right_hand", "left_hand/7"]
    assert list(theirs.annotations.description) == list(ours.annotations.description)
    assert list(theirs.annotations.onset) == pytest.approx(list(ours.annotations.onset))
    assert list(theirs.annotations.duration) == pytest.approx([4.0, 0.0, 4.0])
    assert list(ours.annotations.duration) == pytest.approx([4.0, 0.0, 4.0])
    assert theirs.info["bads"] == ours.info["bads"] == ["Fz"]
    assert theirs.get_channel_types() == ours.get_channel_types()
    assert ours.get_channel_types(picks=["Cz"]) == ["eog"]


async def test_a_data_folder_that_is_a_dataset_lists_and_loads_as_one(tmp_path: Path) -> None:
    root = write_bids_set(tmp_path, subjects=(1, 2), sessions=(1,), runs=(1,))
    h = Harness(root)  # BRAINCHAT_DATA_DIR pointed at a BIDS dataset itself
    text = await h.call("list_data_files", {})
    assert text.startswith("the data folder (BIDS dataset")
    assert "load_data(files=['.'], subjects=['01'])" in text and "'sub-01/**'" in text
    await h.call("load_data", {"files": ["."], "subjects": ["02"]})
    assert [r.name for r in h.study.state.recordings] == [
        "sub-02/ses-1/eeg/sub-02_ses-1_task-imagery_run-1_eeg.edf"
    ]


async def test_a_dataset_around_the_data_folder_is_not_read(tmp_path: Path) -> None:
    root = write_bids_set(tmp_path, subjects=(1, 2), sessions=(1,), runs=(1,))
    h = Harness(root / "sub-01")  # the data folder lies inside a dataset: its root is not ours
    assert "is a folder but not a BIDS dataset" in await h.fails("load_data", {"files": ["."]})
    text = await h.call("list_data_files", {})
    assert text.startswith("1 file(s) in the data folder:") and "sub-02" not in text


async def test_a_dataset_description_linked_out_is_not_shown(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_bids_set(data, subjects=(1,), sessions=(1,), runs=(1,))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"Name": "TOP-SECRET"}))
    desc = data / "ds001" / "dataset_description.json"
    desc.unlink()
    desc.symlink_to(secret)
    text = await Harness(data).call("list_data_files", {})
    assert "ds001/ (BIDS dataset, " in text and "TOP-SECRET" not in text


async def test_a_dataset_larger_than_one_walk_is_never_loaded_in_part(
    bids_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from brainchat.eeg.io import paths

    monkeypatch.setattr(paths, "MAX_LISTED_ENTRIES", 10)  # the walk's bound, made small
    error = await Harness(bids_dir).fails("load_data", {"files": ["ds001"]})
    assert "name one subject's folder in files (e.g. 'ds001/sub-01')" in error
