"""The plumbing of the analysis tools (eeg/core/analyses.py): run one on the study, log it with
its result, and return its figures as text for the model and as structured content."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel

from brainchat.eeg.core.analyses import ANALYSES, analysis_data, module_of
from brainchat.eeg.core.state import Op, StudyState
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.toolkit import make_tool, run_op
from brainchat.tools.errors import ToolError, call


def analysis_op(op: str, params: dict[str, Any], record: dict[str, Any]) -> Op:
    """The study op of one analysis: its result goes into `record` (the log entry), its text and
    figure to the model and the user. The study itself is not changed."""

    def run(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        from brainchat.eeg.decoding.decoding import emit_image

        spec = ANALYSES[op]
        if spec.needs == "ica":
            state.require("loaded")
            if state.ica is None:
                raise ToolError("no ICA fitted: call ica_fit first", call("ica_fit"))
        else:
            state.require(spec.needs)
        module = module_of(op)
        data = analysis_data(state)
        result = getattr(module, spec.entry)(data, stop=stop, **params)
        if stop.is_set():
            raise ToolException(f"{spec.tool} was stopped; nothing was kept")
        record["result"] = result
        text = module.text(result)
        png = module.figure(data, result, **params)
        if png:
            text += "\n" + emit_image(png, spec.about)
        return state, text

    return run


def analysis_tool(
    study: Study, op: str, description: str, schema: type[BaseModel], **flags: Any
) -> BaseTool:
    """The agent tool of analysis `op`: validated arguments in, (text, {"structured": result})
    out; the call is logged with its result (the export redoes it, a resumed study keeps it)."""
    spec = ANALYSES[op]

    async def tool(**kwargs: Any) -> tuple[str, dict[str, Any]]:
        params = schema(**kwargs).model_dump(mode="json")
        record: dict[str, Any] = {"op": op, "params": params}
        text = await run_op(study, analysis_op(op, params, record), record=record, report=True)
        return text, {"structured": record.get("result")}

    tool.__name__ = spec.tool
    return make_tool(tool, spec.tool, description, schema, structured=True, **flags)
