"""Cross-validation results as BIDS derivatives (#24): cross_validate's scores per subject under
derivatives/brainchat/sub-XX/ses-YY/eeg/..._desc-crossval_scores.tsv with a JSON sidecar (its
columns, protocol, pipelines, folds, seed, permutation chance level and p-values), the group
statistics at the top of the derivative, read back with pandas and named as mne-bids names them;
earlier ones replaced only by the tool that asks first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainchat.eeg.export.export_report import versions
from test_eeg_bids import Harness, write_bids_set

DERIV = "ds001/derivatives/brainchat"
WITHIN = {"pipelines": ["csp_lda", "ts_lr"], "folds": 3, "permutations": 2, "seed": 1}
LOSO = {"protocol": "cross_subject", "pipelines": ["mdm"], "permutations": 2}


@pytest.fixture
async def validated(tmp_path: Path) -> Harness:
    write_bids_set(tmp_path, subjects=(1, 2), sessions=(1,), runs=(1,))
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["ds001"]})
    await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    await h.call("cross_validate", WITHIN)
    await h.call("cross_validate", LOSO)
    return h


def _scores_path(folder: Path, subject: str) -> Path:
    import mne_bids

    named = mne_bids.BIDSPath(
        root=folder, subject=subject, session="1", task="imagery", description="crossval",
        datatype="eeg", suffix="scores", extension=".tsv", check=False,
    )  # fmt: skip
    return Path(named.fpath)


async def test_scores_and_statistics_are_written_and_read_back(validated: Harness) -> None:
    import pandas as pd

    text = await validated.call("save_bids_derivatives")
    folder = validated.study.data_dir / DERIV
    assert "wrote 16 file(s)" in text and "desc-crossval_scores.tsv" in text
    desc = json.loads((folder / "dataset_description.json").read_text())
    assert desc["DatasetType"] == "derivative"
    assert desc["GeneratedBy"][0] == {**desc["GeneratedBy"][0], "Name": "brainchat",
                                      "Version": versions()["brainchat"]}  # fmt: skip
    cv = validated.study.state.crossval
    for subject in ("01", "02"):
        path = _scores_path(folder, subject)
        assert path.relative_to(folder).as_posix() == (
            f"sub-{subject}/ses-1/eeg/sub-{subject}_ses-1_task-imagery_desc-crossval_scores.tsv"
        )
        table = pd.read_csv(path, sep="\t", na_values="n/a", dtype={"session": str})
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert list(table.columns) == [c for c in sidecar if c in table.columns]  # described
        assert all("Description" in sidecar[c] for c in table.columns)
        want = [
            (p, r["pipeline"], r["session"], r["fold"], r["score"], r["n_train"], r["n_test"],
             r["balanced_accuracy"], r["kappa"])
            for p, res in cv.items() for r in res["records"] if r["subject"] == subject
        ]  # fmt: skip
        got = list(table[["protocol", "pipeline", "session", "fold", "score", "n_train",
                          "n_test", "balanced_accuracy", "kappa"]].itertuples(index=False,
                                                                         name=None))  # fmt: skip
        assert got == want  # every digit of the study's scores
        # cross_subject: the held-out subject's session is scored as its own (MOABB's way)
        assert set(table[table.protocol == "cross_subject"]["session"]) == {"1"}
        assert set(table["scoring"]) == {"roc_auc"}
        [within, loso] = sidecar["CrossValidations"]
        assert (within["Protocol"], within["Pipelines"], within["Folds"], within["Seed"],
                within["Permutations"]) == ("within_session", ["csp_lda", "ts_lr"], 3, 1, 2)  # fmt: skip
        assert (loso["Protocol"], loso["Folds"]) == ("cross_subject", "leave-one-out")
        for entry, res in ((within, cv["within_session"]), (loso, cv["cross_subject"])):
            for s in res["summaries"]:
                assert entry["ChanceLevel"][s["pipeline"]] == s["chance"]
                assert entry["PValue"][s["pipeline"]] == s["p_value"]
                assert entry["SubjectScore"][s["pipeline"]] == s["per_subject"][subject]
                assert entry["SubjectPValue"][s["pipeline"]] == s["per_subject_p"][subject]
    stats = pd.read_csv(folder / "desc-crossval_stats.tsv", sep="\t", na_values="n/a")
    rows = {(r.protocol, r.pipeline): r for r in stats.itertuples()}
    assert set(rows) == {("within_session", "csp_lda"), ("within_session", "ts_lr"),
                         ("cross_subject", "mdm")}  # fmt: skip
    for protocol, res in cv.items():
        for s in res["summaries"]:
            row = rows[(protocol, s["pipeline"])]
            assert (row.mean, row.chance, row.p_value) == (s["mean"], s["chance"], s["p_value"])
            assert row.n_subjects == 2 and row.permutations == 2
            assert row.balanced_accuracy == s["balanced_accuracy"][0] and row.majority_rate == 0.5
    group = json.loads((folder / "desc-crossval_stats.json").read_text())
    [test] = group["CrossValidations"][0]["WilcoxonSignedRank"]
    assert (test["A"], test["B"], test["Subjects"]) == ("csp_lda", "ts_lr", 2)
    assert test["PValue"] == cv["within_session"]["tests"][0]["p_value"]
    assert sorted(p.name for p in folder.rglob("*_epo.fif")) == [  # the epochs, beside them
        "sub-01_ses-1_task-imagery_desc-brainchat_epo.fif",
        "sub-02_ses-1_task-imagery_desc-brainchat_epo.fif",
    ]


async def test_earlier_scores_are_replaced_only_by_the_tool_that_asks(validated: Harness) -> None:
    await validated.call("save_bids_derivatives")
    folder = validated.study.data_dir / DERIV
    path = _scores_path(folder, "01")
    before = path.read_text()
    await validated.call("cross_validate", {**WITHIN, "seed": 2})  # other folds, other scores
    error = await validated.fails("save_bids_derivatives", {})
    assert "already there" in error and "replace_bids_derivatives" in error
    assert path.read_text() == before
    await validated.call("replace_bids_derivatives")
    table = path.read_text()
    assert table != before and table.count("within_session") == 2 * 3  # 2 pipelines x 3 folds
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert [c["Seed"] for c in sidecar["CrossValidations"]] == [2, 0]


async def test_without_a_cross_validation_no_scores_are_written(tmp_path: Path) -> None:
    write_bids_set(tmp_path, subjects=(1,), sessions=(1,), runs=(1,))
    h = Harness(tmp_path)
    await h.call("load_data", {"files": ["ds001"]})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    await h.call("save_bids_derivatives")
    assert not list((tmp_path / DERIV).rglob("*crossval*"))
