"""Synthetic motor-imagery EEG: 22 channels at 250 Hz, 1/f background, mu/beta ERD over C3/C4.

Right-hand imagery desynchronises the left sensorimotor cortex (C3), left-hand imagery the right
one (C4). Labels are annotations ("left_hand", "right_hand") at the cue, lasting the imagery.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    import mne

CHANNELS = [
    "Fz",
    "FC3",
    "FC1",
    "FCz",
    "FC2",
    "FC4",
    "C5",
    "C3",
    "C1",
    "Cz",
    "C2",
    "C4",
    "C6",
    "CP3",
    "CP1",
    "CPz",
    "CP2",
    "CP4",
    "P1",
    "Pz",
    "P2",
    "POz",
]
SFREQ = 250.0
CLASSES = ("left_hand", "right_hand")
IMAGERY_S = 4.0
# where each hemisphere's mu/beta source projects (weights on channels)
_LEFT_SOURCE = {"C3": 1.0, "C1": 0.6, "C5": 0.6, "FC3": 0.5, "CP3": 0.5, "Cz": 0.2}
_RIGHT_SOURCE = {"C4": 1.0, "C2": 0.6, "C6": 0.6, "FC4": 0.5, "CP4": 0.5, "Cz": 0.2}


def _pink(rng: np.random.Generator, n_ch: int, n: int) -> np.ndarray:
    spec = np.fft.rfft(rng.standard_normal((n_ch, n)), axis=1)
    f = np.fft.rfftfreq(n, 1 / SFREQ)
    f[0] = f[1]
    out = np.fft.irfft(spec / np.sqrt(f), n=n, axis=1)
    return out / out.std(axis=1, keepdims=True)


def _band(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SFREQ)
    spec[(f < lo) | (f > hi)] = 0
    out = np.fft.irfft(spec, n=n)
    return out / out.std()


def _schedule(rng: np.random.Generator, trials: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Cue onsets (samples), class labels and total length: 2 s fixation, 4 s imagery, ~1.5 s rest."""
    labels = rng.permutation(np.arange(trials) % len(CLASSES))
    gaps = 2.0 + IMAGERY_S + rng.uniform(1.0, 2.0, trials)
    onsets = 2.0 + np.concatenate([[0.0], np.cumsum(gaps[:-1])]) + 2.0
    total = int(np.ceil(onsets[-1] + IMAGERY_S + 3.0))  # whole seconds (EDF data records)
    return (onsets * SFREQ).astype(int), labels, int(total * SFREQ)


def _envelopes(onsets: np.ndarray, labels: np.ndarray, n: int, effect: float) -> np.ndarray:
    """Gain over time of the (left, right) hemisphere rhythms: 1 at rest, 1 - effect during ERD."""
    gain = np.ones((2, n))
    width = int(IMAGERY_S * SFREQ)
    for onset, label in zip(onsets, labels, strict=True):
        hemi = 1 if CLASSES[label] == "left_hand" else 0  # contralateral hemisphere
        start = onset + int(0.3 * SFREQ)  # ERD begins shortly after the cue
        gain[hemi, start : onset + width] = 1.0 - effect
    ramp = np.hanning(int(0.4 * SFREQ))
    ramp /= ramp.sum()
    return np.stack([np.convolve(g, ramp, mode="same") for g in gain])


def make_recording(
    subject: int = 1, session: int = 1, trials: int = 96, effect_size: float = 0.4, seed: int = 0
) -> mne.io.RawArray:
    """One session of one subject as an MNE RawArray (volts), labels as annotations."""
    import mne

    if not 0.0 <= effect_size <= 1.0:
        raise ValueError(f"effect_size must be within [0, 1], got {effect_size}")
    rng = np.random.default_rng([seed, subject, session])
    subj_rng = np.random.default_rng([seed, subject])  # traits shared by a subject's sessions
    mu = subj_rng.uniform(9.0, 12.0)
    beta = subj_rng.uniform(18.0, 24.0)
    onsets, labels, n = _schedule(rng, trials)
    gain = _envelopes(onsets, labels, n, effect_size)
    idx = {ch: i for i, ch in enumerate(CHANNELS)}
    data = 10.0 * _pink(rng, len(CHANNELS), n) + 4.0 * _pink(rng, 1, n)  # + common mode
    for hemi, weights in enumerate((_LEFT_SOURCE, _RIGHT_SOURCE)):
        rhythm = 8.0 * _band(rng, n, mu - 1, mu + 1) + 4.0 * _band(rng, n, beta - 2, beta + 2)
        rhythm *= gain[hemi] * subj_rng.uniform(0.8, 1.2)
        for ch, w in weights.items():
            data[idx[ch]] += w * rhythm
    data[idx["POz"]] += 6.0 * _band(rng, n, 9.5, 11.0)  # occipital alpha, not task-related
    info = mne.create_info(CHANNELS, SFREQ, ch_types="eeg")
    raw = mne.io.RawArray(data * 1e-6, info, verbose="error")
    raw.set_annotations(mne.Annotations(onsets / SFREQ, IMAGERY_S, [CLASSES[i] for i in labels]))
    return raw


def demo_file_name(subject: int, session: int, fmt: str) -> str:
    return f"sub-{subject:02d}_ses-{session:02d}_task-mi_eeg.{fmt}"


def demo_folder(data_dir: Path | str) -> Path:
    """Where the demo set goes: `<data dir>/demo`, or where an earlier demo set already is.

    The welcome button and `brainchat demo-data` both write here, so running both (or one
    twice) rewrites the same files instead of adding the subjects a second time.
    """
    root = Path(data_dir)
    for folder in (root / "demo", root):  # the data folder itself: where older versions wrote
        if any((folder / demo_file_name(1, 1, fmt)).exists() for fmt in ("edf", "fif")):
            return folder
    return root / "demo"


def write_demo_set(
    data_dir: Path | str,
    subjects: int = 2,
    sessions: int = 2,
    trials: int = 96,
    effect_size: float = 0.4,
    fmt: Literal["edf", "fif"] = "edf",
    seed: int = 0,
) -> list[Path]:
    """Write subjects x sessions recordings into `data_dir` as real EDF or FIF files."""
    if fmt not in ("edf", "fif"):
        raise ValueError(f"fmt must be 'edf' or 'fif', got {fmt!r}")
    out = Path(data_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for subject in range(1, subjects + 1):
        for session in range(1, sessions + 1):
            raw = make_recording(subject, session, trials, effect_size, seed)
            path = out / demo_file_name(subject, session, fmt)
            write_raw(raw, path)
            paths.append(path)
    return paths


def write_raw(raw: mne.io.BaseRaw, path: Path) -> None:
    """Write a recording as EDF (via edfio), FIF, BrainVision (.vhdr, via pybv) or EEGLAB (.set,
    via eeglabio), chosen by the file's extension."""
    import mne

    if path.suffix == ".fif":
        raw.save(path, overwrite=True, verbose="error")
    elif path.suffix in (".vhdr", ".set"):
        fmt = "brainvision" if path.suffix == ".vhdr" else "eeglab"
        mne.export.export_raw(path, raw, fmt=fmt, overwrite=True, verbose="error")
    else:
        mne.export.export_raw(path, raw, fmt="edf", overwrite=True, verbose="error")


def main(argv: list[str] | None = None) -> int:
    """`brainchat demo-data`: write a synthetic motor-imagery set into the data folder."""
    from brainchat.eeg.io.paths import default_data_dir

    parser = argparse.ArgumentParser(prog="brainchat demo-data", description=main.__doc__)
    parser.add_argument("--out", type=Path, default=None, help="folder (default: <data dir>/demo)")
    parser.add_argument("--subjects", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--trials", type=int, default=96, help="trials per session")
    parser.add_argument("--effect-size", type=float, default=0.4, help="ERD depth, 0..1")
    parser.add_argument("--format", dest="fmt", choices=["edf", "fif"], default="edf")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = args.out or demo_folder(default_data_dir())
    paths = write_demo_set(
        out, args.subjects, args.sessions, args.trials, args.effect_size, args.fmt, args.seed
    )
    print(f"wrote {len(paths)} files to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
