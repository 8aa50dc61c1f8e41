"""One user cannot exhaust the machine with uploads (issue #21, 10).

The real app under `chainlit run` with password login, BRAINCHAT_UPLOAD_MAX_MB=20 and
BRAINCHAT_USER_QUOTA_MB=40. Chainlit's own upload route read a whole upload into memory (two
900 MB uploads took the process from 0.93 to 2.78 GB) and checked its size only after reading
all of it; three small zips in one message expanded to 5.4 GB of temporary disk. Here: uploads
sent byte by byte over a socket while the app's peak RSS is read from /proc, zips that expand
past the quota, uploads past the quota, and two uploads of one user checked at once.
"""

from __future__ import annotations

import asyncio
import threading
import zipfile
from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import make_recording, write_raw
from e2e import conftest as e2e
from e2e.conftest import spec
from e2e.sio_client import ChainlitSocket
from security.exhaustion import (
    MB,
    add_accounts,
    chat_as,
    raw_upload,
    reset_peak,
    status_kb,
    upload,
)

pytestmark = pytest.mark.attack
app_factory = e2e.app_factory
model_server = e2e.model_server
PASSWORDS = {name: f"{name}'s long password" for name in ("ana", "bob", "cleo", "dan", "eve")}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def app(model_server, app_factory, home) -> str:
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password", "BRAINCHAT_UPLOAD_MAX_MB": "20",
           "BRAINCHAT_USER_QUOTA_MB": "40"}  # fmt: skip
    add_accounts(PASSWORDS, env, home / "data")
    return str(app_factory(env, home=home))


@pytest.fixture(scope="module")
def edf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ~9 MB EDF recording (22 channels, 112 trials at 250 Hz)."""
    path = tmp_path_factory.mktemp("edf") / "rec.edf"
    write_raw(make_recording(1, 1, trials=112, seed=3), path)
    return path


async def connect(app: str, name: str) -> tuple[ChainlitSocket, str]:
    return await chat_as(app, name, PASSWORDS[name])


def user_files(home: Path, name: str) -> list[Path]:
    return [p for p in (home / "data" / "users" / name).rglob("*") if p.is_file()]


async def test_an_upload_over_the_limit_is_refused_while_it_streams(app, app_factory):
    """60 MB without a Content-Length against a 20 MB limit: the server stops reading near the
    limit and answers 413; the process never holds the upload in memory."""
    client, cookie = await connect(app, "ana")
    pid = app_factory.pid(app)
    base = reset_peak(pid)
    status, text, sent = await asyncio.to_thread(
        raw_upload, app, cookie, client.session_id, 60 * MB, chunked=True
    )
    grew = (status_kb(pid, "VmHWM") - base) / 1024
    await client.close()
    assert status == 413, text[-500:]
    assert "20 MB" in text and "BRAINCHAT_UPLOAD_MAX_MB" in text
    assert sent < 40 * MB, f"the server read {sent / MB:.0f} MB before refusing"
    assert grew < 25, f"the app's peak RSS grew by {grew:.0f} MB"


async def test_concurrent_uploads_are_not_held_in_memory(app, app_factory, home):
    """Two 19 MB uploads (under the limit) at once: streamed to disk, not read into memory."""
    client, cookie = await connect(app, "bob")
    pid = app_factory.pid(app)
    base = reset_peak(pid)
    results: list[tuple[int | None, str, int]] = []

    def one(name: str) -> None:
        results.append(
            raw_upload(app, cookie, client.session_id, 19 * MB, chunked=False, name=name)
        )

    threads = [threading.Thread(target=one, args=(f"rec{i}.edf",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    grew = (status_kb(pid, "VmHWM") - base) / 1024
    await client.close()
    assert [r[0] for r in results] == [200, 200], [r[1][-300:] for r in results]
    assert grew < 20, f"the app's peak RSS grew by {grew:.0f} MB for 38 MB of uploads"


def zeros_zip(path: Path, mb: int) -> Path:
    """A small zip whose one 'recording' expands to `mb` MB of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("rec.edf", "w") as f:
            for _ in range(mb):
                f.write(b"\0" * MB)
    return path


async def test_zips_are_refused_before_expanding_past_the_quota(app, home, tmp_path):
    """Three zips of a few kB, each expanding to 35 MB, in one message, against a 40 MB quota:
    the second is refused before it is unpacked past the quota (before: 105 MB unpacked)."""
    client, cookie = await connect(app, "cleo")
    ids = [
        upload(app, cookie, client.session_id, zeros_zip(tmp_path / f"z{i}.zip", 35))
        for i in range(3)
    ]
    await client.send("", files=ids)
    await client.wait_for("Refused `z2.zip`", timeout=120)
    text = client.text()
    await client.close()
    for name in ("z1.zip", "z2.zip"):
        line = text.split(f"Refused `{name}`")[1].split("\\n")[0]
        assert "BRAINCHAT_USER_QUOTA_MB" in line and "40 MB" in line, line
    assert user_files(home, "cleo") == []  # nothing kept, nothing left in staging


def variant(edf: Path, out: Path, n: int) -> Path:
    """The recording with one data sample changed: a different file of the same size."""
    data = bytearray(edf.read_bytes())
    data[-2:] = n.to_bytes(2, "little", signed=True)
    out.write_bytes(bytes(data))
    return out


async def test_uploads_past_the_quota_are_refused(app, home, edf, tmp_path):
    """~9 MB recordings against a 40 MB quota: files waiting to be sent count, files kept in
    the data folder count, and the upload that would pass the quota is refused at once."""
    client, cookie = await connect(app, "dan")
    files = [variant(edf, tmp_path / f"rec{i}.edf", i) for i in range(5)]
    ids = [upload(app, cookie, client.session_id, f) for f in files[:4]]
    status, text, _ = raw_upload(
        app, cookie, client.session_id, files[4].stat().st_size, chunked=False, name="rec4.edf"
    )
    assert status == 413 and "BRAINCHAT_USER_QUOTA_MB" in text, text[-300:]
    await client.send("", files=ids)
    await client.wait_for("Uploaded `uploads/rec3.edf`", timeout=180)
    kept = sum(p.stat().st_size for p in user_files(home, "dan"))
    assert 4 * 8 * MB < kept <= 40 * MB
    status, text, _ = raw_upload(
        app, cookie, client.session_id, files[4].stat().st_size, chunked=False, name="rec4.edf"
    )
    await client.close()
    assert status == 413 and "40 MB" in text and "BRAINCHAT_USER_QUOTA_MB" in text, text[-300:]


async def test_one_upload_of_a_user_is_checked_at_a_time(app, home, edf, tmp_path):
    """Two tabs of one user send uploads at once: the second is told to wait, nothing of it
    kept; the first is checked and kept."""
    first, cookie = await connect(app, "eve")
    second, cookie2 = await connect(app, "eve")
    small = tmp_path / "small.edf"
    write_raw(make_recording(1, 1, trials=4, seed=4), small)
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as zf:  # 30 recordings: seconds of MNE checks
        for i in range(30):
            zf.writestr(f"s{i}.edf", variant(small, tmp_path / "v.edf", i).read_bytes())
    one = upload(app, cookie, first.session_id, many)
    two = upload(app, cookie2, second.session_id, variant(edf, tmp_path / "late.edf", 99))
    await first.send("", files=[one])
    await first.wait_for("checking 1 file", timeout=60)
    await second.send("", files=[two])
    await second.wait_for("being checked", timeout=60)
    await first.wait_for("30 accepted", timeout=300)
    await first.close()
    await second.close()
    assert "wait until it has finished" in second.text()
    names = {p.name for p in user_files(home, "eve")} - {".index.json"}  # the uploads index
    assert "late.edf" not in names and len(names) == 30
