"""Bench: EEGNet training epochs through the train_model tool, against a plain PyTorch loop.

    .venv/bin/python bench/eeg_training.py [--device cpu|cuda|auto] [--epochs 3] [--repeats 2]

Both sides train the same EEGNet on the same standardized tensors (same batch size, Adam,
shuffling) and run one validation pass per epoch, as the tool does. Prints seconds per epoch
and the ratio tool/plain (target: at most 1.1).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


async def prepare(data_dir: Path, subjects: int, trials: int):
    from brainchat.eeg.io.synthetic import write_demo_set
    from brainchat.eeg.study.study import Study
    from brainchat.eeg.tools.tools import build_eeg_tools

    write_demo_set(data_dir, subjects=subjects, sessions=1, trials=trials)
    study = Study(data_dir)
    tools = {t.name: t for t in build_eeg_tools(study)}
    await tools["load_data"].ainvoke({"files": edf_names(data_dir)})
    await tools["bandpass_filter"].ainvoke({"l_freq": 8, "h_freq": 30})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    await tools["split_dataset"].ainvoke({"by": "trial", "test_ratio": 0.2, "val_ratio": 0.2})
    return study, tools


def plain_loop(study, epochs: int, batch_size: int, device: str) -> float:
    """The baseline: a textbook PyTorch loop on the same split; returns seconds."""
    from brainchat.eeg.decoding.models import EEGNet

    start = time.perf_counter()
    e, s = study.state.epochs, study.state.split
    Xtr = e.X[s.train]
    mean, std = Xtr.mean(axis=(0, 2))[None, :, None], Xtr.std(axis=(0, 2))[None, :, None]

    def tensor(idx):
        return (
            torch.from_numpy(((e.X[idx] - mean) / std).astype(np.float32)).unsqueeze(1).to(device)
        )

    x, y = tensor(s.train), torch.from_numpy(e.y[s.train]).long().to(device)
    xv, yv = tensor(s.val), torch.from_numpy(e.y[s.val]).long().to(device)
    torch.manual_seed(0)
    model = EEGNet(e.X.shape[1], e.X.shape[2], len(e.classes), e.info["sfreq"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(len(y), generator=gen).to(device)
        for i in range(0, len(y), batch_size):
            idx = perm[i : i + batch_size]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            for i in range(0, len(yv), 256):
                float(torch.nn.functional.cross_entropy(model(xv[i : i + 256]), yv[i : i + 256]))
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


async def main() -> None:
    from brainchat.eeg.decoding.training import select_device

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--subjects", type=int, default=1)
    parser.add_argument("--trials", type=int, default=288)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    device = select_device(args.device)
    with tempfile.TemporaryDirectory() as tmp:
        study, tools = await prepare(Path(tmp), args.subjects, args.trials)
        s = study.state
        print(f"{len(s.split.train)} train / {len(s.split.val)} val epochs of "
              f"{s.epochs.X.shape[1]} ch x {s.epochs.X.shape[2]} samples; device {device}, "
              f"torch threads {torch.get_num_threads()}")  # fmt: skip
        plain_loop(study, 1, args.batch_size, device)  # warm-up (kernels, allocator)
        best = {"plain": float("inf"), "tool": float("inf")}
        for i in range(args.repeats):  # interleaved, order alternated, best of n (shared machine)
            for side in ("plain", "tool") if i % 2 == 0 else ("tool", "plain"):
                t = time.perf_counter()
                if side == "plain":
                    plain_loop(study, args.epochs, args.batch_size, device)
                else:
                    await tools["train_model"].ainvoke({"model": "eegnet", "epochs": args.epochs,
                                                        "batch_size": args.batch_size, "device": device})  # fmt: skip
                best[side] = min(best[side], time.perf_counter() - t)
            print(f"  plain {best['plain'] / args.epochs:.3f} s/epoch, tool "
                  f"{best['tool'] / args.epochs:.3f} s/epoch")  # fmt: skip
    ratio = best["tool"] / best["plain"]
    print(
        f"EEGNet on {device}: tool {best['tool'] / args.epochs:.3f} s/epoch, plain loop "
        f"{best['plain'] / args.epochs:.3f} s/epoch, ratio {ratio:.3f} (target <= 1.1)"
    )


def edf_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.edf"))


if __name__ == "__main__":
    asyncio.run(main())
