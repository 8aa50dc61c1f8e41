"""Trained models as files: torch weights (loaded weights-only) or a signed CSP+LDA pickle.

A network is saved as its state dict, the training-set scaling and its history, and read back
with `torch.load(weights_only=True)`, which runs no code from the file. A CSP+LDA pipeline can
only be pickled; its file carries an HMAC-SHA256 made with the app's key, and a file whose
signature does not match is refused before anything is unpickled.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import re
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.state import StudyState, TrainedModel

SIGNATURE = b"brainchat-model-v1\n"


def file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80] or "model"


def save_model(model: TrainedModel, folder: Path, key: bytes) -> Path:
    """Write `model` into `folder`; return the file's path."""
    import pickle

    import torch

    from brainchat.eeg.decoding.training import TorchPredictor

    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "name": model.name,
        "kind": model.kind,
        "config": model.config,
        "history": model.history,
        "seconds": model.seconds,
        "device": model.device,
    }
    p = model.predictor
    if isinstance(p, TorchPredictor):
        path = folder / f"{file_name(model.name)}.pt"
        blob = {
            **meta,
            "state_dict": {k: v.cpu() for k, v in p.module.state_dict().items()},
            "mean": torch.from_numpy(p.mean),
            "std": torch.from_numpy(p.std),
        }
        buffer = io.BytesIO()
        torch.save(blob, buffer)
        data = buffer.getvalue()
    else:
        path = folder / f"{file_name(model.name)}.pkl"
        payload = pickle.dumps({**meta, "pipeline": p})
        data = SIGNATURE + _sign(key, payload).encode() + b"\n" + payload
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


def load_model(path: Path, state: StudyState, key: bytes) -> TrainedModel:
    """Read a model saved by `save_model`, for the epochs of `state`."""
    if not path.is_file():
        raise ToolException(f"the saved model file '{path.name}' is missing")
    if path.suffix == ".pt":
        return _load_torch(path, state)
    data = path.read_bytes()
    head, _, rest = data.partition(b"\n")
    signature, _, payload = rest.partition(b"\n")
    if head + b"\n" != SIGNATURE or not hmac.compare_digest(
        signature.decode(), _sign(key, payload)
    ):
        raise ToolException(f"the saved model '{path.name}' is not signed by this app; retrain it")
    import pickle

    blob = pickle.loads(payload)  # noqa: S301 - signed with the app's key just above
    return _trained(blob, blob["pipeline"])


def _load_torch(path: Path, state: StudyState) -> TrainedModel:
    import torch

    from brainchat.eeg.decoding.models import build_model
    from brainchat.eeg.decoding.training import TorchPredictor

    blob = torch.load(path, map_location="cpu", weights_only=True)
    eps = state.eps
    # Built on the meta device (shapes only, no storage), so its initialisation draws nothing from
    # torch's global generator: a restore must not shift the random numbers of a training that
    # runs meanwhile in another session (nor take that training's lock). The saved tensors then
    # become the module's own (assign=True).
    with torch.device("meta"):
        module = build_model(
            blob["kind"], eps.X.shape[1], eps.X.shape[2], len(eps.classes), eps.info["sfreq"]
        )
    try:
        module.load_state_dict(blob["state_dict"], assign=True)
        if any(t.is_meta for t in (*module.parameters(), *module.buffers())):
            raise RuntimeError("a tensor of the network is not in the saved file")
    except RuntimeError:
        raise ToolException(
            f"the saved model '{blob['name']}' does not fit the epochs as replayed "
            "(channels, samples or classes differ); retrain it"
        ) from None
    predictor = TorchPredictor(module, blob["mean"].numpy(), blob["std"].numpy(), "cpu")
    return _trained(blob, predictor)


def _trained(blob: dict[str, Any], predictor: Any) -> TrainedModel:
    return TrainedModel(
        blob["name"],
        blob["kind"],
        predictor,
        dict(blob["config"]),
        {k: list(v) for k, v in blob["history"].items()},
        float(blob["seconds"]),
        str(blob["device"]),
    )


def _sign(key: bytes, payload: bytes) -> str:
    return hmac.new(key, payload, hashlib.sha256).hexdigest()
