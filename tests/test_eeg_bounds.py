"""What reading one recording may cost (eeg/io/bounds.py): events counted in chunks before MNE
parses them, and a load's samples counted against BRAINCHAT_MAX_OPERATION_MB file by file."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.io import bounds
from brainchat.eeg.io.loading import read_raw
from brainchat.eeg.io.synthetic import make_recording, write_raw


def test_lines_are_counted_across_chunk_ends_and_counting_stops_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bounds, "CHUNK", 7)  # every line straddles a chunk end
    path = tmp_path / "m.vmrk"
    path.write_bytes(b"[Marker Infos]\n" + b"".join(b"Mk%d=Stimulus,S1,%d\n" % (i, i) for i in range(50)) + b"mK51=x")  # fmt: skip
    assert bounds.count_lines(path, b"mk", 1000) == 51  # any case, the last line unterminated
    assert bounds.count_lines(path, b"mk", 10) == 11  # stops one past the bound


def test_a_recording_with_a_marker_flood_in_the_data_folder_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set copied into the data folder (not uploaded) is held to the same bound on loading."""
    monkeypatch.setattr(bounds, "MAX_EVENTS", 20)
    raw = make_recording(1, 1, trials=8).crop(tmax=20, include_tmax=False)
    write_raw(raw, tmp_path / "rec.vhdr")
    assert read_raw(tmp_path / "rec.vhdr").annotations  # 8 trials: under the bound
    with (tmp_path / "rec.vmrk").open("a") as f:
        f.write("".join(f"Mk{i + 100}=Stimulus,S  1,{i + 1},1,0\n" for i in range(30)))
    with pytest.raises(ToolException, match="holds more than 20 markers"):
        read_raw(tmp_path / "rec.vhdr")


def test_the_budget_names_the_file_the_figure_and_the_limit() -> None:
    budget = bounds.Budget(10)
    budget.take("a.edf", 22, 46_000)  # 7.7 MB
    with pytest.raises(bounds.TooBig) as info:
        budget.take("b.edf", 22, 46_000)
    text = str(info.value)
    assert "loading 'b.edf' with the 1 file(s) before it needs about 15 MB" in text
    assert "over the limit of 10 MB for one operation (BRAINCHAT_MAX_OPERATION_MB)" in text
    bounds.Budget(None).take("huge.edf", 10_000, 10**9)  # no limit: nothing refused
