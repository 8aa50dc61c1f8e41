"""cross_validate runs the pipelines the request names when the model copies the default list
(golden run of 25 Nov, eeg-crossval-leave-one-subject-out: asked to "compare CSP+LDA with
Riemannian MDM", Qwen2.5-Coder-1.5B sent pipelines ["csp_lda", "ts_lr"], the schema's default,
and MDM was never run). The repair goes through the agent's own `repaired`, as a call does."""

from __future__ import annotations

import pytest

from brainchat.agent.repair import repaired
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.crossval_tool import crossval_tools, named_pipelines

QUESTION = (
    "Leave one subject out and compare CSP+LDA with Riemannian MDM. Is one significantly "
    "better? Tell me the chance levels and the test you used."
)
VERBATIM = {"protocol": "cross_subject", "pipelines": ["csp_lda", "ts_lr"], "folds": 5,
            "permutations": 20, "seed": 0, "epochs": 30}  # fmt: skip


@pytest.fixture
def tool(tmp_path):
    (cv,) = [t for t in crossval_tools(Study(tmp_path)) if t.name == "cross_validate"]
    return cv


def test_the_copied_default_becomes_the_pipelines_the_request_names(tool) -> None:
    call = repaired({"name": "cross_validate", "args": dict(VERBATIM)}, tool, QUESTION)
    assert call["args"]["pipelines"] == ["csp_lda", "mdm"]
    assert call["args"]["protocol"] == "cross_subject" and call["args"]["permutations"] == 20
    assert call["repaired"] == [
        'pipelines ["csp_lda", "ts_lr"] became ["csp_lda", "mdm"], the ones the request names'
    ]


@pytest.mark.parametrize(
    ("question", "args", "want"),
    [
        (QUESTION, {"protocol": "cross_subject"}, ["csp_lda", "mdm"]),  # none sent: the default
        (QUESTION, {"pipelines": ["fbcsp"]}, ["fbcsp"]),  # the model's own choice stays
        ("Cross-validate CSP+LDA against tangent space + LR.", {}, None),  # the default itself
        ("Cross-validate within each session.", {}, None),  # no pipeline named
        ("Would EEGNet beat a filter-bank CSP?", {}, ["eegnet", "fbcsp"]),
    ],
)
def test_only_a_default_list_is_replaced_and_only_by_named_pipelines(
    tool, question, args, want
) -> None:
    call = repaired({"name": "cross_validate", "args": dict(args)}, tool, question)
    assert call["args"].get("pipelines") == (want if want is not None else args.get("pipelines"))
    assert bool(call.get("repaired")) is (want is not None and want != args.get("pipelines"))


def test_pipelines_are_named_in_the_order_the_request_names_them() -> None:
    assert named_pipelines("MDM or CSP/LDA, and ShallowConvNet?") == [
        "mdm", "csp_lda", "shallowconvnet"
    ]  # fmt: skip
    assert named_pipelines("What is a common spatial pattern?") == []
