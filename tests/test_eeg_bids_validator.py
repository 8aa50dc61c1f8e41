"""Written BIDS derivatives pass the BIDS validator (#38): npm's bids-validator, which
scripts/dev.sh installs into .tools/ when npm is there (BIDS_VALIDATOR names another binary).

That validator (1.x, the only one on npm) checks every folder it is given as raw data, and skips
a dataset's derivatives/ folder. So the derivatives folder is validated on its own, its
dataset_description.json against the schema and every file it holds against BIDS' names (the
files BIDS does not define yet are in its .bidsignore, as BIDS asks), with one code ignored:
SUBJECT_FOLDERS, "no sub-* folders with raw data", which any derivative dataset gets from it.
The raw dataset, with the derivatives inside, is validated as well."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_eeg_bids import Harness, write_bids_set

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ROOT / ".tools/bids-validator/node_modules/.bin/bids-validator"
NOT_RAW_DATA = 45  # SUBJECT_FOLDERS: what validator 1.x says of any derivative dataset


def _validator() -> Path:
    named = os.environ.get("BIDS_VALIDATOR")
    path = Path(named) if named else LOCAL
    if not path.is_file():
        pytest.skip(
            f"no BIDS validator at {path}: `bash scripts/dev.sh test` installs npm's "
            "bids-validator there when npm is on PATH (or set BIDS_VALIDATOR)"
        )
    if shutil.which("node") is None:
        pytest.skip("the BIDS validator needs Node.js (node is not on PATH)")
    return path


def _errors(folder: Path, tmp_path: Path, ignore: tuple[int, ...] = ()) -> list[dict]:
    config = tmp_path / "validator-config.json"
    config.write_text(json.dumps({"ignore": list(ignore)}))
    done = subprocess.run(
        [str(_validator()), str(folder), "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    try:
        issues = json.loads(done.stdout)["issues"]
    except (ValueError, KeyError):
        pytest.fail(f"the validator gave no JSON report (rc {done.returncode}): {done.stderr}")
    return [{"code": e["code"], "key": e["key"], "files": e.get("files")} for e in issues["errors"]]


@pytest.fixture
async def dataset(tmp_path: Path) -> Path:
    write_bids_set(tmp_path / "data", subjects=(1, 2), sessions=(1,), runs=(1, 2))
    h = Harness(tmp_path / "data")
    await h.call("load_data", {"files": ["ds001"]})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5, "reject_uv": 72})
    await h.call("split_dataset", {"by": "trial", "seed": 1})
    await h.call("train_model", {"model": "csp_lda"})
    await h.call("save_bids_derivatives")
    return tmp_path / "data/ds001"


async def test_written_derivatives_pass_the_bids_validator(dataset: Path, tmp_path: Path) -> None:
    derivatives = dataset / "derivatives/brainchat"
    assert list(derivatives.rglob("*_trials.tsv"))
    assert _errors(derivatives, tmp_path, ignore=(NOT_RAW_DATA,)) == []
    assert _errors(dataset, tmp_path) == []


async def test_the_validator_catches_a_source_dataset_that_is_not_a_uri(
    dataset: Path, tmp_path: Path
) -> None:
    """The check above is not empty: the URL brainchat wrote before #38 fails it."""
    derivatives = dataset / "derivatives/brainchat"
    description = derivatives / "dataset_description.json"
    data = json.loads(description.read_text())
    data["SourceDatasets"] = [{"URL": "../../"}]
    description.write_text(json.dumps(data))
    errors = _errors(derivatives, tmp_path, ignore=(NOT_RAW_DATA,))
    assert [e["key"] for e in errors] == ["JSON_SCHEMA_VALIDATION_ERROR"]
