"""Bench: peak memory of loading and band-pass filtering a 1-hour, 64-channel, 500 Hz recording.

    .venv/bin/python bench/eeg_memory.py [--minutes 60]

The recording is written to a FIF file by this process; a fresh child process imports the app's
EEG modules (its baseline), then loads and filters through the tools; the child reports its peak
RSS (VmHWM) above the baseline, as a multiple of the data's in-memory size (target: at most 2x).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import asyncio, sys
from pathlib import Path
import mne, numpy, torch, sklearn, matplotlib  # the app's baseline: its libraries loaded
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024

async def main(folder, name):
    study = Study(Path(folder))
    tools = {t.name: t for t in build_eeg_tools(study)}
    base = rss("VmRSS:")
    open("/proc/self/clear_refs", "w").write("5")  # reset the peak to the current RSS
    await tools["load_data"].ainvoke({"files": [name]})
    print(rss("VmHWM:") - base, file=sys.stderr)
    await tools["bandpass_filter"].ainvoke({"l_freq": 1, "h_freq": 40})
    raw = study.state.raws[0]
    print(base, rss("VmHWM:"), raw._data.nbytes)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def write_recording(path: Path, minutes: float) -> None:
    import mne

    sfreq, names = 500.0, mne.channels.make_standard_montage("biosemi64").ch_names
    n = int(minutes * 60 * sfreq)
    rng = np.random.default_rng(0)
    data = np.empty((len(names), n))
    for i in range(len(names)):
        data[i] = np.cumsum(rng.standard_normal(n)) * 1e-7  # brown-ish noise, volts
        data[i] -= data[i].mean()
    raw = mne.io.RawArray(data, mne.create_info(names, sfreq, "eeg"), verbose="error")
    raw.save(path, verbose="error")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long_eeg.fif"
        write_recording(path, args.minutes)
        out = subprocess.run([sys.executable, "-c", CHILD, tmp, path.name], capture_output=True,
                             text=True, check=True)  # fmt: skip
    base, peak, size = (int(v) for v in out.stdout.split())
    load_peak = int(out.stderr.split()[-1])
    print(f"peak above baseline while loading: {load_peak / size:.2f}x the data")
    above = peak - base
    print(
        f"{args.minutes:g} min x 64 ch x 500 Hz: data {size / 2**20:.0f} MiB in memory, "
        f"baseline RSS {base / 2**20:.0f} MiB, peak {peak / 2**20:.0f} MiB, "
        f"above baseline {above / 2**20:.0f} MiB = {above / size:.2f}x the data (target <= 2)"
    )


if __name__ == "__main__":
    main()
