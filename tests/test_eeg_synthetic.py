"""The synthetic generator writes real EDF/FIF files that MNE reads back with the same data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mne
import numpy as np
import pytest

from brainchat.eeg.io.loading import infer_subject_session
from brainchat.eeg.io.synthetic import (
    CHANNELS,
    SFREQ,
    demo_folder,
    main,
    make_recording,
    write_demo_set,
)


@pytest.mark.parametrize("fmt", ["edf", "fif"])
def test_files_read_back_with_the_same_data(tmp_path: Path, fmt: str) -> None:
    paths = write_demo_set(tmp_path, subjects=1, sessions=1, trials=20, fmt=fmt, seed=3)
    original = make_recording(1, 1, trials=20, seed=3)
    read = mne.io.read_raw(paths[0], preload=True, verbose="error")
    assert read.ch_names == CHANNELS and read.info["sfreq"] == SFREQ
    a, b = original.get_data(), read.get_data()
    assert a.shape == b.shape
    span = np.ptp(a)
    # FIF stores float32; EDF stores 16-bit integers over the physical range
    tol = span * (1e-6 if fmt == "fif" else 2.0 / 65535)
    assert np.abs(a - b).max() <= tol
    assert list(read.annotations.description) == list(original.annotations.description)
    np.testing.assert_allclose(read.annotations.onset, original.annotations.onset, atol=1e-3)
    assert set(read.annotations.description) == {"left_hand", "right_hand"}


def test_generator_is_deterministic_and_balanced() -> None:
    a = make_recording(2, 1, trials=30, seed=1)
    b = make_recording(2, 1, trials=30, seed=1)
    assert np.array_equal(a.get_data(), b.get_data())
    desc = list(a.annotations.description)
    assert desc.count("left_hand") == desc.count("right_hand") == 15
    with pytest.raises(ValueError, match="effect_size"):
        make_recording(effect_size=1.5)


def test_main_writes_a_demo_set(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert main(["--out", str(out), "--subjects", "1", "--sessions", "2", "--trials", "10"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]


def test_demo_set_has_one_place_and_rewriting_it_adds_no_subjects(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert demo_folder(data) == data / "demo"  # a fresh data folder: <data>/demo
    write_demo_set(demo_folder(data), subjects=1, sessions=1, trials=10)
    write_demo_set(demo_folder(data), subjects=1, sessions=1, trials=10)  # again: same files
    assert [p.relative_to(data).as_posix() for p in data.rglob("*.edf")] == [
        "demo/sub-01_ses-01_task-mi_eeg.edf"
    ]
    older = tmp_path / "older"  # a set written by an older version straight into the folder
    write_demo_set(older, subjects=1, sessions=1, trials=10)
    assert demo_folder(older) == older  # is rewritten in place, not copied into demo/


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sub-03_ses-02_task-mi_eeg.edf", ("03", "02")),
        ("A07T.gdf", ("07", "T")),
        ("subject5_session1.fif", ("5", "1")),
        ("recording.edf", ("recording", "1")),
    ],
)
def test_subject_and_session_from_names(name: str, expected: tuple[str, str]) -> None:
    assert infer_subject_session(Path(name)) == expected


def test_tools_module_is_light() -> None:
    code = (
        "import sys; from brainchat.eeg.study.study import Study; "
        "from brainchat.eeg.tools.tools import build_eeg_tools; "
        "tools = build_eeg_tools(Study('.')); "
        "heavy = [m for m in ('mne', 'torch', 'matplotlib', 'sklearn') if m in sys.modules]; "
        "print(len(tools), heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, heavy = out.stdout.strip().split(" ", 1)
    assert heavy == "[]", heavy
    assert int(count) >= 20
