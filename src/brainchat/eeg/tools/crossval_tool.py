"""The `cross_validate` agent tool: its argument schema, and the study operation it runs."""

from __future__ import annotations

import threading
from dataclasses import asdict, replace
from typing import Any, Literal

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field, field_validator

from brainchat.eeg.core.leakage import leakage_notes
from brainchat.eeg.core.state import Op, StudyState
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.toolkit import TRAINING_MODULES, make_tool, preload, run_op
from brainchat.events import ToolProgress, current_tool_call, emit

Protocol = Literal["within_session", "cross_session", "cross_subject"]
Pipeline = Literal["csp_lda", "ts_lr", "mdm", "fbcsp", "eegnet", "shallowconvnet", "sccnet"]
NETWORKS = ("eegnet", "shallowconvnet", "sccnet")

DESCRIPTION = (
    "Cross-validate decoding pipelines on the epochs with a MOABB protocol: within_session "
    "(stratified k-fold inside each subject's session), cross_session (leave one session out, "
    "per subject) or cross_subject (leave one subject out; each of its sessions scored apart, "
    "as MOABB). Pipelines: csp_lda, ts_lr "
    "(Riemannian tangent space + logistic regression), mdm, fbcsp (filter-bank CSP: 4-40 Hz "
    "bands filtered per trial, not on the recording; features picked by mutual information), "
    "eegnet, shallowconvnet, sccnet; every step is fitted on each training fold only. Returns "
    "scores per subject/session (ROC AUC for 2 classes, else accuracy; balanced accuracy and "
    "kappa beside it for 3+ or unequal classes), mean ± sd, a permutation chance level and "
    "p-value per pipeline and per subject, paired Wilcoxon tests across subjects, and a "
    "per-subject score plot. Needs epochs (epoch_data); ignores split_dataset."
)


class CrossValidateArgs(BaseModel):
    protocol: Protocol = Field(
        "within_session", description="within_session, cross_session or cross_subject"
    )
    pipelines: list[Pipeline] = Field(
        ["csp_lda", "ts_lr"],
        min_length=1,
        max_length=7,
        description="csp_lda, ts_lr, mdm, fbcsp, eegnet, shallowconvnet, sccnet",
    )
    folds: int = Field(5, ge=2, le=20, description="k of within_session's k-fold")
    permutations: int = Field(
        20,
        ge=0,
        le=1000,
        description="label permutations for the chance level and p-value (p >= 1/(n+1); "
        "each one refits every fold: keep it low for the networks)",
    )
    seed: int = Field(0, ge=0, description="seeds the folds, the permutations and the networks")
    epochs: int = Field(30, ge=1, le=500, description="training epochs of the networks")

    @field_validator("pipelines")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))


def _progress(done: int, total: int) -> None:
    call_id, name = current_tool_call()
    emit(
        ToolProgress(
            call_id=call_id,
            name=name,
            message=f"fold {done}/{total}",
            fraction=done / total,
            data={"done": done, "total": total},
        )
    )


def crossval_record(cfg) -> dict[str, Any]:
    """The log entry of a cross_validate call; its op adds the result (`result`) when it ends,
    so a resumed conversation gets it back without refitting, and the export reruns it."""
    return {"op": "crossval", "config": asdict(cfg)}


def crossval_op(cfg, record: dict[str, Any] | None = None) -> Op:
    """Cross-validate the epochs; the result is kept in the state (per protocol) and `record`."""

    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.decoding.decoding import emit_image
        from brainchat.eeg.protocols.crossval import cross_validate_arrays
        from brainchat.eeg.protocols.report import subject_plot, table
        from brainchat.eeg.protocols.result_json import to_json
        from brainchat.eeg.protocols.runner import Cancelled
        from brainchat.eeg.protocols.splits import ProtocolError

        state.require("epoched")
        eps = state.eps
        try:
            res = cross_validate_arrays(
                cfg,
                eps.X,
                eps.y,
                eps.subjects,
                eps.sessions,
                float(eps.info["sfreq"]),
                progress=_progress,
                should_stop=stop.is_set,
            )
        except ProtocolError as exc:
            raise ToolException(str(exc)) from None
        except Cancelled as exc:
            raise ToolException(
                f"cross-validation stopped after {exc.done} of {exc.total} folds; nothing kept"
            ) from None
        res = replace(res, notes=[*res.notes, *leakage_notes(state.history, "crossval")])
        title = f"{cfg.protocol} scores per subject"
        classes = "/".join(eps.classes)
        text = table(res).replace(" epochs,", f" epochs ({classes}),", 1)
        data = to_json(res, eps.classes)
        if record is not None:
            record["result"] = data
        kept = replace(state, crossval={**state.crossval, cfg.protocol: data})
        return kept, text + "\n" + emit_image(subject_plot(res), title)

    return op


def crossval_tools(study: Study) -> list[BaseTool]:
    async def cross_validate(**kwargs) -> str:
        from brainchat.eeg.protocols.crossval import CVConfig

        args = CrossValidateArgs(**kwargs)
        cfg = CVConfig(
            args.protocol,
            tuple(args.pipelines),
            args.folds,
            args.permutations,
            args.seed,
            args.epochs,
        )
        turn = None
        if any(p in NETWORKS for p in cfg.pipelines):
            await preload(TRAINING_MODULES)  # torch: imported off the event loop
            from brainchat.eeg.decoding.decoding import _waiting
            from brainchat.eeg.decoding.seeded import take_turn

            # networks draw their weights from torch's one process-wide generator (seeded.py)
            turn = lambda: take_turn(_waiting)  # noqa: E731
        record = crossval_record(cfg)
        return await run_op(study, crossval_op(cfg, record), record=record, turn=turn)

    return [
        make_tool(
            cross_validate,
            "cross_validate",
            DESCRIPTION,
            CrossValidateArgs,
            long_running=True,
            timeout=3600,
        )
    ]
