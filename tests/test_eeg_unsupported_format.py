"""A file brainchat cannot read is refused with the formats it can read, so the user (or the
model) knows what to give instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.io.loading import read_raw
from brainchat.eeg.io.paths import SUPPORTED_EXTENSIONS


def test_an_unsupported_format_names_the_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "sub-01_eeg.cnt"
    path.write_bytes(b"not an EEG file MNE reads here")
    with pytest.raises(ToolException) as info:
        read_raw(path)
    text = str(info.value)
    assert "'sub-01_eeg.cnt' has an unsupported format" in text
    assert all(ext in text for ext in SUPPORTED_EXTENSIONS), text
    assert str(tmp_path) not in text  # the name only, never the server's folder
