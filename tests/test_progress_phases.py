"""A long EEG step names its phase from its first second (#40): a cold kernel says it starts, a
saved study says it is rebuilt, training says it prepares the data and builds the network before
its first epoch, evaluation says it evaluates. The phase is a typed value of the event; the page
names it in the user's language. Real kernel process, real EDF files, the real tools.

Before: train_model(EEGNet) on a reloaded study sent nothing for 4.7 s here (~30 s on the
demo's data under load), then "epoch 1/3".
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from brainchat import events, i18n
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.kernel.client import KernelStudy, kernel_tools
from brainchat.eeg.kernel.pool import KernelPool
from brainchat.ui.run_steps import elapsed_text, phase_text, progress_view

FILES = ["sub-01_ses-01_task-mi_eeg.edf", "sub-01_ses-02_task-mi_eeg.edf"]
SPLIT = [
    ("load_data", {"files": FILES}),
    ("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
    ("split_dataset", {}),
]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    write_demo_set(folder, subjects=1, sessions=2, trials=24, seed=3)
    return folder


async def call(tools: dict[str, Any], name: str, args: dict[str, Any], seen: list[Any]) -> str:
    token = events._sink.set(seen.append)
    events.set_tool_call(f"call-{name}", name)
    try:
        return str(await tools[name].ainvoke(args))
    finally:
        events._sink.reset(token)


def phases(seen: list[Any]) -> list[tuple[str | None, int | None]]:
    return [(e.phase, e.data.get("epoch")) for e in seen if isinstance(e, events.ToolProgress)]


def test_training_a_restored_study_names_each_phase_before_its_first_epoch(data) -> None:
    async def main() -> tuple[list[Any], list[Any]]:
        pool = KernelPool(max_kernels=2, per_user=2)
        try:
            study = KernelStudy(data, None, pool)
            tools = {t.name: t for t in kernel_tools(study)}
            for name, args in SPLIT:
                await call(tools, name, args, [])
            study.pending = list(study.log)  # a reloaded page: a new kernel replays the log
            trained: list[Any] = []
            await call(tools, "train_model", {"model": "eegnet", "epochs": 2}, trained)
            evaluated: list[Any] = []
            await call(tools, "evaluate_model", {}, evaluated)
            return trained, evaluated
        finally:
            pool.end_all()

    trained, evaluated = asyncio.run(main())
    assert phases(trained) == [
        ("starting", None),
        ("restoring", None),
        ("preparing", None),
        ("building", None),
        ("training", 0),
        ("training", 1),
        ("training", 2),
    ]
    restoring = next(e for e in trained if getattr(e, "phase", None) == "restoring")
    assert restoring.data == {"steps": 3}
    assert phases(evaluated)[0] == ("evaluating", None)  # the kernel runs: nothing to start


def test_an_ica_fit_names_its_phase_before_the_fit_goes_quiet(data) -> None:
    async def main() -> list[Any]:
        pool = KernelPool(max_kernels=1, per_user=1)
        try:
            study = KernelStudy(data, None, pool)
            tools = {t.name: t for t in kernel_tools(study)}
            await call(tools, "load_data", {"files": FILES[:1]}, [])
            seen: list[Any] = []
            await call(tools, "ica_fit", {"n_components": 5}, seen)
            return seen
        finally:
            pool.end_all()

    seen = asyncio.run(main())
    assert ("fitting", None) in phases(seen)
    fit = next(e for e in seen if getattr(e, "phase", None) == "fitting")
    i18n.use("zh-TW")
    try:
        assert phase_text(fit) == "正在擬合 ICA"
    finally:
        i18n.use(None)


def progress(phase: Any, **data: Any) -> events.ToolProgress:
    return events.ToolProgress(
        call_id="c", name="train_model", message="English for the CLI", data=data, phase=phase
    )


def test_the_page_names_the_phase_in_the_users_language_not_the_events_english() -> None:
    i18n.use("zh-CN")
    try:
        assert phase_text(progress("building")) == "正在构建网络"
        assert phase_text(progress("restoring", steps=3)) == "正在按已保存的 3 个步骤重建研究"
        title, body = progress_view(progress("training", epoch=0, epochs=30))
        assert title == "train_model · 正在训练，第 1/30 轮进行中" and "English" not in body
        epoch = progress("training", epoch=3, epochs=30, loss=0.5, val_acc=0.75, eta=12.0)
        assert phase_text(epoch) == "第 3/30 轮 · loss 0.500 · val acc 0.75 · 预计还需 12 秒"
        i18n.use("zh-TW")
        assert phase_text(progress("preparing")) == "正在準備資料"
    finally:
        i18n.use(None)
    # English keeps the title the tests and users knew
    epoch = progress("training", epoch=3, epochs=12, loss=0.5, acc=0.6, eta=4.0)
    assert progress_view(epoch)[0] == "train_model · epoch 3/12 · loss 0.500 · acc 0.60 · ETA 4 s"
    # an event without a phase (an MCP server's own words) is shown as it came
    other = events.ToolProgress(call_id="c", name="srv_tool", message="halfway", fraction=0.5)
    assert progress_view(other) == ("srv_tool · halfway", "halfway\n\n`██████████░░░░░░░░░░` 50%")


def test_the_elapsed_counter_reads_in_seconds_then_minutes() -> None:
    assert [elapsed_text(s) for s in (0.4, 12.9, 60, 125.5)] == [
        "0 s",
        "12 s",
        "1 min 00 s",
        "2 min 05 s",
    ]
