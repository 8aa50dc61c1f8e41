"""One user's study cannot take the machine's memory (issue #21, 10).

The real app under `chainlit run` with password login and BRAINCHAT_MAX_OPERATION_MB=300; each
user has three real EDF recordings (22 channels at 250 Hz, ~7.5 MB each once loaded) in their
data folder, and the scripted model asks for the tools. Before: `resample_data(10000)` on three
small files took the process past 1 GB, and a session's study stayed in memory after its browser
tab had gone (1 GB held after the disconnect).
"""

from __future__ import annotations

import asyncio

import pytest

from brainchat.eeg.io.synthetic import make_recording, write_raw
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from e2e import conftest as e2e
from e2e.conftest import spec
from e2e.sio_client import ChainlitSocket
from security.exhaustion import add_accounts, login, reset_peak, status_kb

pytestmark = pytest.mark.attack
app_factory = e2e.app_factory
model_server = e2e.model_server
PASSWORDS = {"ana": "ana's long password", "bob": "bob's long password"}
FILES = [f"rec{i}.edf" for i in range(3)]


@pytest.fixture(scope="module")
def app(model_server, app_factory, tmp_path_factory: pytest.TempPathFactory) -> str:
    home = tmp_path_factory.mktemp("home")
    for name in PASSWORDS:
        for i, file in enumerate(FILES):
            folder = home / "data" / "users" / name
            folder.mkdir(parents=True, exist_ok=True)
            write_raw(make_recording(1, i + 1, trials=24, seed=i), folder / file)
    env = {"AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-m"), "DEFAULT_MODE": "agent",
           "BRAINCHAT_AUTH": "password", "BRAINCHAT_MAX_OPERATION_MB": "300"}  # fmt: skip
    add_accounts(PASSWORDS, env, home / "data")
    # the answer turns (one model plays both roles); the tests are about memory, not the answer
    model_server.set_default("fc-m", Text("That is all."))
    return str(app_factory(env, home=home))


async def ask(client: ChainlitSocket, model_server, calls: list[Call], answer: str) -> None:
    model_server.queue("fc-m", ToolCalls(calls), Text(answer))
    await client.send("analyse my files")
    await client.wait_for(answer, timeout=180)


def last_results(model_server) -> str:
    """Every message the model was sent since the test began (tool results among them)."""
    requests = model_server.requests_for("fc-m")
    return "\n".join(str(m.get("content")) for r in requests for m in r.messages)


async def connect(app: str, name: str) -> ChainlitSocket:
    client = ChainlitSocket()
    await client.connect(app, origin=None, cookie=await login(app, name, PASSWORDS[name]))
    await client.start_chat()
    return client


async def test_a_resample_past_the_operation_limit_is_refused(app, app_factory, model_server):
    """resample_data(10000) on three files would need ~1.2 GB: refused before it allocates."""
    client = await connect(app, "ana")
    load = Call("load_data", {"files": FILES})
    await ask(client, model_server, [load], "Loaded the three files.")
    pid = app_factory.pid(app)
    base = reset_peak(pid)
    await ask(client, model_server, [Call("resample_data", {"sfreq": 10000})], "Resampled.")
    grew = (status_kb(pid, "VmHWM") - base) / 1024
    result = last_results(model_server)
    await client.close()
    assert "resampling to 10000 Hz needs about" in result, result
    assert "over the limit of 300 MB for one operation (BRAINCHAT_MAX_OPERATION_MB)" in result
    assert "resample to a lower rate" in result
    assert grew < 300, f"the app's peak RSS grew by {grew:.0f} MB"


async def test_epochs_past_the_operation_limit_are_refused(app, model_server):
    """Epochs of 60 s around each of the 72 events: ~380 MB by the estimate, refused."""
    client = await connect(app, "ana")
    calls = [Call("load_data", {"files": FILES}), Call("epoch_data", {"tmin": 0, "tmax": 60})]
    await ask(client, model_server, calls, "Epoched.")
    result = last_results(model_server)
    await client.close()
    assert "epochs of 60 s around every event needs about" in result, result
    assert "BRAINCHAT_MAX_OPERATION_MB" in result and "use shorter epochs" in result


async def test_a_closed_tab_gives_its_study_memory_back(app, app_factory, model_server):
    """Three files resampled to 2000 Hz (~180 MB, under the limit); the tab closes: the
    process's memory goes back down, without waiting for Chainlit's session timeout (1 h)."""
    client = await connect(app, "bob")
    calls = [Call("load_data", {"files": FILES}), Call("resample_data", {"sfreq": 2000})]
    await ask(client, model_server, calls, "Resampled to 2000 Hz.")
    assert "applied resample 2000 Hz to 3 recording(s)" in last_results(model_server)
    pid = app_factory.pid(app)
    held = tree_kb(pid)  # the app and its study's kernel
    await client.close()
    try:
        async with asyncio.timeout(60):
            while tree_kb(pid) > held - 120 * 1024:
                await asyncio.sleep(0.2)
    except TimeoutError:
        now = tree_kb(pid)
        pytest.fail(f"RSS {held / 1024:.0f} MB with the study, {now / 1024:.0f} MB after")


def tree_kb(pid: int) -> int:
    """The resident memory of a process and its children (a study's kernel is one), in kB."""
    import psutil

    total = status_kb(pid, "VmRSS")
    for child in psutil.Process(pid).children(recursive=True):
        try:
            total += child.memory_info().rss // 1024
        except psutil.NoSuchProcess:
            pass
    return total
