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
    notes = [n for n in call.get("repaired", []) if n.startswith("pipelines")]
    assert bool(notes) is (want is not None and want != args.get("pipelines"))


def test_pipelines_are_named_in_the_order_the_request_names_them() -> None:
    assert named_pipelines("MDM or CSP/LDA, and ShallowConvNet?") == [
        "mdm", "csp_lda", "shallowconvnet"
    ]  # fmt: skip
    assert named_pipelines("What is a common spatial pattern?") == []


NEW_SUBJECT = "Would a CSP+LDA decoder work on a person it has never seen? Test it fairly on the loaded subjects."  # fmt: skip
ACROSS = (
    "Does a CSP+LDA decoder generalise across sessions? Check it on the loaded recordings and "
    "give me its chance level and p-value."
)
WITHIN = (
    "Cross-validate CSP+LDA against Riemannian tangent space + logistic regression within each "
    "recording session, with a permutation chance level, and tell me which is better."
)


# verbatim: the golden run of 27 Nov (--keep): cross_session for "leave one subject out" (refused
# by the one-session data, then sent twice more) and for "a person it has never seen" (then
# within_session, a score for another question)
@pytest.mark.parametrize(
    ("question", "args", "want"),
    [
        (QUESTION, {"protocol": "cross_session", "pipelines": ["csp_lda", "mdm"], "folds": 10,
                    "permutations": 20, "seed": 0, "epochs": 30}, "cross_subject"),
        (NEW_SUBJECT, {"protocol": "cross_session", "pipelines": ["csp_lda"], "folds": 5,
                       "permutations": 20, "seed": 0, "epochs": 30}, "cross_subject"),
        (NEW_SUBJECT, {"protocol": "within_session", "pipelines": ["csp_lda"]}, "cross_subject"),
        (ACROSS, {"protocol": "within_session"}, "cross_session"),
        (ACROSS, {}, "cross_session"),  # none sent: the schema's within_session
        (WITHIN, {"protocol": "cross_subject"}, "within_session"),
    ],
)  # fmt: skip
def test_the_protocol_the_request_names_replaces_another(tool, question, args, want) -> None:
    call = repaired({"name": "cross_validate", "args": dict(args)}, tool, question)
    assert call["args"]["protocol"] == want
    sent = args.get("protocol", "within_session")
    assert f'protocol "{sent}" became "{want}", the one the request names' in call["repaired"]
    assert {k: v for k, v in call["args"].items() if k not in ("protocol", "pipelines")} == {
        k: v for k, v in args.items() if k not in ("protocol", "pipelines")
    }  # nothing else changed


@pytest.mark.parametrize(
    "question",
    [
        "Cross-validate CSP+LDA on the loaded epochs.",  # no protocol named: the model's choice
        "Compare the within-session and the cross-subject scores of CSP+LDA.",  # two named
        WITHIN,  # named, and sent
    ],
)
def test_a_protocol_named_by_nobody_or_ambiguously_is_left_as_sent(tool, question) -> None:
    args = {"protocol": "within_session", "pipelines": ["fbcsp"]}
    call = repaired({"name": "cross_validate", "args": dict(args)}, tool, question)
    assert call["args"] == args and "repaired" not in call
