"""The page's "Use a local model" without a browser: what the first screen and the catalog say
about each model (size, memory, licence, fit to this machine), a download's progress line, in
every language, and who may download or start a model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from brainchat import i18n
from brainchat.ui import local_model_view as view

GB = 1_000_000_000


@dataclass(frozen=True)
class Entry:
    """The catalog entry's fields the page reads (brainchat.localmodels.catalog.CatalogModel)."""

    id: str = "small-q4"
    name: str = "Small 1.5B (Q4_K_M)"
    params: str = "1.5B"
    license: str = "Apache-2.0"
    size_bytes: int = 986 * 1_000_000
    ram_bytes: int = 2 * GB


@pytest.fixture(autouse=True)
def _english() -> Iterator[None]:
    i18n.use("en")
    yield
    i18n.use(None)  # back to the resolver: later tests choose their own language


def test_sizes_and_times_read_as_people_read_them() -> None:
    assert view.size(986_000_000) == "986 MB"
    assert view.size(1_120_000_000) == "1.1 GB"
    assert view.size(12_300_000) == "12.3 MB"
    assert view.size(512) == "512 B"
    assert view.duration(12.4) == "12 s"
    assert view.duration(600) == "10 min"
    assert view.duration(None) == "unknown time"


def test_the_offer_names_the_model_its_size_memory_licence_and_fit() -> None:
    text = view.offer_text(Entry(), 24 * GB, present=False)
    for part in (
        "Small 1.5B (Q4_K_M)",
        "1.5B",
        "Apache-2.0",
        "986 MB",
        "2.0 GB",
        "fits",
        "24.0 GB",
    ):
        assert part in text, part
    assert "does not fit" not in text and "already downloaded" not in text
    assert "already downloaded" in view.offer_text(Entry(), 24 * GB, present=True)
    assert "does not fit this machine's 4.0 GB" in view.offer_text(Entry(), 4 * GB, present=False)
    assert "986 MB to download, 2.0 GB" in view.offer_text(Entry(), 24 * GB, present=False)


def test_the_catalog_table_marks_fit_recommendation_and_downloads() -> None:
    big = Entry(id="big", name="Big 7B", params="7B", size_bytes=4 * GB, ram_bytes=8 * GB)
    # the catalog keeps 2 GiB for the app and the system: 2 GB + 2 GiB fit in 8 GB, 8 GB do not
    text = view.catalog_text([Entry(), big], 8 * GB, recommended="small-q4", present={"big"})
    rows = [line for line in text.splitlines() if line.startswith("| ") and "GB" in line]
    assert len(rows) == 2
    assert "fits, recommended" in rows[0] and "does not fit, downloaded" in rows[1]
    assert "This machine has 8.0 GB" in text


def test_progress_shows_bar_percent_bytes_speed_and_time_left() -> None:
    text = view.progress_text("M", 250_000_000, 1_000_000_000, 8_200_000, 95)
    assert "25%" in text and "250 MB of 1.0 GB" in text and "8.2 MB/s" in text
    assert "2 min left" in text
    assert view.bar(0.25) == "█" * 5 + "░" * 15
    assert "25%" not in view.progress_text("M", 250, None, 1000, None)  # no size: no percent


@pytest.mark.parametrize("lang", ["zh-CN", "zh-TW"])
def test_the_flow_speaks_chinese(lang: str) -> None:
    i18n.use(lang)
    text = view.offer_text(Entry(), 24 * GB, present=True)
    assert "Small 1.5B (Q4_K_M)" in text and ("本地" in text or "本機" in text)
    assert "fits" not in text and "downloaded" not in text
    progress = view.progress_text("M", 1, 2, 10, 30)
    assert "50%" in progress and "left" not in progress


def _catalog_file(tmp_path, monkeypatch, entries: list[dict]) -> None:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(entries))
    monkeypatch.setenv("BRAINCHAT_MODELS_CATALOG", str(path))


def _entry(model_id: str, ram: int) -> dict:
    return {"id": model_id, "name": model_id.title(), "repo": "lab/x", "revision": "a" * 40,
            "filename": f"{model_id}.gguf", "sha256": "b" * 64, "size_bytes": ram // 2,
            "params": "1B", "license": "MIT", "ram_bytes": ram, "context": 2048,
            "tool_calling": "prompt", "guidance": "guided"}  # fmt: skip


def test_with_no_model_that_fits_the_smallest_is_offered_as_not_fitting(tmp_path, monkeypatch):
    from brainchat.ui import local_model

    _catalog_file(tmp_path, monkeypatch, [_entry("big", 8 * GB), _entry("small", 1 * GB)])
    assert local_model.recommended(64 * GB).id == "big"  # the largest that fits
    small = local_model.recommended(2 * GB)  # none fits beside the 2 GiB reserve
    assert small.id == "small"
    assert "does not fit" in view.offer_text(small, 2 * GB, present=False)


async def test_a_broken_catalog_leaves_the_first_screen_without_the_offer(tmp_path, monkeypatch):
    from brainchat.ui import local_model

    path = tmp_path / "catalog.json"
    path.write_text("[{not json")
    monkeypatch.setenv("BRAINCHAT_MODELS_CATALOG", str(path))
    assert await local_model.offer() == ("", [])
