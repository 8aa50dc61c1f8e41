"""BIDS derivatives keep provenance (#38): each written epoch names its source recording, the
onset and sample of its event and its events.tsv row; the trials epoch_data rejected are listed
with the reason from MNE's drop_log; the .fif's events hold the events' own samples."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from test_eeg_bids import Harness, write_bids_set

EEG = "ds001/derivatives/brainchat/sub-01/ses-1/eeg"
STEM = "sub-01_ses-1_task-imagery_desc-brainchat"
RUN = "sub-01/ses-1/eeg/sub-01_ses-1_task-imagery_run-{}_{}"
REJECT_UV = 72  # the synthetic recordings' peak-to-peak is 60-95 µV: about half the trials go


def _table(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.fixture
async def written(tmp_path: Path) -> Harness:
    write_bids_set(tmp_path, subjects=(1,), sessions=(1,), runs=(1, 2))
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["ds001"]})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5, "reject_uv": REJECT_UV})
    await h.call("save_bids_derivatives")
    return h


async def test_every_trial_is_traced_to_its_events_tsv_row(written: Harness) -> None:
    data = written.study.data_dir
    eps = written.study.state.eps
    trials = _table(data / EEG / f"{STEM}_trials.tsv")
    assert len(trials) == len(eps.y) + eps.dropped == 2 * 12
    for run in (1, 2):
        source = f"bids:raw:{RUN.format(run, 'eeg.edf')}"
        events = _table(data / "ds001" / RUN.format(run, "events.tsv"))
        mine = [t for t in trials if t["source"] == source]
        assert [int(t["events_row"]) for t in mine] == list(range(1, len(events) + 1))
        for t in mine:
            row = events[int(t["events_row"]) - 1]
            assert (t["onset"], t["sample"], t["trial_type"]) == (
                str(float(row["onset"])),
                row["sample"],
                row["trial_type"],
            )
    kept = [t for t in trials if t["status"] == "kept"]
    assert [int(t["epoch"]) for t in kept] == list(range(len(eps.y)))
    description = json.loads(
        (data / EEG).parents[2].joinpath("dataset_description.json").read_text()
    )
    assert description["SourceDatasets"] == [{"URL": "bids:raw:"}]  # resolved by DatasetLinks
    assert description["DatasetLinks"] == {"raw": "../../"}
    assert [t["trial_type"] for t in kept] == [eps.classes[i] for i in eps.y]
    assert all(t["reason"] == "n/a" for t in kept)


async def test_rejected_trials_are_listed_with_why(written: Harness) -> None:
    eps = written.study.state.eps
    trials = _table(written.study.data_dir / EEG / f"{STEM}_trials.tsv")
    rejected = [t for t in trials if t["status"] == "rejected"]
    assert 0 < len(rejected) == eps.dropped < len(trials)
    for t in rejected:
        assert t["epoch"] == "n/a"
        assert t["reason"].startswith(f"peak-to-peak amplitude over reject_uv ({REJECT_UV} µV) in ")
    sidecar = json.loads((written.study.data_dir / EEG / f"{STEM}_epo.json").read_text())
    assert sidecar["Rejected"] == eps.dropped and sidecar["Trials"] == f"{STEM}_trials.tsv"
    assert sidecar["RejectPeakToPeakMicrovolts"] == REJECT_UV
    about = json.loads((written.study.data_dir / EEG / f"{STEM}_trials.json").read_text())
    assert set(trials[0]) <= {k for k, v in about.items() if isinstance(v, dict)}


async def test_the_fif_holds_real_samples_metadata_and_drop_log(written: Harness) -> None:
    import mne

    data = written.study.data_dir
    epochs = mne.read_epochs(data / EEG / f"{STEM}_epo.fif", verbose="error")
    trials = _table(data / EEG / f"{STEM}_trials.tsv")
    kept = [t for t in trials if t["status"] == "kept"]
    run_1 = [t for t in kept if "run-1" in t["source"]]
    # the first recording's events keep their own samples; the second's follow its end
    assert epochs.events[: len(run_1), 0].tolist() == [int(t["sample"]) for t in run_1]
    assert (epochs.events[len(run_1) :, 0] > 60 * 250).all()
    assert epochs.metadata["events_row"].tolist() == [int(t["events_row"]) for t in kept]
    assert epochs.metadata["source"].tolist() == [t["source"] for t in kept]
    assert len(epochs.drop_log) == len(trials)
    for entry, t in zip(epochs.drop_log, trials, strict=True):
        assert bool(entry) == (t["status"] == "rejected")
        assert all(ch in t["reason"] for ch in entry)


async def test_events_from_a_file_without_events_tsv_say_so(tmp_path: Path) -> None:
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(tmp_path, subjects=1, sessions=1, trials=12)
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.edf"]})
    await h.call("epoch_data", {})
    await h.call("save_bids_derivatives")
    (table,) = (tmp_path / "derivatives/brainchat").rglob("*_trials.tsv")
    trials = _table(table)
    assert trials and {t["events_row"] for t in trials} == {"n/a"}
    assert all(float(t["onset"]) * 250 == pytest.approx(int(t["sample"])) for t in trials)


async def test_the_exported_report_traces_each_trial_and_names_the_rejected(
    written: Harness,
) -> None:
    """The exported report carries the same provenance: every trial's recording, onset and
    events.tsv row, and each rejected trial with why, as the derivatives' trials table says."""
    import html

    await written.call("export_analysis")
    [report] = sorted((written.study.data_dir / "exports").glob("*.html"))
    page = html.unescape(report.read_text())
    trials = _table(written.study.data_dir / EEG / f"{STEM}_trials.tsv")
    rejected = [t for t in trials if t["status"] == "rejected"]
    assert f"{len(rejected)} rejected trial(s) and why" in page
    for t in trials:
        source = Path(t["source"].removeprefix("bids:raw:")).name
        cells = f"<td>{source}</td><td>{float(t['onset']):.3f}</td><td>{t['sample']}</td>"
        assert cells + f"<td>{t['events_row']}</td>" in page, t
        if t["status"] == "rejected":
            assert f"<td>rejected</td><td>{t['reason']}</td>" in page
