"""The torch section of an exported analysis script's helpers (see script_helpers.py). NOT imported
by brainchat.

Its text from the section marker on is copied after script_helpers.py's common section into a
script that trains a network; what it uses from the common section is imported above the marker,
for linters and tests only.
"""
# ruff: noqa: E402

from __future__ import annotations

import copy
import sys

import numpy as np

from brainchat.eeg.export.script_helpers import NETWORK_CLASSES, log

# isort: split
# === section: torch
import torch
from torch import nn


def select_device(requested: str) -> str:
    """'auto': CUDA when a GPU is visible (brainchat.eeg.decoding.training.select_device)."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        sys.exit("this model was trained on CUDA and no CUDA GPU is visible; edit its device")
    return requested


def to_tensor(X, mean, std):
    return torch.from_numpy(((X - mean) / std).astype(np.float32)).unsqueeze(1)


class TorchPredictor:
    """A trained network with the training set's per-channel scaling."""

    def __init__(self, module, mean, std) -> None:
        self.module, self.mean, self.std = module, mean, std

    def predict_proba(self, X, batch=256):
        self.module.eval()
        out = []
        with torch.no_grad():
            for i in range(0, len(X), batch):
                x = to_tensor(X[i : i + batch], self.mean, self.std)
                out.append(torch.softmax(self.module(x), dim=1).cpu().numpy())
        return np.concatenate(out)


def make_optimizer(name, params, lr):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=1e-2)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True)
    return torch.optim.Adam(params, lr=lr)


def run_epoch(module, opt, x, y, batch_size, gen):
    """One pass over the training set (brainchat.eeg.decoding.training.run_epoch)."""
    module.train()
    perm = torch.randperm(len(y), generator=gen).to(x.device)
    total = torch.zeros((), device=x.device)
    correct = torch.zeros((), device=x.device, dtype=torch.long)
    for i in range(0, len(y), batch_size):
        idx = perm[i : i + batch_size]
        opt.zero_grad(set_to_none=True)
        logits = module(x[idx])
        loss = nn.functional.cross_entropy(logits, y[idx])
        loss.backward()
        opt.step()
        total += loss.detach() * len(idx)
        correct += (logits.detach().argmax(1) == y[idx]).sum()
    return float(total) / len(y), int(correct) / len(y)


def val_accuracy(module, x, y, batch_size=256):
    module.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(y), batch_size):
            correct += int((module(x[i : i + batch_size]).argmax(1) == y[i : i + batch_size]).sum())
    return correct / max(1, len(y))


def train_network(kind, epochs, data, cfg):
    """brainchat.eeg.decoding.decoding.train_op + training.train_torch: the same seeds, in the same
    order; the weights of the best validation accuracy are kept."""
    device = select_device(cfg["device"])
    X = epochs["X"]
    torch.manual_seed(cfg["seed"])  # the initial weights
    module = NETWORK_CLASSES[kind](X.shape[1], X.shape[2], len(epochs["classes"]), epochs["sfreq"])
    torch.manual_seed(cfg["seed"])  # dropout
    gen = torch.Generator().manual_seed(cfg["seed"])  # the order of the batches
    Xtr = data["X_train"]
    mean = Xtr.mean(axis=(0, 2), keepdims=True)[0]
    std = Xtr.std(axis=(0, 2), keepdims=True)[0] + 1e-12
    x = to_tensor(Xtr, mean, std).to(device)
    y = torch.from_numpy(data["y_train"]).long().to(device)
    xv = to_tensor(data["X_val"], mean, std).to(device)
    yv = torch.from_numpy(data["y_val"]).long().to(device)
    module.to(device)
    opt = make_optimizer(cfg["optimizer"], module.parameters(), cfg["learning_rate"])
    best, best_acc = None, -1.0
    for epoch in range(1, cfg["epochs"] + 1):
        loss, acc = run_epoch(module, opt, x, y, cfg["batch_size"], gen)
        if len(yv):
            vacc = val_accuracy(module, xv, yv)
            if vacc > best_acc:
                best_acc, best = vacc, copy.deepcopy(module.state_dict())
        log(f"{kind} epoch {epoch}/{cfg['epochs']}: loss {loss:.3f}, acc {acc:.2f}")
    if best is not None:
        module.load_state_dict(best)
    module.to("cpu")
    return TorchPredictor(module, mean, std)


# === end
