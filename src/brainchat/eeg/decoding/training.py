"""Training loops (PyTorch models, CSP+LDA) and evaluation metrics. No asyncio, no agent."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

Progress = Callable[[int, int, dict[str, float]], None]  # epoch (1-based), epochs, figures


class TrainingCancelled(Exception):
    """The stop flag was set: training ended early and nothing must be kept."""


@dataclass
class TrainConfig:
    model: str = "eegnet"
    epochs: int = 30
    batch_size: int = 32
    learning_rate: float = 1e-3
    optimizer: str = "adam"
    seed: int = 0
    device: str = "auto"


@dataclass
class TorchPredictor:
    """A trained network with the per-channel scaling learnt on the training set."""

    module: nn.Module
    mean: np.ndarray
    std: np.ndarray
    device: str = "cpu"

    def predict_proba(self, X: np.ndarray, batch: int = 256) -> np.ndarray:
        self.module.eval()
        out = []
        with torch.no_grad():
            for i in range(0, len(X), batch):
                x = to_tensor(X[i : i + batch], self.mean, self.std).to(self.device)
                out.append(torch.softmax(self.module(x), dim=1).cpu().numpy())
        return np.concatenate(out)


@dataclass
class FitResult:
    predictor: Any
    history: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0
    device: str = "cpu"


def select_device(requested: str) -> str:
    """'auto' -> 'cuda' when a GPU is visible, else 'cpu'; an unavailable 'cuda' is an error."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            "device 'cuda' was asked for but no CUDA GPU is available; use 'auto' or 'cpu'"
        )
    return requested


def to_tensor(X: np.ndarray, mean: np.ndarray, std: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(((X - mean) / std).astype(np.float32)).unsqueeze(1)


def _optimizer(name: str, params, lr: float) -> torch.optim.Optimizer:
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=1e-2)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True)
    return torch.optim.Adam(params, lr=lr)


def run_epoch(module, opt, x, y, batch_size, gen, stop) -> tuple[float, float]:
    """One pass over (x, y) already on the device; returns mean loss and accuracy."""
    module.train()
    loss_fn = nn.functional.cross_entropy
    perm = torch.randperm(len(y), generator=gen).to(x.device)
    # summed on the device, read once per epoch: no GPU sync per batch
    total = torch.zeros((), device=x.device)
    correct = torch.zeros((), device=x.device, dtype=torch.long)
    for i in range(0, len(y), batch_size):
        if stop.is_set():
            raise TrainingCancelled()
        idx = perm[i : i + batch_size]
        opt.zero_grad(set_to_none=True)
        logits = module(x[idx])
        loss = loss_fn(logits, y[idx])
        loss.backward()
        opt.step()
        total += loss.detach() * len(idx)
        correct += (logits.detach().argmax(1) == y[idx]).sum()
    return float(total) / len(y), int(correct) / len(y)


def evaluate_batches(module, x, y, batch_size=256) -> tuple[float, float]:
    module.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(y), batch_size):
            logits = module(x[i : i + batch_size])
            total += float(
                nn.functional.cross_entropy(logits, y[i : i + batch_size], reduction="sum")
            )
            correct += int((logits.argmax(1) == y[i : i + batch_size]).sum())
    return total / max(1, len(y)), correct / max(1, len(y))


def train_torch(
    module: nn.Module,
    data: dict[str, np.ndarray],
    cfg: TrainConfig,
    stop: threading.Event,
    progress: Progress,
) -> FitResult:
    """Train on data['X_train'], keep the weights of the best validation accuracy (if any)."""
    device = select_device(cfg.device)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    Xtr = data["X_train"]
    mean = Xtr.mean(axis=(0, 2), keepdims=True)[0]
    std = Xtr.std(axis=(0, 2), keepdims=True)[0] + 1e-12
    x = to_tensor(Xtr, mean, std).to(device)
    y = torch.from_numpy(data["y_train"]).long().to(device)
    xv = to_tensor(data["X_val"], mean, std).to(device)
    yv = torch.from_numpy(data["y_val"]).long().to(device)
    module.to(device)
    opt = _optimizer(cfg.optimizer, module.parameters(), cfg.learning_rate)
    hist: dict[str, list[float]] = {k: [] for k in ("loss", "acc", "val_loss", "val_acc")}
    best, best_acc, start = None, -1.0, time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        loss, acc = run_epoch(module, opt, x, y, cfg.batch_size, gen, stop)
        hist["loss"].append(loss)
        hist["acc"].append(acc)
        if len(yv):
            vloss, vacc = evaluate_batches(module, xv, yv)
            hist["val_loss"].append(vloss)
            hist["val_acc"].append(vacc)
            if vacc > best_acc:
                best_acc, best = vacc, copy.deepcopy(module.state_dict())
        elapsed = time.perf_counter() - start
        progress(
            epoch,
            cfg.epochs,
            {
                "loss": loss,
                "acc": acc,
                "elapsed": elapsed,
                "eta": elapsed / epoch * (cfg.epochs - epoch),
                **({"val_acc": hist["val_acc"][-1]} if len(yv) else {}),
            },
        )
    if best is not None:
        module.load_state_dict(best)
    module.to("cpu")
    predictor = TorchPredictor(module, mean, std, "cpu")
    return FitResult(predictor, hist, time.perf_counter() - start, device)


def train_csp_lda(
    data: dict[str, np.ndarray], stop: threading.Event, progress: Progress, n_components: int = 4
) -> FitResult:
    """The classical baseline: CSP log-variance features into linear discriminant analysis. The
    CSP is csp.CSPFeatures: MNE's CSP, restricted to the training trials' rank when ICA removal or
    an average reference left them rank-deficient."""
    import mne
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.pipeline import make_pipeline

    from brainchat.eeg.decoding.csp import CSPFeatures

    start = time.perf_counter()
    n_comp = min(n_components, data["X_train"].shape[1])
    pipe = make_pipeline(CSPFeatures(n_comp), LinearDiscriminantAnalysis())
    with mne.utils.use_log_level("error"):
        pipe.fit(data["X_train"], data["y_train"])
    if stop.is_set():
        raise TrainingCancelled()
    hist = {"acc": [float(pipe.score(data["X_train"], data["y_train"]))]}
    if len(data["y_val"]):
        hist["val_acc"] = [float(pipe.score(data["X_val"], data["y_val"]))]
    elapsed = time.perf_counter() - start
    progress(1, 1, {"acc": hist["acc"][0], "elapsed": elapsed, "eta": 0.0})
    return FitResult(pipe, hist, elapsed, "cpu")


def metrics(y_true: np.ndarray, proba: np.ndarray, classes: tuple[str, ...]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, Cohen's kappa, ROC AUC, per-class P/R/F1, confusion matrix."""
    from sklearn import metrics as m

    labels = list(range(len(classes)))
    pred = proba.argmax(1)
    try:
        if len(classes) == 2:
            auc = float(m.roc_auc_score(y_true, proba[:, 1]))
        else:
            auc = float(m.roc_auc_score(y_true, proba, multi_class="ovr", labels=labels))
    except ValueError:
        auc = float("nan")  # a class absent from the test set
    p, r, f, s = m.precision_recall_fscore_support(y_true, pred, labels=labels, zero_division=0)
    return {
        "accuracy": float(m.accuracy_score(y_true, pred)),
        "balanced_accuracy": float(m.balanced_accuracy_score(y_true, pred)),
        "kappa": float(m.cohen_kappa_score(y_true, pred, labels=labels)),
        "roc_auc": auc,
        "per_class": {
            c: {
                "precision": float(p[i]),
                "recall": float(r[i]),
                "f1": float(f[i]),
                "support": int(s[i]),
            }
            for i, c in enumerate(classes)
        },
        "confusion": m.confusion_matrix(y_true, pred, labels=labels).tolist(),
        "n_test": len(y_true),
    }
