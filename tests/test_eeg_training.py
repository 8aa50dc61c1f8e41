"""Decoders on the demo data: accuracy bars, every model trains, cancellation, device choice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools

from support import wait_until

# Two classes: chance is 0.5. Bar: 0.75 on the held-out test set (demo effect size 0.4).
ACCURACY_BAR = 0.75


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mi")
    write_demo_set(root, subjects=1, sessions=2, trials=120, seed=0)  # demo defaults, fewer trials
    return root


async def prepared(data_dir: Path) -> tuple[Study, dict, list]:
    study = Study(data_dir)
    tools = {t.name: t for t in build_eeg_tools(study)}
    got: list[events.Event] = []
    events._sink.set(got.append)
    files = edf_names(data_dir)
    await tools["load_data"].ainvoke({"files": files})
    await tools["bandpass_filter"].ainvoke({"l_freq": 8, "h_freq": 30})
    await tools["resample_data"].ainvoke({"sfreq": 125})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    await tools["split_dataset"].ainvoke({"by": "trial", "test_ratio": 0.25, "val_ratio": 0.15})
    return study, tools, got


@pytest.mark.slow  # trains models
async def test_eegnet_and_csp_lda_beat_chance(data_dir: Path) -> None:
    study, tools, got = await prepared(data_dir)
    events.set_tool_call("t1", "train_model")
    await tools["train_model"].ainvoke({"model": "eegnet", "epochs": 30, "seed": 0})
    await tools["train_model"].ainvoke({"model": "csp_lda"})
    events.set_tool_call("t2", "evaluate_model")
    for name in ("eegnet", "csp_lda"):
        await tools["evaluate_model"].ainvoke({"model": name})
    acc = {k: v["accuracy"] for k, v in study.state.results.items()}
    print("test accuracy:", acc)
    assert acc["eegnet"] >= ACCURACY_BAR and acc["csp_lda"] >= ACCURACY_BAR
    progress = [
        e
        for e in got
        if isinstance(e, events.ToolProgress) and e.call_id == "t1" and e.data.get("epoch")
    ]  # the epochs' progress (before them: the phases, tests/test_progress_phases.py)
    assert len(progress) == 31  # 30 EEGNet epochs + 1 CSP fit
    assert {"loss", "acc", "elapsed", "eta", "val_acc"} <= set(progress[0].data)
    assert progress[29].fraction == 1.0 and "epoch 30/30" in progress[29].message


@pytest.mark.slow  # trains models
@pytest.mark.parametrize("model", ["shallowconvnet", "sccnet", "eegnet"])
async def test_every_network_trains_and_evaluates(data_dir: Path, model: str) -> None:
    study, tools, _ = await prepared(data_dir)
    text = await tools["train_model"].ainvoke(
        {"model": model, "epochs": 2, "optimizer": "adamw", "device": "cpu"}
    )
    assert f"trained '{model}' on cpu" in text
    text = await tools["evaluate_model"].ainvoke({})
    assert "balanced" in text and "image: " in text and study.stage == "trained"


async def test_cancel_mid_training_leaves_the_study_unchanged(data_dir: Path) -> None:
    study, tools, got = await prepared(data_dir)
    before = (study.state, study.summary())
    events.set_tool_call("t3", "train_model")
    task = asyncio.create_task(tools["train_model"].ainvoke({"model": "eegnet", "epochs": 500}))
    await wait_until(lambda: any(isinstance(e, events.ToolProgress) for e in got))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 60)
    # the cancel returns at once; the thread stops at its next batch, and says nothing more
    seen = len(got)
    for _ in range(5):
        await asyncio.sleep(0)  # let progress already queued from the thread arrive
    assert len(got) == seen  # and nothing more comes after the cancel
    assert (study.state, study.summary()) == before and study.stage == "split"
    # the study still works after a cancel
    assert "trained 'csp_lda'" in await tools["train_model"].ainvoke({"model": "csp_lda"})


@pytest.mark.slow  # trains models
async def test_two_studies_training_at_once_each_get_what_their_seed_promises(
    data_dir: Path,
) -> None:
    """PyTorch's random generator is one per process: two sessions training at the same time
    must still each get the model their seed gives alone (the export's promise)."""
    args = {"model": "eegnet", "epochs": 3, "seed": 5, "device": "cpu"}
    alone, tools, _ = await prepared(data_dir)
    await tools["train_model"].ainvoke(args)
    expected = alone.state.models["eegnet"].predictor.predict_proba(alone.state.eps.X[:16])
    pairs = [await prepared(data_dir) for _ in range(2)]
    await asyncio.gather(*(t["train_model"].ainvoke(args) for _, t, _ in pairs))
    for study, _, _ in pairs:
        got = study.state.models["eegnet"].predictor.predict_proba(study.state.eps.X[:16])
        assert np.array_equal(got, expected)


async def test_device_choice(data_dir: Path) -> None:
    import torch

    from brainchat.eeg.decoding.training import select_device

    assert select_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        study, tools, _ = await prepared(data_dir)
        with pytest.raises(ToolException, match="no CUDA GPU"):
            await tools["train_model"].ainvoke({"model": "eegnet", "device": "cuda"})
        assert study.stage == "split"


def edf_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.edf"))


async def test_a_training_that_waits_for_another_sessions_says_so(data_dir: Path) -> None:
    """Seeded trainings take turns per process: the one that waits tells its user why nothing
    moves, through the training's own progress, before its first epoch."""
    from brainchat.eeg.decoding import seeded
    from brainchat.eeg.decoding.decoding import WAITING

    _, tools, got = await prepared(data_dir)
    events.set_tool_call("train-w", "train_model")
    seeded._SEEDED.acquire()  # another session's training holds the turn
    try:
        task = asyncio.create_task(
            tools["train_model"].ainvoke({"model": "eegnet", "epochs": 5, "device": "cpu"})
        )
        await wait_until(lambda: any(isinstance(e, events.ToolProgress) for e in got))
        progress = [e.message for e in got if isinstance(e, events.ToolProgress)]
        assert progress == [WAITING] and not task.done()
    finally:
        seeded._SEEDED.release()
    await asyncio.wait_for(task, 120)
    progress = [e.message for e in got if isinstance(e, events.ToolProgress)]
    assert progress[0] == WAITING and progress.count(WAITING) == 1 and "epoch 5/5" in progress[-1]
    # a training that finds the turn free does not say it waited
    got.clear()
    await tools["train_model"].ainvoke({"model": "eegnet", "epochs": 1, "device": "cpu"})
    assert WAITING not in [e.message for e in got if isinstance(e, events.ToolProgress)]


@pytest.mark.slow  # trains models
async def test_trainings_waiting_for_their_turn_leave_the_shared_threads_free(
    data_dir: Path, scripted_server
) -> None:
    """More sessions train at once than asyncio's default pool has threads: the ones waiting for
    the seeded turn wait on the event loop, so a password check (to_thread) and a new connection
    (getaddrinfo runs on that pool) still go through before the first training ends."""
    import os

    import httpx

    n = (os.cpu_count() or 1) + 5  # the default pool has min(32, cpu + 4) threads
    sessions = [await prepared(data_dir) for _ in range(n)]
    args = {"model": "eegnet", "epochs": 15, "device": "cpu"}
    seen: list[events.Event] = []
    events._sink.set(seen.append)  # every session's progress, here
    tasks = [asyncio.create_task(t["train_model"].ainvoke(args)) for _, t, _ in sessions]
    await wait_until(lambda: any(isinstance(e, events.ToolProgress) for e in seen))
    await asyncio.to_thread(lambda: None)
    async with httpx.AsyncClient() as client:
        reply = await client.get(f"{scripted_server.url}/v1/models")
    assert reply.status_code == 200
    done_meanwhile = sum(t.done() for t in tasks)
    await asyncio.gather(*tasks)
    assert done_meanwhile == 0
