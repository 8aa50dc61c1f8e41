"""Output schemas and structured content of `brainchat mcp-server`, read by the official SDK client
(which validates every structuredContent against the tool's outputSchema). Before #43 no tool
declared an outputSchema, and cross-validation scores and test metrics came back as text only."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
from mcp import types

from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.mcpserver.structured import STATE_TOOLS
from test_mcp_server import stdio_session, text

EDF = "sub-01_ses-01_task-mi_eeg.edf"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=20, seed=3)
    return tmp_path / "data"


async def test_tools_declare_output_schemas_where_their_result_is_data(data):
    async with stdio_session(data) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    with_schema = {n for n, t in tools.items() if t.outputSchema is not None}
    assert {"evaluate_model", "cross_validate", "band_power", "erp_analysis"} <= with_schema
    assert STATE_TOOLS <= with_schema
    assert not {"list_data_files", "plot_psd", "export_analysis"} & with_schema  # text, a figure
    for tool in tools.values():  # every schema is a valid object schema; every tool takes `study`
        if tool.outputSchema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.outputSchema)
            assert tool.outputSchema["type"] == "object"
        assert tool.inputSchema["properties"]["study"]["type"] == "string"


def checked(tool: types.Tool, result: types.CallToolResult) -> dict:
    assert not result.isError, text(result)
    assert result.structuredContent is not None
    jsonschema.validate(result.structuredContent, tool.outputSchema)
    return result.structuredContent


async def test_scores_metrics_and_state_come_back_as_the_numbers_the_text_shows(data):
    async with stdio_session(data) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}

        async def call(name: str, **args: object) -> tuple[dict, str]:
            result = await s.call_tool(name, args)  # the SDK validates it against the schema
            return checked(tools[name], result), text(result)

        loaded, said = await call("load_data", files=[EDF])
        epoched, _ = await call("epoch_data")
        cv, cv_text = await call("cross_validate", pipelines=["csp_lda"], folds=3, permutations=0)
        await call("split_dataset", test_ratio=0.25, val_ratio=0.0)
        trained, _ = await call("train_model", model="csp_lda")
        metrics, metrics_text = await call("evaluate_model")
        state, state_text = await call("get_study_state")
    assert loaded["stage"] == "loaded" and loaded["files"] == [EDF]
    assert loaded["study"] and f"study handle: {loaded['study']}" in said
    assert epoched["stage"] == "epoched" and trained["models"] == ["csp_lda"]
    assert state == {**trained, "stage": "trained"} and "stage: trained" in state_text
    (row,) = cv["summaries"]
    assert row["pipeline"] == "csp_lda" and cv["protocol"] == "within_session"
    assert f"csp_lda | {row['mean']:.3f} ± {row['sd']:.3f}" in cv_text
    assert len(cv["records"]) == 3 and all(r["pipeline"] == "csp_lda" for r in cv["records"])
    first = re.search(r"accuracy ([\d.]+), balanced ([\d.]+), kappa ([-\d.]+)", metrics_text)
    assert first is not None and metrics["model"] == "csp_lda"
    assert [f"{metrics[k]:.3f}" for k in ("accuracy", "balanced_accuracy", "kappa")] == list(
        first.groups()
    )
    assert f"{metrics['confusion']}" in metrics_text and metrics["n_test"] == sum(
        map(sum, metrics["confusion"])
    )


async def test_a_failed_call_carries_no_structured_content_and_the_client_accepts_it(data):
    async with stdio_session(data) as s:
        early = await s.call_tool("evaluate_model", {})
    assert early.isError and early.structuredContent is None and "load_data" in text(early)


def test_a_result_that_breaks_its_schema_is_named_not_sent():
    """The server checks its own structured content before sending it: a result that broke its
    outputSchema would make the SDK client raise instead of showing anything."""
    from brainchat.mcpserver.structured import mismatch

    good = {"model": "csp_lda", "accuracy": 0.9, "balanced_accuracy": 0.9, "kappa": None,
            "roc_auc": None, "per_class": {}, "confusion": [[1, 0], [0, 1]], "n_test": 2}  # fmt: skip
    assert mismatch("evaluate_model", good) is None
    assert "accuracy" in (mismatch("evaluate_model", {**good, "accuracy": "high"}) or "")
    assert mismatch("get_study_state", None) == "no structured content"
    assert mismatch("list_data_files", None) is None  # no schema: nothing to fit
