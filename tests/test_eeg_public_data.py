"""fetch_dataset: public data sets by name into the data folder. MOABB's FakeDataset through the
real tool (no network), and OpenNeuro against a local mirror of its S3 bucket (http.server on
127.0.0.1, set as the operator's BRAINCHAT_OPENNEURO_URL) that serves a small BIDS set written
here, counts every request, and can cut a file's connection, lie about sizes or list hostile keys."""

from __future__ import annotations

import hashlib
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

import pytest
from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.io.public import moabb_fetch
from brainchat.eeg.io.public.download import PART, Room
from brainchat.eeg.io.public.openneuro import fetch_openneuro
from brainchat.eeg.tools.fetch_tool import FetchArgs
from test_export import Harness as ExportHarness

ACC = "ds000042"
BUCKET = "openneuro.org"
EDF_01 = f"{ACC}/sub-01/eeg/sub-01_task-mi_eeg.edf"


def write_bids(root: Path) -> None:
    """Two subjects of motor imagery as a BIDS data set (EDF, events.tsv, sidecars), plus files
    the fetch leaves out (derivatives/, a hidden file) and a CHANGES naming version 1.0.1."""
    from mne_bids import BIDSPath, write_raw_bids

    from brainchat.eeg.io.synthetic import make_recording

    for subject in (1, 2):
        raw = make_recording(subject=subject, trials=8, seed=subject)
        raw.pick(raw.ch_names[:8])
        path = BIDSPath(subject=f"{subject:02d}", task="mi", datatype="eeg", root=root)
        write_raw_bids(raw, path, format="EDF", allow_preload=True, overwrite=True, verbose="error")
    (root / "CHANGES").write_text("1.0.1 2024-05-01\n  - fixed events\n1.0.0 2023-01-01\n")
    (root / "derivatives" / "x").mkdir(parents=True)
    (root / "derivatives" / "x" / "big.txt").write_text("derived\n")
    (root / ".bidsignore").write_text("*.txt\n")


class Mirror:
    """The bucket's behaviour the fetch relies on; `log` holds (path, Range header) per GET."""

    def __init__(self, store: Path) -> None:
        self.store, self.log = store, []
        self.page = 4  # keys per listing page: the fetch must follow continuation tokens
        self.cut: dict[str, int] = {}  # key -> how many more GETs of it are cut halfway
        self.extra: list[tuple[str, int]] = []  # listed keys that are not files
        self.sizes: dict[str, int] = {}  # listed sizes that lie
        self.on_get: dict[str, Any] = {}  # key -> called when a GET of it arrives
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_port}/{BUCKET}"

    def keys(self, prefix: str) -> list[tuple[str, int, str]]:
        out = []
        for path in sorted(self.store.rglob("*")):
            key = path.relative_to(self.store).as_posix()
            if path.is_file() and key.startswith(prefix):
                data = path.read_bytes()
                out.append((key, self.sizes.get(key, len(data)), hashlib.md5(data).hexdigest()))
        return out + [(k, s, "0" * 32) for k, s in self.extra if k.startswith(prefix)]

    def gets(self, key: str) -> list[str | None]:
        return [rng for path, rng in self.log if path == f"/{BUCKET}/{key}"]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urlparse(self.path)
                mirror.log.append((url.path, self.headers.get("Range")))
                if url.path == f"/{BUCKET}":
                    return self._list(parse_qs(url.query))
                key = url.path.removeprefix(f"/{BUCKET}/")
                mirror.on_get.get(key, lambda: None)()
                path = mirror.store / key
                if not path.is_file():
                    return self._send(404, b"<Error><Code>NoSuchKey</Code></Error>")
                self._file(key, path.read_bytes())

            def _list(self, query: dict[str, list[str]]) -> None:
                keys = mirror.keys(query["prefix"][0])
                start = int(query.get("continuation-token", ["0"])[0])
                page = keys[start : start + mirror.page]
                more = start + mirror.page < len(keys)
                items = "".join(
                    f"<Contents><Key>{escape(k)}</Key><ETag>&quot;{m}&quot;</ETag>"
                    f"<Size>{s}</Size></Contents>"
                    for k, s, m in page
                )
                token = f"<NextContinuationToken>{start + mirror.page}</NextContinuationToken>"
                body = (
                    '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult '
                    'xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                    f"<Name>{BUCKET}</Name><KeyCount>{len(page)}</KeyCount>"
                    f"<IsTruncated>{str(more).lower()}</IsTruncated>{token if more else ''}"
                    f"{items}</ListBucketResult>"
                )
                self._send(200, body.encode())

            def _file(self, key: str, data: bytes) -> None:
                start = int(self.headers.get("Range", "bytes=0-")[6:].split("-")[0])
                part = data[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(part)))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if mirror.cut.get(key, 0) > 0:  # half the bytes, then the connection drops
                    mirror.cut[key] -= 1
                    self.wfile.write(part[: len(part) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(part)

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bucket")
    write_bids(root / ACC)
    return root


@pytest.fixture
def mirror(store: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    m = Mirror(store)
    monkeypatch.setenv("BRAINCHAT_OPENNEURO_URL", m.base)
    monkeypatch.setenv("BRAINCHAT_USER_QUOTA_MB", "0")
    yield m
    m.server.shutdown()
    m.server.server_close()


class Harness(ExportHarness):
    """The study's tools by name and the events they emit, with the progress fractions."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(None, data_dir)

    def fractions(self) -> list[float]:
        return [e.fraction for e in self.events if isinstance(e, events.ToolProgress)]


def data_files(mirror: Mirror) -> list[str]:
    """The GETs of data files (not listings)."""
    return [p for p, _ in mirror.log if p != f"/{BUCKET}"]


async def test_openneuro_set_is_fetched_with_progress_then_cached_and_loads(mirror, tmp_path):
    h = Harness(tmp_path)
    text = await h.call("fetch_dataset", {"dataset": ACC})
    assert f"fetched OpenNeuro {ACC}" in text and "2 of 2 subject(s)" in text
    assert f"load_data(files=['public/openneuro/{ACC}'])" in text
    root = tmp_path / "public" / "openneuro" / ACC
    for key, _size, _md5 in mirror.keys(f"{ACC}/"):
        rel = key.removeprefix(f"{ACC}/")
        left_out = rel.startswith(("derivatives/", "."))
        assert (root / rel).is_file() != left_out, rel
        if not left_out:
            assert (root / rel).read_bytes() == (mirror.store / key).read_bytes()
    assert len([p for p, _ in mirror.log if p == f"/{BUCKET}"]) >= 3  # pages followed
    fractions = h.fractions()
    assert fractions and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("MB/s" in e.message for e in h.events if isinstance(e, events.ToolProgress))

    before = len(data_files(mirror))
    again = await h.call("fetch_dataset", {"dataset": ACC, "subjects": ["01", "02"]})
    assert "nothing downloaded (cached)" in again
    assert len(data_files(mirror)) == before  # the listing only: no data file fetched again

    listed = await h.call("list_data_files", {})
    assert f"public/openneuro/{ACC}/ (BIDS dataset" in listed and "2 subject(s)" in listed
    loaded = await h.call("load_data", {"files": [f"public/openneuro/{ACC}"], "subjects": ["02"]})
    assert "sub-02_task-mi_eeg.edf" in loaded
    labels = set(h.study.state.raws[0].annotations.description)
    assert {"left_hand", "right_hand"} <= labels


async def test_one_subject_and_its_version(mirror, tmp_path):
    h = Harness(tmp_path)
    text = await h.call("fetch_dataset", {"dataset": ACC, "subjects": "sub-02", "version": "1.0.1"})
    assert "1 of 2 subject(s)" in text
    root = tmp_path / "public" / "openneuro" / ACC
    assert (root / "sub-02").is_dir() and not (root / "sub-01").exists()
    assert (root / "participants.tsv").is_file()
    with pytest.raises(ToolException, match=r"only the latest snapshot .*1\.0\.1.*not 1\.0\.0"):
        await h.call("fetch_dataset", {"dataset": ACC, "version": "1.0.0"})
    with pytest.raises(ToolException, match="has no subject 07; its subjects: 01, 02"):
        await h.call("fetch_dataset", {"dataset": ACC, "subjects": ["07"]})


async def test_a_broken_connection_is_resumed_by_range_and_the_file_is_identical(mirror, tmp_path):
    h = Harness(tmp_path)
    mirror.cut[EDF_01] = 3  # the first try and both resumes within the call break
    with pytest.raises(ToolException, match="connection broke .* partial file is kept"):
        await h.call("fetch_dataset", {"dataset": ACC, "subjects": ["01"]})
    dest = tmp_path / "public" / "openneuro" / ACC / "sub-01" / "eeg" / "sub-01_task-mi_eeg.edf"
    part = dest.with_name(dest.name + PART)
    kept = part.stat().st_size
    whole = (mirror.store / EDF_01).read_bytes()
    assert 0 < kept < len(whole) and not dest.exists()
    assert [r is None for r in mirror.gets(EDF_01)] == [True, False, False]  # resumed in-call

    text = await h.call("fetch_dataset", {"dataset": ACC, "subjects": ["01"]})
    assert "fetched OpenNeuro" in text
    assert mirror.gets(EDF_01)[-1] == f"bytes={kept}-"  # where the partial file ended
    assert dest.read_bytes() == whole and not part.exists()


def test_stop_ends_the_download_between_chunks_and_keeps_the_partial_file(mirror, tmp_path):
    stop = threading.Event()
    mirror.on_get[EDF_01] = stop.set  # the user presses Stop as the recording starts arriving
    args = (tmp_path, ACC, ["01"], None, Room(), mirror.base)
    text = fetch_openneuro(*args, lambda *a: None, stop)
    assert text.startswith("stopped: ") and "next fetch_dataset call resumes it" in text
    parts = list((tmp_path / "public").rglob(f"*{PART}"))
    whole = (mirror.store / EDF_01).read_bytes()
    assert len(parts) == 1 and 0 < parts[0].stat().st_size < len(whole)
    kept = parts[0].stat().st_size
    mirror.on_get.clear()
    done = fetch_openneuro(*args, lambda *a: None, threading.Event())
    assert "fetched OpenNeuro" in done and not list((tmp_path / "public").rglob(f"*{PART}"))
    assert mirror.gets(EDF_01) == [None, f"bytes={kept}-"]
    assert parts[0].with_name(parts[0].name.removesuffix(PART)).read_bytes() == whole


@pytest.mark.attack
async def test_a_hostile_listing_with_keys_out_of_the_folder_is_refused(mirror, tmp_path):
    h = Harness(tmp_path / "data")
    for key in (f"{ACC}/../../evil.txt", f"{ACC}/sub-01/../../../evil.txt", f"{ACC}//etc/x"):
        mirror.extra = [(key, 10)]
        with pytest.raises(ToolException, match="refused: the listing .* nothing was downloaded"):
            await h.call("fetch_dataset", {"dataset": ACC})
    assert data_files(mirror) == []
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "data" / "public").exists()


async def test_sizes_past_free_disk_or_the_quota_are_refused_before_any_byte(
    mirror, tmp_path, monkeypatch
):
    h = Harness(tmp_path)
    mirror.sizes[EDF_01] = 10**15  # a petabyte: no disk here holds it
    with pytest.raises(
        ToolException, match=r"needs 95[\d,.]+ MB but the disk .* has [\d,.]+ MB free"
    ):
        await h.call("fetch_dataset", {"dataset": ACC})
    mirror.sizes.clear()
    monkeypatch.setenv("BRAINCHAT_USER_QUOTA_MB", "1")  # the set is ~1.2 MB
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "held.bin").write_bytes(b"\0" * 600_000)  # counted by the quota
    with pytest.raises(
        ToolException, match=r"needs [\d.]+ MB but your disk quota of 1 MB leaves 0\.4 MB"
    ):
        await h.call("fetch_dataset", {"dataset": ACC})
    assert data_files(mirror) == [] and not (tmp_path / "public").exists()


async def test_unknown_accession_offline_and_bad_names(mirror, tmp_path, monkeypatch):
    h = Harness(tmp_path)
    with pytest.raises(ToolException, match="OpenNeuro has no data set ds999999"):
        await h.call("fetch_dataset", {"dataset": "ds999999"})
    monkeypatch.setenv("BRAINCHAT_OPENNEURO_URL", mirror.base.replace(BUCKET, "no-bucket"))
    with pytest.raises(ToolException, match=f"OpenNeuro has no data set {ACC}"):  # HTTP 404
        await h.call("fetch_dataset", {"dataset": ACC})
    with socket.socket() as s:  # a port nothing listens on: what no network looks like
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("BRAINCHAT_OPENNEURO_URL", f"http://127.0.0.1:{closed}/{BUCKET}")
    with pytest.raises(ToolException, match=rf"cannot reach 127.0.0.1:{closed}: no network\? "
                       r"Copy the data set into the data folder instead"):  # fmt: skip
        await h.call("fetch_dataset", {"dataset": ACC})
    with pytest.raises(ToolException, match="not an OpenNeuro accession: ds and exactly 6"):
        await h.call("fetch_dataset", {"dataset": "ds00004"})
    for bad in ("../etc", "/etc/passwd", f"{ACC}/../x", "BNCI2014_001/..", "a b",
                "Fake\x00", "..", "~root"):  # fmt: skip
        with pytest.raises(ToolException, match="is not a data set name"):
            await h.call("fetch_dataset", {"dataset": bad})
    with pytest.raises(ToolException, match="Did you mean BNCI2014_001"):
        await h.call("fetch_dataset", {"dataset": "BNCI2014_01"})
    with pytest.raises(ToolException, match="not a BIDS subject label"):
        await h.call("fetch_dataset", {"dataset": ACC, "subjects": ["../01"]})
    assert not (tmp_path / "public").exists()


@pytest.mark.attack
async def test_the_model_cannot_point_the_fetch_at_another_host(mirror, tmp_path):
    assert set(FetchArgs.model_fields) == {"dataset", "subjects", "sessions", "paradigm", "version"}
    h = Harness(tmp_path)
    text = await h.call("fetch_dataset", {"dataset": ACC, "subjects": ["02"],
                                          "openneuro_url": "http://169.254.169.254/x",
                                          "base_url": "http://169.254.169.254/x"})  # fmt: skip
    assert "fetched OpenNeuro" in text and data_files(mirror)  # from the operator's mirror


async def test_fake_moabb_set_is_written_as_fif_and_loads_with_its_classes(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINCHAT_USER_QUOTA_MB", "0")
    h = Harness(tmp_path)
    text = await h.call("fetch_dataset", {"dataset": "fakedataset", "subjects": [1, 2]})
    assert "fetched MOABB FakeDataset" in text and "8 FIF recording(s)" in text
    assert "classes as annotations: feet, left_hand, right_hand" in text
    root = tmp_path / "public" / "moabb" / "FakeDataset"
    fif = root / "sub-02" / "ses-1" / "eeg" / "sub-02_ses-1_task-imagery_run-1_eeg.fif"
    assert fif.is_file() and (root / "dataset_description.json").is_file()
    assert h.fractions()[-1] == 1.0
    assert "nothing downloaded (cached)" in await h.call(
        "fetch_dataset", {"dataset": "FakeDataset", "subjects": ["2"], "sessions": ["1"]}
    )
    listed = await h.call("list_data_files", {})
    assert "public/moabb/FakeDataset/ (BIDS dataset" in listed and "2 subject(s)" in listed
    await h.call("load_data", {"files": ["public/moabb/FakeDataset"], "subjects": ["02"],
                               "sessions": ["0"]})  # fmt: skip
    state = h.study.state
    assert [Path(r.name).name for r in state.recordings] == [
        "sub-02_ses-0_task-imagery_run-0_eeg.fif", "sub-02_ses-0_task-imagery_run-1_eeg.fif"
    ]  # fmt: skip
    import mne

    raw = mne.io.read_raw_fif(fif, verbose="error")
    assert raw.get_channel_types() == ["eeg"] * 3  # the stim channel dropped
    assert set(state.raws[0].annotations.description) == {"left_hand", "right_hand", "feet"}
    counts = {d: list(state.raws[0].annotations.description).count(d) for d in ("feet",)}
    assert counts["feet"] == 8  # 24 events a run, the three classes in turn


async def test_moabb_absent_offline_and_over_quota(tmp_path, monkeypatch):
    h = Harness(tmp_path)
    monkeypatch.setenv("BRAINCHAT_USER_QUOTA_MB", "1")  # FakeDataset's 10 subjects: ~20 MB
    with pytest.raises(ToolException, match=r"needs 20\.0 MB but your disk quota of 1 MB"):
        await h.call("fetch_dataset", {"dataset": "FakeDataset"})
    monkeypatch.setenv("BRAINCHAT_USER_QUOTA_MB", "0")
    monkeypatch.setitem(sys.modules, "moabb.datasets", None)  # as if not installed
    with pytest.raises(ToolException, match=r"MOABB is not installed: pip install moabb"):
        await h.call("fetch_dataset", {"dataset": "BNCI2014_001", "subjects": [1]})
    monkeypatch.undo()
    monkeypatch.setenv("BRAINCHAT_USER_QUOTA_MB", "0")

    class Unreachable:
        def get_data(self, subjects: list[int]) -> dict:
            import requests

            raise requests.exceptions.ConnectionError("Failed to resolve 'bnci-horizon-2020.eu'")

    monkeypatch.setattr(moabb_fetch, "_dataset", lambda entry, paradigm: Unreachable())
    with pytest.raises(ToolException, match="cannot reach the host MOABB downloads BNCI2014_001 "
                       "from: no network\\? Copy the data set into the data folder instead"):  # fmt: skip
        await h.call("fetch_dataset", {"dataset": "BNCI2014_001", "subjects": [1]})
    with pytest.raises(ToolException, match="BNCI2014_001 has subjects 1 to 9; not 10"):
        await h.call("fetch_dataset", {"dataset": "BNCI2014_001", "subjects": [10]})
    with pytest.raises(ToolException, match="is a imagery data set, not p300"):
        await h.call("fetch_dataset", {"dataset": "BNCI2014_001", "paradigm": "p300"})


def test_a_kernel_gets_the_labs_proxy_and_the_quota_counts_fetched_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from brainchat.eeg.kernel.launcher import kernel_env
    from brainchat.eeg.uploads.quota import used_bytes

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.lab:3128")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/lab-ca.pem")
    env = kernel_env()
    assert env["HTTPS_PROXY"] == "http://proxy.lab:3128" and env["SSL_CERT_FILE"]
    fetched = tmp_path / "public" / "openneuro" / "ds000001" / "sub-01"
    fetched.mkdir(parents=True)
    (fetched / "x_eeg.edf").write_bytes(b"0" * 1000)
    assert used_bytes(tmp_path) == 1000
