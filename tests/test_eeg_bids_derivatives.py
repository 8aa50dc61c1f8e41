"""BIDS derivatives (#24): epochs per subject/session and the models' results written under
derivatives/brainchat/ of the loaded BIDS dataset, with a dataset_description.json naming
brainchat and its version; never over the user's files, never outside the data folder, and
replacing earlier derivatives only through the tool that asks first."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from brainchat.eeg.export.export_report import versions
from brainchat.tools.registry import flags_of
from test_eeg_bids import Harness, write_bids_set

DERIV = "ds001/derivatives/brainchat"
EPO = "sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_desc-brainchat_epo.fif"


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "derivatives" not in p.parts
    }


@pytest.fixture
async def epoched(tmp_path: Path) -> Harness:
    write_bids_set(tmp_path, subjects=(1, 2), sessions=(1,), runs=(1, 2))
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["ds001"]})
    await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    return h


async def test_epochs_are_written_per_subject_and_session(epoched: Harness) -> None:
    import mne
    import mne_bids

    data = epoched.study.data_dir
    raw_before = _hashes(data / "ds001")
    text = await epoched.call("save_bids_derivatives")
    folder = data / DERIV
    assert f"in the data folder's {DERIV}/" in text and str(data) not in text
    desc = json.loads((folder / "dataset_description.json").read_text())
    assert desc["DatasetType"] == "derivative"
    assert desc["GeneratedBy"][0]["Name"] == "brainchat"
    assert desc["GeneratedBy"][0]["Version"] == versions()["brainchat"]
    assert desc["BIDSVersion"] and desc["DatasetLinks"] == {"raw": "../../"}
    eps = epoched.study.state.eps
    for subject in ("01", "02"):
        path = folder / EPO.replace("01", subject)
        named = mne_bids.BIDSPath(
            root=folder, subject=subject, session="1", task="imagery", description="brainchat",
            datatype="eeg", suffix="epo", extension=".fif", check=False,
        )  # fmt: skip
        assert named.fpath == path  # the name mne-bids gives these entities
        written = mne.read_epochs(path, verbose="error")
        mask = eps.subjects == subject
        assert len(written) == int(mask.sum()) == 2 * 12
        assert written.get_data(copy=False) == pytest.approx(eps.X[mask], abs=1e-9)
        assert written.tmin == pytest.approx(eps.tmin)
        assert sorted(written.event_id) == list(eps.classes)
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["Sources"] == [
            f"bids:raw:sub-{subject}/ses-1/eeg/sub-{subject}_ses-1_task-imagery_run-{r}_eeg.edf"
            for r in (1, 2)
        ]
        assert sidecar["Preprocessing"] == ["band-pass 8-30 Hz"]
    assert _hashes(data / "ds001") == raw_before  # the raw dataset is untouched


async def test_existing_derivatives_are_replaced_only_by_the_tool_that_asks(
    epoched: Harness,
) -> None:
    flags = {n: flags_of(t) for n, t in epoched.tools.items()}
    assert flags["replace_bids_derivatives"].destructive
    assert not flags["save_bids_derivatives"].destructive
    await epoched.call("save_bids_derivatives")
    path = epoched.study.data_dir / DERIV / EPO
    before = path.read_bytes()
    await epoched.call("clear_study")
    await epoched.call("load_data", {"files": ["ds001"], "subjects": ["01"]})
    await epoched.call("epoch_data", {"tmin": 0.0, "tmax": 1.0})
    error = await epoched.fails("save_bids_derivatives", {})
    assert f"BIDS derivatives are already there ({DERIV}/{EPO}" in error
    assert "nothing was written" in error and "replace_bids_derivatives" in error
    assert path.read_bytes() == before
    text = await epoched.call("replace_bids_derivatives")
    # sub-01's epochs, trials and their sidecars; sub-02's are gone (stale)
    assert "(8 replaced)" in text
    assert path.read_bytes() != before
    assert sorted(p.name for p in (epoched.study.data_dir / DERIV).rglob("*_epo.*")) == [
        "sub-01_ses-1_task-imagery_desc-brainchat_epo.fif",
        "sub-01_ses-1_task-imagery_desc-brainchat_epo.json",
    ]


async def test_results_of_trained_models_are_written(epoched: Harness) -> None:
    await epoched.call("split_dataset", {"by": "trial", "seed": 1})
    await epoched.call("train_model", {"model": "csp_lda"})
    await epoched.call("save_bids_derivatives")
    results = json.loads(
        (epoched.study.data_dir / DERIV / "desc-brainchat_results.json").read_text()
    )
    (name, model), *_ = results["Models"].items()
    assert model["kind"] == "csp_lda" and 0.0 <= model["metrics"]["accuracy"] <= 1.0
    assert results["Split"] == {"by": "trial", "seed": 1}


async def test_recordings_outside_bids_write_under_the_data_folder(tmp_path: Path) -> None:
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(tmp_path, subjects=1, sessions=1, trials=12)
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
    await h.call("epoch_data", {})
    await h.call("save_bids_derivatives")
    assert (tmp_path / "derivatives/brainchat/sub-01/ses-01/eeg").is_dir()


async def test_derivatives_never_leave_the_data_folder(epoched: Harness, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (epoched.study.data_dir / "ds001" / "derivatives").symlink_to(outside)
    error = await epoched.fails("save_bids_derivatives", {})
    assert "outside the data folder" in error
    assert not any(outside.iterdir())


async def test_another_pipelines_derivatives_are_left_alone(epoched: Harness) -> None:
    folder = epoched.study.data_dir / DERIV
    folder.mkdir(parents=True)
    theirs = {"Name": "x", "BIDSVersion": "1.9.0", "GeneratedBy": [{"Name": "fmriprep"}]}
    (folder / "dataset_description.json").write_text(json.dumps(theirs))
    for tool in ("save_bids_derivatives", "replace_bids_derivatives"):
        assert "that brainchat did not write" in await epoched.fails(tool, {})
    assert json.loads((folder / "dataset_description.json").read_text()) == theirs


async def test_nothing_to_write_says_what_to_do_first(tmp_path: Path) -> None:
    error = await Harness(tmp_path).fails("save_bids_derivatives", {})
    assert "cut epochs first (epoch_data)" in error


async def test_a_derivative_that_is_a_link_to_a_raw_file_is_never_written_through(
    epoched: Harness,
) -> None:
    data = epoched.study.data_dir
    raw_before = _hashes(data / "ds001")
    path = data / DERIV / EPO
    path.parent.mkdir(parents=True)
    path.symlink_to(data / "ds001/sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_run-1_eeg.edf")
    for tool in ("save_bids_derivatives", "replace_bids_derivatives"):
        error = await epoched.fails(tool, {})
        assert "already there" in error or "is a link" in error
    assert _hashes(data / "ds001") == raw_before
