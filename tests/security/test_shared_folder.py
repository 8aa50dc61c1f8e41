"""Two app processes started in one folder never delete each other's files (issue #21).

Chainlit keeps uploaded files under `<app root>/.files/` and removed that whole folder when its
process stopped: stopping one of two processes sharing an app root deleted the files the other's
user had just uploaded, and the message that sent them found nothing. Here two real apps run from
the same folder (as every app of this test suite does) with password login; ana uploads a real
EDF file to the second, the first is stopped, and ana's message must still find her file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from brainchat.eeg.io.synthetic import make_recording, write_raw
from e2e import conftest as e2e
from e2e.conftest import ROOT, spec
from e2e.sio_client import ChainlitSocket
from security.exhaustion import add_accounts, login, upload

pytestmark = pytest.mark.attack
app_factory = e2e.app_factory
model_server = e2e.model_server
PASSWORD = "ana's long password"


def start(model_server, app_factory, home: Path) -> str:
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password"}  # fmt: skip
    add_accounts({"ana": PASSWORD}, env, home / "data")
    return str(app_factory(env, home=home))


async def test_stopping_one_process_keeps_the_other_ones_uploads(
    model_server, app_factory, tmp_path_factory
):
    first = start(model_server, app_factory, tmp_path_factory.mktemp("first"))
    second_home = tmp_path_factory.mktemp("second")
    second = start(model_server, app_factory, second_home)
    recording = tmp_path_factory.mktemp("edf") / "rec.edf"
    write_raw(make_recording(1, 1, trials=8, seed=5), recording)
    cookie = await login(second, "ana", PASSWORD)
    client = ChainlitSocket()
    await client.connect(second, origin=None, cookie=cookie)
    await client.start_chat()
    file_id = upload(second, cookie, client.session_id, recording)
    kept = [p for p in (ROOT / ".files").rglob("*") if p.is_file() and p.name.startswith(file_id)]
    assert len(kept) == 1, "the upload is not in the app root's .files folder"

    app_factory.stop(first)  # SIGTERM: Chainlit's shutdown removes its files folder

    assert kept[0].is_file(), "stopping the first process deleted the second one's upload"
    await client.send("", files=[file_id])
    await client.wait_for("accepted", timeout=120)
    await client.close()
    assert "Uploaded `uploads/rec.edf`" in client.text()
    assert (second_home / "data" / "users" / "ana" / "uploads" / "rec.edf").is_file()
