"""One user's recording cannot take the machine's memory while it is checked or loaded (#37).

The real app under `chainlit run` with password login and BRAINCHAT_MAX_OPERATION_MB=20. Before:
an 11.9 MB BrainVision zip whose marker file holds 2.5 M markers took the app from 273 MB to
3.1 GB while its upload was checked, and was accepted; a 33 MB BIDS events.tsv took a session to
1.4 GB and its load ran past the time limit; a load's samples were never counted against the
limit that every other operation is held to.
"""

from __future__ import annotations

import asyncio
import zipfile
from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from e2e import conftest as e2e
from e2e.conftest import spec
from e2e.sio_client import ChainlitSocket
from security.exhaustion import add_accounts, chat_as, reset_peak, status_kb, upload

pytestmark = pytest.mark.attack
app_factory = e2e.app_factory
model_server = e2e.model_server
PASSWORDS = {name: f"{name}'s long password" for name in ("ana", "bob", "cleo")}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def app(model_server, app_factory, home) -> str:
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password", "BRAINCHAT_MAX_OPERATION_MB": "20"}  # fmt: skip
    add_accounts(PASSWORDS, env, home / "data")
    return str(app_factory(env, home=home))


async def connect(app: str, name: str) -> tuple[ChainlitSocket, str]:
    return await chat_as(app, name, PASSWORDS[name])


def marker_zip(folder: Path, markers: int) -> Path:
    """A real BrainVision set (pybv writes it) whose marker file holds `markers` markers more,
    zipped: 2.5 M markers are ~75 MB of text and ~12 MB zipped, as in the finding."""
    raw = make_recording(1, 1, trials=8).crop(tmax=20, include_tmax=False)
    write_raw(raw, folder / "rec.vhdr")
    lines = "".join(f"Mk{i + 100}=Stimulus,S  1,{i % 5000 + 1},1,0\n" for i in range(markers))
    with (folder / "rec.vmrk").open("a") as f:
        f.write(lines)
    out = folder / "markers.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for ext in ("vhdr", "eeg", "vmrk"):
            zf.write(folder / f"rec.{ext}", f"rec.{ext}")
    return out


async def test_a_marker_flood_is_refused_before_mne_reads_it(app, app_factory, home, tmp_path):
    client, cookie = await connect(app, "ana")
    (tmp_path / "ok").mkdir()
    # a real set first (accepted): the app has imported MNE before its memory is measured
    await client.send(
        "", files=[upload(app, cookie, client.session_id, marker_zip(tmp_path / "ok", 0))]
    )
    await client.wait_for("markers/rec.vhdr", timeout=120)
    pid = app_factory.pid(app)
    base = reset_peak(pid)
    file_id = upload(app, cookie, client.session_id, marker_zip(tmp_path, 2_500_000))
    await client.send("", files=[file_id])
    await client.wait_for("Refused `markers/rec.vhdr`", timeout=120)
    grew = (status_kb(pid, "VmHWM") - base) / 1024
    text = client.text()
    await client.close()
    line = text.split("Refused `markers/rec.vhdr`")[1].split("\\n")[0]
    assert "more than 100,000 markers" in line and "keep the trials' events only" in line, line
    assert grew < 100, f"the app's peak RSS grew by {grew:.0f} MB while the upload was checked"
    assert len(list((home / "data" / "users" / "ana").rglob("*.vmrk"))) == 1  # the first only


def bids_recording(folder: Path, rows: int) -> str:
    """A BIDS dataset of one EDF recording whose events.tsv holds `rows` rows (~33 MB for
    400,000 rows of long trial_type labels); returns the recording's path in the data folder."""
    import mne_bids

    raw = make_recording(1, 1, trials=8)
    raw.info["line_freq"] = 50
    path = mne_bids.BIDSPath(subject="01", session="1", task="mi", datatype="eeg",
                             root=folder / "ds")  # fmt: skip
    mne_bids.write_raw_bids(raw, path, format="EDF", allow_preload=True, verbose="error")
    events = path.copy().update(suffix="events", extension=".tsv").fpath
    label = "left_hand_imagery_" + "x" * 50
    body = "".join(f"{i * 0.004:.3f}\t0.0\t{label}\n" for i in range(rows))
    events.write_text("onset\tduration\ttrial_type\n" + body)
    return str(path.fpath.relative_to(folder))


async def test_a_huge_events_tsv_is_refused_and_the_session_goes_on(
    app, app_factory, home, model_server
):
    """Refused before mne-bids reads it; the next call of the same session answers at once."""
    name = bids_recording(home / "data" / "users" / "bob", 400_000)
    client, _ = await connect(app, "bob")
    pid = app_factory.pid(app)
    base = reset_peak(pid)
    model_server.queue("fc-m", ToolCalls([Call("load_data", {"files": [name]})]),
                       ToolCalls([Call("get_study_state", {})]), Text("Done."),
                       Text("The events file is too big."))  # fmt: skip
    await client.send("load my BIDS recording")
    await client.wait_for("The events file is too big.", timeout=120)
    grew = (status_kb(pid, "VmHWM") - base) / 1024
    await client.close()
    said = "\n".join(str(m.get("content")) for r in model_server.requests_for("fc-m")[-3:]
                     for m in r.messages if m["role"] == "tool")  # fmt: skip
    assert "_events.tsv' is " in said and "over the 16 MB read for one recording's events" in said
    assert "stage: empty" in said or "EEG study: empty" in said  # the next call answered
    assert grew < 150, f"the app's peak RSS grew by {grew:.0f} MB"


async def test_a_load_past_the_operation_limit_is_refused_before_its_samples_are_read(
    app, home, model_server
):
    """Three ~7.5 MB recordings against a 20 MB limit: the third is refused, nothing loaded."""
    folder = home / "data" / "users" / "cleo"
    folder.mkdir(parents=True, exist_ok=True)
    files = [f"rec{i}.edf" for i in range(3)]
    for i, file in enumerate(files):
        write_raw(make_recording(1, i + 1, trials=24, seed=i), folder / file)
    client, _ = await connect(app, "cleo")
    model_server.queue("fc-m", ToolCalls([Call("load_data", {"files": files})]), Text("Done."),
                       Text("Too much to load."))  # fmt: skip
    await client.send("load my three files")
    await client.wait_for("Too much to load.", timeout=120)
    await asyncio.sleep(0)
    await client.close()
    said = "\n".join(str(m.get("content")) for r in model_server.requests_for("fc-m")[-2:]
                     for m in r.messages if m["role"] == "tool")  # fmt: skip
    assert "'rec2.edf' was not loaded: loading 'rec2.edf' with the 2 file(s) before it" in said
    assert "over the limit of 20 MB for one operation (BRAINCHAT_MAX_OPERATION_MB)" in said
    assert "load fewer or shorter files" in said
