"""The tests' GDF writer makes files MNE's own reader reads back whole: the GDF tests elsewhere
rest on it, so a wrong header field here would make them prove nothing."""

from __future__ import annotations

from pathlib import Path

import mne
import numpy as np
import pytest

from gdf_writer import write_gdf

NAMES = ["Fz", "C3", "Cz", "C4"]
EVENTS = [(0, 768), (250, 769), (1000, 770), (1999, 1023)]  # BCI IV 2a codes


@pytest.mark.parametrize("version", ["2.20", "2.10", "1.25"])
@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_mne_reads_back_names_rate_samples_data_and_events(
    tmp_path: Path, version: str, dtype: str
) -> None:
    rng = np.random.default_rng(7)
    data = rng.normal(0, 20e-6, (4, 2000)) + np.array([[0], [50e-6], [-80e-6], [0]])
    path = write_gdf(tmp_path / "A01T.gdf", data, 250.0, NAMES, events=EVENTS, version=version,
                     dtype=dtype, record_samples=125)  # fmt: skip
    assert path.read_bytes()[:8] == f"GDF {version}".encode()
    raw = mne.io.read_raw_gdf(path, preload=True, verbose="error")
    assert raw.ch_names == NAMES and raw.info["sfreq"] == 250.0 and raw.n_times == 2000
    # int16: one step of each channel's 16-bit range; float32: float32 precision of microvolts
    step = 2 * np.abs(data).max(axis=1, keepdims=True) / 65535 if dtype == "int16" else 1e-11
    assert (np.abs(raw.get_data() - data) <= step).all()
    assert list(raw.annotations.description) == ["768", "769", "770", "1023"]
    np.testing.assert_allclose(raw.annotations.onset, [0, 1, 4, 1999 / 250])


def test_the_header_states_records_and_their_length_where_the_spec_puts_them(
    tmp_path: Path,
) -> None:
    """Bytes 236-252: record count (int64), record length as numerator/denominator (uint32)."""
    data = np.zeros((2, 1010))  # 8 records of 125 samples and a padded ninth
    head = write_gdf(tmp_path / "x.gdf", data, 250.0, ["C3", "C4"], record_samples=125)
    head_bytes = head.read_bytes()[:256]
    assert int.from_bytes(head_bytes[236:244], "little", signed=True) == 9
    assert (int.from_bytes(head_bytes[244:248], "little"),
            int.from_bytes(head_bytes[248:252], "little")) == (1, 2)  # fmt: skip
    assert int.from_bytes(head_bytes[184:186], "little") == 3  # header blocks: 1 + 2 channels
    raw = mne.io.read_raw_gdf(head, preload=True, verbose="error")
    assert raw.n_times == 9 * 125  # the last record padded with (quantised) zeros
    assert np.abs(raw.get_data()[:, 1010:]).max() < 1e-12
