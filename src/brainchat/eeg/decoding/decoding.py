"""Study operations that train and evaluate decoders, and fit/apply ICA."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
from langchain_core.tools import ToolException

from brainchat.eeg.core.holdout import split_note
from brainchat.eeg.core.leakage import leakage_notes
from brainchat.eeg.core.state import Op, Step, StudyState, TrainedModel
from brainchat.events import Phase, ToolImage, ToolProgress, current_tool_call, emit
from brainchat.tools.errors import ToolError, call


def emit_image(png: bytes, title: str) -> str:
    call_id, name = current_tool_call()
    svg, note = getattr(png, "svg", b""), getattr(png, "svg_note", "")  # eeg/core/figures.py
    emit(ToolImage(call_id=call_id, name=name, title=title, png=bytes(png), svg=svg))
    left_out = (
        f"\nnote: no SVG of this figure to download ({note}); the PNG is offered" if note else ""
    )
    return f"image: {title} shown to the user{left_out}"


def _progress(epoch: int, epochs: int, fig: dict[str, float]) -> None:
    call_id, name = current_tool_call()
    val = f", val acc {fig['val_acc']:.2f}" if "val_acc" in fig else ""
    loss = f"loss {fig['loss']:.3f}, " if "loss" in fig else ""
    message = (
        f"epoch {epoch}/{epochs}: {loss}acc {fig['acc']:.2f}{val}, "
        f"{fig['elapsed']:.1f} s elapsed, ETA {fig['eta']:.0f} s"
    )
    emit(
        ToolProgress(
            call_id=call_id,
            name=name,
            message=message,
            fraction=epoch / epochs,
            data={"epoch": epoch, "epochs": epochs, **fig},
            phase="training",
        )
    )


def phase(phase: Phase, message: str, **data: float | str) -> None:
    """Say which phase a long step is in before it goes quiet (an import, a build, a fit)."""
    call_id, name = current_tool_call()
    emit(ToolProgress(call_id=call_id, name=name, message=message, data=data, phase=phase))


WAITING = "waiting for another session's training to finish"


def _waiting() -> None:
    """Progress while another session holds the seeded-training turn (seeded.take_turn)."""
    call_id, name = current_tool_call()
    emit(ToolProgress(call_id=call_id, name=name, message=WAITING, phase="waiting"))


def split_arrays(state: StudyState) -> dict[str, np.ndarray]:
    e, s = state.eps, state.split
    return {
        f"{k}_{part}": arr[getattr(s, part)]
        for part in ("train", "val", "test")
        for k, arr in (("X", e.X), ("y", e.y))
    }


def train_op(cfg) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        state.require("split")
        phase("preparing", "preparing the data")
        from brainchat.eeg.decoding import training  # torch: seconds at its first import

        try:
            training.select_device(cfg.device)
        except ValueError as exc:
            raise ToolException(str(exc)) from None
        data = split_arrays(state)
        if len(data["y_train"]) < 2:
            raise ToolException(
                "too few training epochs; lower test_ratio/val_ratio in split_dataset"
            )
        try:
            if cfg.model == "csp_lda":
                fit = training.train_csp_lda(data, stop, _progress)
            else:
                phase("building", f"building the {cfg.model} network")
                module = _build(state, cfg)
                phase("training", f"training, epoch 1/{cfg.epochs} under way", epoch=0,
                      epochs=cfg.epochs)  # fmt: skip
                # runs holding the process's seeded turn, taken on the event loop (seeded_turn)
                fit = training.train_torch(module, data, cfg, stop, _progress)
        except training.TrainingCancelled:
            raise ToolException("training cancelled; the study is unchanged") from None
        name = (
            cfg.model if cfg.model not in state.models else f"{cfg.model}-{len(state.models) + 1}"
        )
        model = TrainedModel(
            name, cfg.model, fit.predictor, vars(cfg).copy(), fit.history, fit.seconds, fit.device
        )
        new = replace(state, models={**state.models, name: model})
        h = fit.history
        val = (
            f", val acc {h['val_acc'][-1]:.2f} (best {max(h['val_acc']):.2f})"
            if h.get("val_acc")
            else ""
        )
        notes = leakage_notes(state.history, "validation") if val else []
        return new, "\n".join(
            [
                f"trained '{name}' on {fit.device} in {fit.seconds:.1f} s: train acc "
                f"{h['acc'][-1]:.2f}{val}. Call evaluate_model('{name}') for test metrics",
                *(f"note: {n}" for n in notes),
            ]
        )

    return op


def seeded_turn(cfg):
    """The turn train_op(cfg) must hold (None for CSP+LDA, which draws nothing from torch)."""
    if cfg.model == "csp_lda":
        return None
    from brainchat.eeg.decoding.seeded import take_turn

    return lambda: take_turn(_waiting)


def _build(state: StudyState, cfg):
    """The untrained network, its initial weights drawn from the training seed (so the same seed
    trains the same model, and an exported script can redo it)."""
    import torch

    from brainchat.eeg.decoding.models import build_model

    X = state.eps.X
    torch.manual_seed(cfg.seed)
    return build_model(
        cfg.model, X.shape[1], X.shape[2], len(state.eps.classes), state.eps.info["sfreq"]
    )


def evaluate_op(name: str | None) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        state.require("trained")
        key = name or list(state.models)[-1]
        if key not in state.models:
            raise ToolException(f"no model named '{key}'; trained: {', '.join(state.models)}")
        phase("evaluating", f"evaluating {key} on the test set")
        from brainchat.eeg.decoding import training
        from brainchat.eeg.preprocessing import plots

        model, classes = state.models[key], state.eps.classes
        data = split_arrays(state)
        proba = model.predictor.predict_proba(data["X_test"])
        res = training.metrics(data["y_test"], proba, classes)
        lines = [
            f"{key} on {res['n_test']} test epochs: accuracy {res['accuracy']:.3f}, "
            f"balanced {res['balanced_accuracy']:.3f}, kappa {res['kappa']:.3f}, "
            f"ROC AUC {res['roc_auc']:.3f}"
        ]
        for c, m in res["per_class"].items():
            lines.append(
                f"  {c}: precision {m['precision']:.2f}, recall {m['recall']:.2f}, "
                f"F1 {m['f1']:.2f} (n={m['support']})"
            )
        lines.append(
            f"confusion (rows true, cols predicted, {'/'.join(classes)}): {res['confusion']}"
        )
        lines += [f"note: {n}" for n in leakage_notes(state.history, "test")]
        if state.split is not None and (held := split_note(state.eps, state.split)):
            lines.append(f"note: {held}")
        lines.append(
            emit_image(
                plots.confusion(res["confusion"], classes, f"{key} confusion matrix"),
                f"{key} confusion matrix",
            )
        )
        if len(model.history.get("acc", [])) > 1:
            title = f"{key} training curves"
            lines.append(emit_image(plots.training_curves(model.history, title), title))
        return replace(state, results={**state.results, key: res}), "\n".join(lines)

    return op


def ica_fit_op(n_components: int, method: str, seed: int) -> Op:
    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        import mne

        state.require("loaded")
        if state.stage != "loaded":
            raise ToolError(
                "ICA applies to continuous data: call reset_preprocessing first",
                call("reset_preprocessing"),
            )
        n_ch = len(state.raws[0].ch_names)
        if n_components > n_ch - (1 if any(s.op == "reference" for s in state.history) else 0):
            raise ToolException(
                f"n_components {n_components} too large for {n_ch} channels "
                "(at most the data rank: channels, minus 1 after re-referencing)"
            )
        data = (
            mne.concatenate_raws([r.copy() for r in state.raws])
            if len(state.raws) > 1
            else state.raws[0]
        )
        ica = mne.preprocessing.ICA(
            n_components=n_components, method=method, rng=seed, max_iter="auto"
        )
        # MNE's fit cannot be interrupted (max_iter="auto" bounds it): a Stop that came while the
        # recordings were joined skips it; one that comes during it takes effect when it ends
        if stop.is_set():
            raise ToolException("ICA fit stopped; the study is unchanged")
        phase("fitting", f"fitting ICA ({n_components} components)", what="ICA")
        ica.fit(data, picks="eeg", decim=max(1, int(data.info["sfreq"] // 100)), verbose="error")
        hp = data.info["highpass"]
        note = (
            f"; note: high-pass is {hp:g} Hz, ICA works best after a >= 1 Hz high-pass"
            if hp < 1
            else ""
        )
        return replace(state, ica=ica), (
            f"ICA fitted: {ica.n_components_} components ({method}){note}. Call ica_components "
            "to see them, then ica_apply(exclude=[...])"
        )

    return op


def ica_apply_step(state: StudyState, exclude: list[int]) -> Step:
    if state.ica is None:
        raise ToolError("no ICA fitted: call ica_fit first", call("ica_fit"))
    bad = [k for k in exclude if not 0 <= k < state.ica.n_components_]
    if bad:
        raise ToolException(f"component(s) {bad} out of range 0..{state.ica.n_components_ - 1}")
    return Step("ica", {"ica": state.ica, "exclude": list(exclude)}, f"ICA minus {exclude}")
