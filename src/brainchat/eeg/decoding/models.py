"""EEGNet, ShallowConvNet and SCCNet in plain PyTorch, sized from the data's sampling rate.

Input: (batch, 1, channels, samples). Output: class logits.
"""

from __future__ import annotations

import torch
from torch import nn

TORCH_MODELS = ("eegnet", "shallowconvnet", "sccnet")
ALL_MODELS = (*TORCH_MODELS, "csp_lda")


def _flat_size(features: nn.Module, n_channels: int, n_times: int) -> int:
    with torch.no_grad():
        return int(features(torch.zeros(1, 1, n_channels, n_times)).numel())


class EEGNet(nn.Module):
    """Lawhern et al. 2018, EEGNet-8,2: temporal conv, depthwise spatial conv, separable conv."""

    def __init__(
        self,
        n_channels: int,
        n_times: int,
        n_classes: int,
        sfreq: float,
        f1: int = 8,
        d: int = 2,
        f2: int = 16,
        dropout: float = 0.25,
    ) -> None:
        super().__init__()
        k = max(3, int(sfreq // 2)) | 1  # half a second, odd
        self.features = nn.Sequential(
            nn.Conv2d(1, f1, (1, k), padding=(0, k // 2), bias=False),
            nn.BatchNorm2d(f1),
            nn.Conv2d(f1, f1 * d, (n_channels, 1), groups=f1, bias=False),
            nn.BatchNorm2d(f1 * d),
            nn.ELU(),
            nn.AvgPool2d((1, 4)),
            nn.Dropout(dropout),
            nn.Conv2d(f1 * d, f1 * d, (1, 15), padding=(0, 7), groups=f1 * d, bias=False),
            nn.Conv2d(f1 * d, f2, 1, bias=False),
            nn.BatchNorm2d(f2),
            nn.ELU(),
            nn.AvgPool2d((1, 8)),
            nn.Dropout(dropout),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(_flat_size(self.features, n_channels, n_times), n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class _Log(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.clamp(x, min=1e-6))


class _Square(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x


class ShallowConvNet(nn.Module):
    """Schirrmeister et al. 2017: temporal conv, spatial conv, square, mean-pool, log."""

    def __init__(
        self,
        n_channels: int,
        n_times: int,
        n_classes: int,
        sfreq: float,
        n_filters: int = 40,
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        k = max(3, int(sfreq * 0.1))  # 25 samples at 250 Hz
        pool = min(max(2, int(sfreq * 0.3)), n_times - k + 1)  # 75 at 250 Hz
        stride = max(1, int(sfreq * 0.06))  # 15 at 250 Hz
        self.features = nn.Sequential(
            nn.Conv2d(1, n_filters, (1, k)),
            nn.Conv2d(n_filters, n_filters, (n_channels, 1), bias=False),
            nn.BatchNorm2d(n_filters),
            _Square(),
            nn.AvgPool2d((1, pool), stride=(1, stride)),
            _Log(),
            nn.Dropout(dropout),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(_flat_size(self.features, n_channels, n_times), n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class SCCNet(nn.Module):
    """Wei et al. 2019: spatial component conv, spatio-temporal conv, square, pool, log."""

    def __init__(
        self,
        n_channels: int,
        n_times: int,
        n_classes: int,
        sfreq: float,
        n_spatial: int | None = None,
        n_temporal: int = 20,
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        nu = n_spatial or n_channels
        k = max(3, int(sfreq * 0.1))  # 12 samples at 125 Hz
        pool = min(max(2, int(sfreq * 0.5)), n_times)  # 0.5 s window
        stride = max(1, int(sfreq * 0.1))  # 0.1 s step
        self.spatial = nn.Sequential(nn.Conv2d(1, nu, (n_channels, 1)), nn.BatchNorm2d(nu))
        self.temporal = nn.Sequential(
            nn.Conv2d(1, n_temporal, (nu, k), padding=(0, k // 2)),
            nn.BatchNorm2d(n_temporal),
            _Square(),
            nn.Dropout(dropout),
            nn.AvgPool2d((1, pool), stride=(1, stride)),
            _Log(),
            nn.Flatten(),
        )
        self.features = nn.Sequential(self.spatial, _SwapSpatial(), self.temporal)
        self.classifier = nn.Linear(_flat_size(self.features, n_channels, n_times), n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class _SwapSpatial(nn.Module):
    """(B, components, 1, T) -> (B, 1, components, T)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 1, 3)


def build_model(
    kind: str, n_channels: int, n_times: int, n_classes: int, sfreq: float
) -> nn.Module:
    classes = {"eegnet": EEGNet, "shallowconvnet": ShallowConvNet, "sccnet": SCCNet}
    if kind not in classes:
        raise ValueError(f"unknown model '{kind}'; choose one of {', '.join(ALL_MODELS)}")
    return classes[kind](n_channels, n_times, n_classes, sfreq)
