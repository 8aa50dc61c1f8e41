"""An answer that states none of the figures its run's last result gave is followed by that
result's own lines, marked as brainchat's; an answer that gives a figure, or a run with no
result to rest on, is left as written. Over real HTTP with the scripted server."""

from __future__ import annotations

import pytest
from langchain_core.tools import StructuredTool

from brainchat.agent.graph import build_agent
from brainchat.eeg.guidance import EEG
from brainchat.llm import make_chat_model
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.registry import set_flags

from support import collect, of, spec

CV = (
    "cross_validate cross_subject (leave-one-out: each subject held out in turn, seed 0): 60 "
    "epochs, 3 subject(s); score ROC AUC (chance 0.5 at any class balance)\n"
    "pipeline | ROC AUC mean ± sd over subjects | permutation test | ROC AUC per subject 01 02 03\n"
    "csp_lda | 0.612 ± 0.041 | chance 0.515, p=0.048 (20 perms) | 0.58 0.60 0.66"
)
LOADED = "loaded 1 file(s)\n- demo/sub-01_ses-01_task-mi_eeg.edf: 22 ch @ 250.0 Hz, 155.5 s"


def tool(name: str, result: str) -> StructuredTool:
    async def run() -> str:
        return result

    made = StructuredTool.from_function(coroutine=run, name=name, description=f"{name} tool")
    return set_flags(made, read_only=True)  # type: ignore[return-value]


async def answered(server, name: str, result: str, answer: str):
    server.queue("fc", ToolCalls([Call(name, {})]), Text("done"))
    server.queue("ans", Text(answer))
    fc = make_chat_model(spec(server, "fc"), "function_call")
    ans = make_chat_model(spec(server, "ans"), "answer")
    question = "CSP+LDA 解码器在一个从没见过的人身上能用吗？"
    return await collect(build_agent(fc, ans, [tool(name, result)], domain=EEG).run(question))


@pytest.mark.scripted_lenient("the run may answer after the one result")
async def test_a_verdict_with_none_of_the_results_figures_is_followed_by_them(
    scripted_server,
) -> None:
    events = await answered(scripted_server, "cross_validate", CV, "是的，能用。")
    final = of(events, "run_finished")[0].answer
    assert final.startswith("是的，能用。")  # the model's words, unchanged
    under = final.split("是的，能用。", 1)[1]
    assert "none of the figures cross_validate returned" in under and "added by brainchat" in under
    assert "csp_lda | 0.612 ± 0.041 | chance 0.515, p=0.048" in under
    assert of(events, "answer_checked")[-1].text == final  # the page shows what the run returns


@pytest.mark.scripted_lenient("the run may answer after the one result")
async def test_an_answer_that_gives_a_figure_of_the_result_is_left_as_written(
    scripted_server,
) -> None:
    said = "能用：CSP+LDA 的 ROC AUC 为 0.61，高于机会水平 0.515（p=0.048）。"
    events = await answered(scripted_server, "cross_validate", CV, said)
    assert of(events, "run_finished")[0].answer == said


@pytest.mark.scripted_lenient("the run may answer after the one result")
async def test_a_run_with_no_result_to_rest_on_adds_nothing(scripted_server) -> None:
    events = await answered(scripted_server, "load_data", LOADED, "Loaded.")
    assert of(events, "run_finished")[0].answer == "Loaded."


@pytest.mark.scripted_lenient("the run may answer after the one result")
async def test_the_results_notes_to_the_model_stay_with_the_model(scripted_server) -> None:
    result = (
        f"{CV}\nimage: csp_lda scores per subject shown to the user\nnote: each subject held out"
    )
    events = await answered(scripted_server, "cross_validate", result, "是的，能用。")
    under = of(events, "run_finished")[0].answer.split("是的，能用。", 1)[1]
    assert "csp_lda | 0.612 ± 0.041" in under and "pipeline | ROC AUC mean" in under
    assert "shown to the user" not in under and "note:" not in under
