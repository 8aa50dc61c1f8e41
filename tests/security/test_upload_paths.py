"""Uploads never write outside the user's uploads folder: hostile zips and names are refused or
made safe, a zip bomb stops at its bound, and a refused upload leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import stat
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.io.loading import read_raw
from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.eeg.uploads.upload_check import Refusal, check_recording
from brainchat.eeg.uploads.uploads import Incoming, UploadLimits, receive


@pytest.fixture(scope="module")
def edf(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("edf") / "sub-01.edf"
    write_raw(make_recording(1, 1, trials=4).crop(tmax=20, include_tmax=False), path)
    return path.read_bytes()


def tree(root: Path) -> list[str]:
    """Every path under root, less the uploads index (where each upload came from, #40)."""
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.name != ".index.json"
    )


def hostile_zip(path: Path, edf: bytes, *entries: zipfile.ZipInfo | str) -> Path:
    """A zip with a good recording first, then the hostile entries."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("good/sub-01.edf", edf)
        for entry in entries:
            zf.writestr(
                entry, edf if str(getattr(entry, "filename", entry)).endswith(".edf") else "x"
            )
    return path


def upload(tmp_path: Path, name: str, path: Path, **limits: int):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    report = receive([Incoming(name, path)], data, UploadLimits(**limits))
    return report, data


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("../../evil.edf", "climbs out of the archive's folder with '..'"),
        ("good/../../../evil.edf", "climbs out of the archive's folder with '..'"),
        ("..\\..\\evil.edf", "climbs out of the archive's folder with '..'"),
        ("/tmp/evil.edf", "is an absolute path"),
        ("C:\\evil.edf", "is an absolute path"),
    ],
)
def test_zip_slip_and_absolute_entries_refuse_the_whole_zip(
    tmp_path: Path, edf: bytes, entry: str, why: str
) -> None:
    before = tree(tmp_path)
    archive = hostile_zip(tmp_path / "evil.zip", edf, entry)
    report, data = upload(tmp_path, "evil.zip", archive)
    (refused,) = report.refused
    assert refused.reason.startswith("zip refused, nothing kept from it: entry")
    assert why in refused.reason and not report.accepted
    assert tree(data) == ["uploads"]  # not even the good recording: the archive is hostile
    assert tree(tmp_path) == sorted([*before, "evil.zip", "data", "data/uploads"])
    assert not Path("/tmp/evil.edf").exists()


def test_a_symlink_entry_refuses_the_whole_zip(tmp_path: Path, edf: bytes) -> None:
    link = zipfile.ZipInfo("good/link.edf")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(tmp_path / "links.zip", "w") as zf:
        zf.writestr("good/sub-01.edf", edf)
        zf.writestr(link, "/etc/passwd")
    report, data = upload(tmp_path, "links.zip", tmp_path / "links.zip")
    assert "entry 'good/link.edf' is a symbolic link" in report.refused[0].reason
    assert tree(data) == ["uploads"]


def test_a_zip_bomb_stops_at_the_unpacked_size_bound(tmp_path: Path, edf: bytes) -> None:
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.edf", edf)
        zf.writestr("b.edf", b"\0" * (12 * 2**20))  # 12 MB of zeros: ~12 KB compressed
    assert (tmp_path / "bomb.zip").stat().st_size < 2**20  # under the 1 MB upload limit itself
    report, data = upload(tmp_path, "bomb.zip", tmp_path / "bomb.zip", max_mb=1)
    assert "it unpacks to more than 4 MB" in report.refused[0].reason
    assert tree(data) == ["uploads"]


def _forge_size(path: Path, name: str, declared: int) -> None:
    """Make `path`'s entry `name` declare `declared` bytes unpacked (local and central header)."""
    data = bytearray(path.read_bytes())
    local = data.index(b"PK\x03\x04")
    while data[local + 30 : local + 30 + len(name)] != name.encode():
        local = data.index(b"PK\x03\x04", local + 4)
    struct.pack_into("<I", data, local + 22, declared)
    central = data.index(b"PK\x01\x02")
    while data[central + 46 : central + 46 + len(name)] != name.encode():
        central = data.index(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", data, central + 24, declared)
    path.write_bytes(bytes(data))


def test_a_zip_bomb_with_a_forged_small_size_is_refused(tmp_path: Path, edf: bytes) -> None:
    """An entry that declares 1 KB but inflates to 12 MB passes the declared-size bound; zipfile
    stops it at the declared size and its CRC fails, so the zip is refused and nothing kept."""
    bomb = tmp_path / "forged.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.edf", edf)
        zf.writestr("b.edf", b"\0" * (12 * 2**20))
    _forge_size(bomb, "b.edf", 1000)
    assert zipfile.ZipFile(bomb).getinfo("b.edf").file_size == 1000
    report, data = upload(tmp_path, "forged.zip", bomb, max_mb=1)
    assert not report.accepted
    (refused,) = report.refused
    assert refused.reason.startswith("zip refused, nothing kept from it: entry 'b.edf' could not")
    assert "Bad CRC-32" in refused.reason
    assert tree(data) == ["uploads"]


def test_too_many_entries_refuse_the_zip(tmp_path: Path, edf: bytes) -> None:
    with zipfile.ZipFile(tmp_path / "many.zip", "w") as zf:
        for i in range(30):
            zf.writestr(f"n{i}.txt", "")
    report, data = upload(tmp_path, "many.zip", tmp_path / "many.zip", zip_entries=20)
    assert "it holds 30 entries, more than the 20 allowed in one zip" in report.refused[0].reason
    assert tree(data) == ["uploads"]


@pytest.mark.parametrize("name", ["../../outside.edf", "/etc/outside.edf", "..\\..\\outside.edf",
                                  "sub/../../outside.edf"])  # fmt: skip
def test_path_parts_in_an_uploaded_name_are_dropped(tmp_path: Path, edf: bytes, name: str) -> None:
    src = tmp_path / "src.edf"
    src.write_bytes(edf)
    report, data = upload(tmp_path, name, src)
    assert [a.name for a in report.accepted] == ["uploads/outside.edf"]
    assert tree(data) == ["uploads", "uploads/outside.edf"]
    assert not (tmp_path / "outside.edf").exists() and not Path("/etc/outside.edf").exists()


def test_a_null_character_in_an_uploaded_name_is_made_safe(tmp_path: Path, edf: bytes) -> None:
    src = tmp_path / "src.edf"
    src.write_bytes(edf)
    report, data = upload(tmp_path, "sub\x00-01.edf", src)
    assert [a.name for a in report.accepted] == ["uploads/sub_-01.edf"]
    assert tree(data) == ["uploads", "uploads/sub_-01.edf"]


def test_an_uploads_folder_linked_outside_the_data_folder_is_refused(
    tmp_path: Path, edf: bytes
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "data").mkdir()
    os.symlink(elsewhere, tmp_path / "data" / "uploads")
    src = tmp_path / "src.edf"
    src.write_bytes(edf)
    report, _ = upload(tmp_path, "sub-01.edf", src)
    assert report.refused[0].reason == "the uploads folder leads outside the data folder"
    assert list(elsewhere.iterdir()) == []


def test_a_file_placed_meanwhile_is_never_replaced(tmp_path: Path, edf: bytes) -> None:
    """Placing links the file in (which fails on an existing name) instead of renaming over it."""
    src = tmp_path / "src.edf"
    src.write_bytes(edf)
    uploads = tmp_path / "data" / "uploads"
    uploads.mkdir(parents=True)
    (uploads / "sub-01.edf").write_bytes(b"placed by hand")
    report, _ = upload(tmp_path, "sub-01.edf", src)
    assert report.accepted[0].name == "uploads/sub-01-2.edf"
    assert (uploads / "sub-01.edf").read_bytes() == b"placed by hand"


def _set_pointing_at(embedded: Path, out: Path, data_name: str, fdt: Path) -> None:
    """An EEGLAB .set whose EEG.data is `data_name`, with its samples written to `fdt`."""
    from scipy.io import loadmat, savemat

    mat = loadmat(embedded, appendmat=False)
    np.asarray(mat["data"], dtype=np.float32).T.tofile(fdt)
    mat = {k: v for k, v in mat.items() if not k.startswith("__")}
    mat["data"] = data_name
    savemat(out, mat, appendmat=False)


@pytest.fixture
def secret_set(tmp_path: Path) -> tuple[Path, Path]:
    """bob's .fdt outside the data folder, and an embedded .set to build hostile sets from."""
    raw = make_recording(1, 1, trials=4).crop(tmax=10, include_tmax=False)
    embedded = tmp_path / "src" / "embedded.set"
    embedded.parent.mkdir()
    write_raw(raw, embedded)
    secret = tmp_path / "bob" / "secret.fdt"
    secret.parent.mkdir()
    return embedded, secret


@pytest.mark.parametrize("how", ["absolute", "climbing", "backslash"])
def test_an_uploaded_set_naming_data_outside_its_folder_is_refused(
    tmp_path: Path, secret_set: tuple[Path, Path], how: str
) -> None:
    embedded, secret = secret_set
    name = {
        "absolute": str(secret),
        "climbing": "../../../bob/secret.fdt",
        "backslash": "..\\..\\..\\bob\\secret.fdt",
    }[how]
    hostile = tmp_path / "src" / "evil.set"
    _set_pointing_at(embedded, hostile, name, secret)
    report, data = upload(tmp_path, "evil.set", hostile)
    assert not report.accepted
    (refused,) = report.refused
    assert "names a data file in another folder" in refused.reason
    assert tree(data) == ["uploads"]


def test_check_recording_refuses_a_header_whose_data_file_is_elsewhere(tmp_path: Path) -> None:
    """The reader's own file list is checked too (here a BrainVision header naming bob's .eeg)."""
    raw = make_recording(1, 1, trials=4).crop(tmax=10, include_tmax=False)
    (tmp_path / "bob").mkdir()
    write_raw(raw, tmp_path / "bob" / "secret.vhdr")
    mine = tmp_path / "mine"
    mine.mkdir()
    header = (tmp_path / "bob" / "secret.vhdr").read_text()
    header = header.replace("DataFile=secret.eeg", f"DataFile={tmp_path / 'bob' / 'secret.eeg'}")
    (mine / "rec.vhdr").write_text(header.replace("MarkerFile=secret.vmrk", "MarkerFile=rec.vmrk"))
    shutil.copyfile(tmp_path / "bob" / "secret.vmrk", mine / "rec.vmrk")
    with pytest.raises(Refusal, match=r"points at data outside its upload \(secret.eeg\)"):
        check_recording(mine / "rec.vhdr")


def test_a_set_placed_by_hand_cannot_load_data_outside_the_data_folder(
    tmp_path: Path, secret_set: tuple[Path, Path]
) -> None:
    embedded, secret = secret_set
    data = tmp_path / "data"
    data.mkdir()
    _set_pointing_at(embedded, data / "evil.set", str(secret), secret)
    with pytest.raises(ToolException, match=r"points at data outside its folder \(secret.fdt\)"):
        read_raw(data / "evil.set")
    (data / "good.fdt").write_bytes(secret.read_bytes())
    _set_pointing_at(embedded, data / "good.set", "good.fdt", data / "good.fdt")
    assert read_raw(data / "good.set").n_times == 2500  # the same data beside it loads


# BrainVision headers naming bob's files: MNE reads the header with configparser (any case,
# spaces and ':' around the delimiter, a [DEFAULT] section, its own Codepage), so each spelling
# below makes MNE open bob's file unless brainchat stops it first.
SPELLINGS = {
    "lower": ("MarkerFile", "markerfile={}"),
    "spaced": ("MarkerFile", "MarkerFile = {}"),
    "colon": ("MarkerFile", "MarkerFile : {}"),
    "upper data": ("DataFile", "DATAFILE={}"),
}
# spellings only a parser that reads as MNE does catches (the upload's rewrite misses them)
HIDDEN = {
    "utf-7": ("MarkerFile", "M+AGE-rkerFile={}"),  # 'a' and each '/' spelled in UTF-7
    "kelvin sign": ("MarkerFile", "Mar\u212aerFile={}"),  # K lower-cases to 'k'
    "default section": ("MarkerFile", "[DEFAULT]\nmarkerfile={}\n\n[Common Infos]"),
}


@pytest.fixture(scope="module")
def bv_sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """bob's BrainVision set (its events relabelled 'bob_private') in his own folder, and
    alice's set 'lower' (pybv writes both) in hers."""
    import re

    root = tmp_path_factory.mktemp("bv")
    raw = make_recording(1, 1, trials=8).crop(tmax=20, include_tmax=False)
    bob, alice = root / "users" / "bob", root / "alice"
    bob.mkdir(parents=True)
    alice.mkdir()
    write_raw(raw, bob / "private.vhdr")
    vmrk = bob / "private.vmrk"
    vmrk.write_text(re.sub(r"Comment,\w+", "Comment,bob_private", vmrk.read_text()))
    write_raw(raw, alice / "lower.vhdr")
    return bob, alice


def hostile_header(alice: Path, bob: Path, spelling: str, how: str, depth: int = 40) -> bytes:
    """alice's header with its DataFile or MarkerFile line pointing at bob's file: by absolute
    path, or by enough '../' to reach the root from any folder it is stored in."""
    key, line = {**SPELLINGS, **HIDDEN}[spelling]
    target = (bob / ("private.vmrk" if key == "MarkerFile" else "private.eeg")).resolve()
    ref = str(target) if how == "absolute" else "../" * depth + str(target).lstrip("/")
    text = (alice / "lower.vhdr").read_text(encoding="utf-8")
    if spelling == "utf-7":
        text = text.replace("Codepage=UTF-8", "Codepage=UTF-7").replace("\u00b5", "u")
        ref = ref.replace("/", "+AC8-")
    own = f"{key}=lower.{'vmrk' if key == 'MarkerFile' else 'eeg'}"
    assert own in text
    if spelling == "default section":
        text = text.replace(own + "\n", "").replace("[Common Infos]", line.format(ref), 1)
    else:
        text = text.replace(own, line.format(ref))
    return text.encode("utf-8")


@pytest.mark.parametrize("how", ["absolute", "climbing"])
@pytest.mark.parametrize("spelling", [*SPELLINGS, *HIDDEN])
def test_an_uploaded_brainvision_header_naming_another_users_file_is_refused(
    tmp_path: Path, bv_sets: tuple[Path, Path], spelling: str, how: str
) -> None:
    bob, alice = bv_sets
    src = tmp_path / "src"
    src.mkdir()
    (src / "lower.vhdr").write_bytes(hostile_header(alice, bob, spelling, how))
    files = [Incoming("lower.vhdr", src / "lower.vhdr")]
    files += [Incoming(f"lower{e}", alice / f"lower{e}") for e in (".eeg", ".vmrk")]
    data = tmp_path / "data"
    report = receive(files, data, UploadLimits())
    assert not report.accepted
    (refused,) = report.refused
    assert refused.name == "lower.vhdr"
    private = (
        "private.vmrk" if {**SPELLINGS, **HIDDEN}[spelling][0] == "MarkerFile" else "private.eeg"
    )
    assert f"at '{private}' in another folder, outside its upload" in refused.reason
    assert "bob_private" not in refused.reason and str(bob) not in refused.reason
    assert tree(data) == ["uploads"]


@pytest.mark.parametrize("how", ["absolute", "climbing"])
@pytest.mark.parametrize("spelling", [*SPELLINGS, *HIDDEN])
def test_the_recording_check_refuses_a_header_naming_a_file_elsewhere_before_mne_opens_it(
    tmp_path: Path, bv_sets: tuple[Path, Path], spelling: str, how: str
) -> None:
    """The check the upload runs after its rewrite: a spelling the rewrite misses still stops
    here, before MNE reads bob's file."""
    bob, alice = bv_sets
    for ext in (".eeg", ".vmrk"):
        shutil.copyfile(alice / f"lower{ext}", tmp_path / f"lower{ext}")
    (tmp_path / "lower.vhdr").write_bytes(hostile_header(alice, bob, spelling, how))
    private = (
        "private.vmrk" if {**SPELLINGS, **HIDDEN}[spelling][0] == "MarkerFile" else "private.eeg"
    )
    with pytest.raises(Refusal, match=rf"points at data outside its upload \({private}\)"):
        check_recording(tmp_path / "lower.vhdr")


@pytest.mark.parametrize("how", ["absolute", "climbing"])
@pytest.mark.parametrize("spelling", [*SPELLINGS, *HIDDEN])
async def test_load_data_refuses_a_header_placed_by_hand_that_names_a_file_elsewhere(
    tmp_path: Path, bv_sets: tuple[Path, Path], spelling: str, how: str
) -> None:
    from brainchat.eeg.study.study import Study
    from brainchat.eeg.tools.tools import build_eeg_tools

    bob, alice = bv_sets
    data = tmp_path / "data"
    data.mkdir()
    for ext in (".eeg", ".vmrk"):
        shutil.copyfile(alice / f"lower{ext}", data / f"lower{ext}")
    (data / "lower.vhdr").write_bytes(hostile_header(alice, bob, spelling, how))
    study = Study(data)
    load = next(t for t in build_eeg_tools(study) if t.name == "load_data")
    private = (
        "private.vmrk" if {**SPELLINGS, **HIDDEN}[spelling][0] == "MarkerFile" else "private.eeg"
    )
    with pytest.raises(
        ToolException, match=rf"'lower.vhdr' points at data outside its folder \({private}\)"
    ):
        await load.ainvoke({"files": ["lower.vhdr"]})
    assert study.state.stage == "empty"


def test_a_brainvision_set_uploads_and_loads_with_its_events_in_any_spelling(
    tmp_path: Path, bv_sets: tuple[Path, Path]
) -> None:
    """A real set (pybv writes it) is accepted and loads with its events; so is one whose
    header spells its own files' keys otherwise, and its stored header names the stored files."""
    _, alice = bv_sets
    src = tmp_path / "src"
    src.mkdir()
    text = (alice / "lower.vhdr").read_text(encoding="utf-8")
    text = text.replace("MarkerFile=lower.vmrk", "markerfile = spaced.vmrk")
    (src / "spaced.vhdr").write_text(
        text.replace("DataFile=lower.eeg", "DATAFILE: spaced.eeg"), encoding="utf-8"
    )
    for ext in (".eeg", ".vmrk"):
        shutil.copyfile(alice / f"lower{ext}", src / f"spaced{ext}")
    files = [Incoming(f"lower{e}", alice / f"lower{e}") for e in (".vhdr", ".eeg", ".vmrk")]
    files += [Incoming(f"spaced{e}", src / f"spaced{e}") for e in (".vhdr", ".eeg", ".vmrk")]
    data = tmp_path / "data"
    report = receive(files, data, UploadLimits())
    assert not report.refused
    assert [a.name for a in report.accepted] == ["uploads/lower.vhdr", "uploads/spaced.vhdr"]
    stored = (data / "uploads" / "spaced.vhdr").read_text(encoding="utf-8")
    assert "DataFile=spaced.eeg\n" in stored and "MarkerFile=spaced.vmrk\n" in stored
    for accepted in report.accepted:
        assert accepted.info.events and set(accepted.info.events) <= {"left_hand", "right_hand"}
        raw = read_raw(data / accepted.name)
        assert sorted(set(raw.annotations.description)) == sorted(accepted.info.events)


def test_a_header_naming_two_marker_files_is_refused_on_upload(
    tmp_path: Path, bv_sets: tuple[Path, Path]
) -> None:
    """MNE takes the one in [Common Infos]; the upload would store both under one name, so a
    header naming two is refused rather than guessed at."""
    _, alice = bv_sets
    src = tmp_path / "src"
    src.mkdir()
    text = (alice / "lower.vhdr").read_text(encoding="utf-8")
    (src / "lower.vhdr").write_text(text + "\n[Other]\nMarkerFile=other.vmrk\n", encoding="utf-8")
    shutil.copyfile(alice / "lower.vmrk", src / "other.vmrk")
    files = [Incoming(n, src / n) for n in ("lower.vhdr", "other.vmrk")]
    files += [Incoming(f"lower{e}", alice / f"lower{e}") for e in (".eeg", ".vmrk")]
    report = receive(files, tmp_path / "data", UploadLimits())
    assert not report.accepted
    reasons = {r.name: r.reason for r in report.refused}
    assert "its BrainVision header names more than one MarkerFile" in reasons["lower.vhdr"]
    assert tree(tmp_path / "data") == ["uploads"]


def test_a_header_in_an_encoding_python_lacks_is_refused_with_the_reason(
    tmp_path: Path, bv_sets: tuple[Path, Path]
) -> None:
    """Its names cannot be read as MNE would read them, so nothing it names is opened."""
    _, alice = bv_sets
    for ext in (".eeg", ".vmrk"):
        shutil.copyfile(alice / f"lower{ext}", tmp_path / f"lower{ext}")
    text = (alice / "lower.vhdr").read_text(encoding="utf-8")
    (tmp_path / "lower.vhdr").write_text(text.replace("Codepage=UTF-8", "Codepage=klingon"))
    reason = "names a text encoding Python does not know \\(Codepage=klingon\\)"
    with pytest.raises(
        ToolException, match=rf"could not read 'lower.vhdr' as VHDR: its .*{reason}"
    ):
        read_raw(tmp_path / "lower.vhdr")
    with pytest.raises(Refusal, match=reason):
        check_recording(tmp_path / "lower.vhdr")
