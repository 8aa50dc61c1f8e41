"""Study steps refused by their memory estimate, and a study freed when its tab closes, on real
EDF files through the real EEG tools."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools

FILES = [f"sub-01_ses-0{k}_task-mi_eeg.edf" for k in (1, 2)]


class Harness:
    def __init__(self, data_dir: Path, limit: int | None) -> None:
        self.study = Study(data_dir, limit)
        self.tools = {t.name: t for t in build_eeg_tools(self.study)}
        events._sink.set([].append)

    async def call(self, name: str, args: dict | None = None) -> str:
        events.set_tool_call(f"call-{name}", name)
        try:
            return str(await self.tools[name].ainvoke(args or {}))
        except ToolException as exc:  # what the agent's runner tells the model
            return str(exc)
        finally:
            await asyncio.sleep(0)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    write_demo_set(tmp_path, subjects=1, sessions=2, trials=24, seed=3)
    return tmp_path


async def test_each_heavy_step_is_refused_over_the_limit_and_the_study_is_unchanged(data_dir):
    h = Harness(data_dir, limit=60)  # two files of ~7.8 MB each once loaded
    await h.call("load_data", {"files": FILES})
    refused = {
        "resample_data": ({"sfreq": 1000}, "resampling to 1000 Hz needs about 93 MB"),
        "epoch_data": ({"tmin": 0, "tmax": 40}, "epochs of 40 s around every event needs about"),
    }
    for name, (args, needle) in refused.items():
        text = await h.call(name, args)
        assert needle in text and "over the limit of 60 MB for one operation" in text, text
        assert "(BRAINCHAT_MAX_OPERATION_MB)" in text and text.endswith("The study is unchanged")
    assert h.study.stage == "loaded" and h.study.state.raws[0].info["sfreq"] == 250
    assert "applied resample 500 Hz" in await h.call("resample_data", {"sfreq": 500})  # 47 MB
    assert "applied band-pass" in await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    assert "epoched" in await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})


async def test_an_ica_fit_over_the_limit_is_refused(data_dir):
    h = Harness(data_dir, limit=20)  # joined copies (16 MB), the data fitted twice (16 MB)
    await h.call("load_data", {"files": FILES})
    text = await h.call("ica_fit", {"n_components": 5})
    assert "fitting ICA needs about 31 MB of memory, over the limit of 20 MB" in text, text
    assert h.study.state.ica is None


async def test_a_released_study_is_replayed_at_its_next_use(data_dir):
    h = Harness(data_dir, limit=None)
    await h.call("load_data", {"files": FILES})
    await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    log = list(h.study.log)
    await h.study.release()
    assert h.study.state.raws == () and h.study.pending == log and h.study.log == []
    assert "applied resample 125 Hz" in await h.call("resample_data", {"sfreq": 125})
    assert [e["op"] for e in h.study.log] == ["load", "step", "step"]
    assert h.study.state.history[0].label.startswith("band-pass")
