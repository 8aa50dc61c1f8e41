"""The answer check reads what an answer says, in English and Chinese, against what the run did.

Each case is one the check got wrong before: a figure glued to Chinese text, an invented row in a
code block, a tool claimed as called that never was, a step the user asked for counted as done,
"22 events" grounded by "22 ch", a derived figure flagged, a verdict about results nobody
produced, a Chinese paragraph flagged as one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from brainchat.eeg.guidance import EEG
from brainchat.grounding import check_answer, mark
from brainchat.grounding.figures import Shown, figures
from brainchat.grounding.lexicon import SENTENCE_END

TOOLS = ["load_data", "bandpass_filter", "epoch_data", "split_dataset", "train_model",
         "evaluate_model", "cross_validate", "set_reference"]  # fmt: skip
LOAD = "loaded 4 file(s)\n" + "".join(
    f"- demo/sub-0{s}_ses-0{e}_task-mi_eeg.edf: subject 0{s}, session 0{e}, 22 ch @ 250 Hz, "
    "155 s, events: left_hand 24, right_hand 24\n"
    for s in (1, 2)
    for e in (1, 2)
)
CV = (
    "cross_validate within_session (5 folds per session, seed 0): 80 epochs; score ROC AUC "
    "(chance ~0.5)\npipeline | mean ± sd over subjects | permutation test | per subject\n"
    "csp_lda | 0.812 ± 0.010 | chance 0.565, p=0.048 (20 perms) | 0.80 0.82\n"
    "ts_lr | 0.743 ± 0.000 | chance 0.565, p=0.167 (20 perms) | 0.74 0.74"
)
QUESTION = "先做 4-40 Hz 带通滤波，再用 sub-01 的两个会话训练 EEGNet，告诉我测试集准确率"


@dataclass
class Entry:
    name: str
    status: str
    result: str = ""
    error: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    reused: Any = None
    declined: bool = False


@dataclass
class Ledger:
    entries: list[Entry]
    sources: list[dict[str, Any]] = field(default_factory=list)


def flags(answer: str, ledger: Ledger, known: tuple[str, ...] = (), study: str = "") -> list[Any]:
    return check_answer(
        answer, ledger, [*known, study], TOOLS, study=study, vocabulary=EEG.vocabulary
    )


FAILED = Ledger([Entry("load_data", "error", error="x"), Entry("train_model", "error", error="y")])
LOADED = Ledger([Entry("load_data", "success", LOAD)])
CROSSVAL = Ledger([Entry("cross_validate", "success", CV)])
EVALUATED = Ledger(
    [
        Entry(
            "evaluate_model",
            "success",
            "csp_lda on 39 test epochs: accuracy 0.974\nconfusion (rows true, cols predicted, "
            "left_hand/right_hand): [[20, 0], [1, 18]]",
        )
    ]
)
SEARCHED = Ledger(
    [
        Entry(
            "web_search",
            "success",
            "[1] EEGNet\nhttps://e.org\nEEGNet uses depthwise and separable convolutions.",
        )
    ],  # fmt: skip
    [{"n": 1, "title": "EEGNet", "url": "https://e.org", "snippet": "s"}],
)


@pytest.mark.parametrize(
    ("answer", "ledger", "kind"),
    [
        ("4-40 Hz 带通滤波的测试集准确率为82.5%。", FAILED, "figure"),  # glued to Chinese text
        ("```\nPower: 0.04\n```", FAILED, "figure"),  # a table row in a code block
        (
            "set_reference, cross_validate and evaluate_model were called successfully.",
            FAILED,
            "claim",
        ),  # fmt: skip
        ("The band-pass filter was applied.", FAILED, "claim"),  # asked for is not done
        ("已完成 8-30 Hz 带通滤波。", LOADED, "claim"),
        ("It was also re-referenced to the average.", LOADED, "claim"),
        ("There are 22 events.", LOADED, "figure"),  # 22 is the channel count
        ("事件数：22", LOADED, "figure"),  # the label before the figure names its kind
        ("p = 0.743 shows it is significant.", CROSSVAL, "figure"),  # a score is no p-value
        ("Yes: separable.", LOADED, "claim"),  # a verdict, and no result to rest on
        ("MDM was better than CSP+LDA here.", CROSSVAL, "claim"),  # MDM never ran
        ("MDM 明显优于这两种方法。", CROSSVAL, "claim"),
        ("EEGNet is a compact CNN [3].", LOADED, "citation"),
        ("EEGNet is better than CSP on this data.", SEARCHED, "claim"),  # no source says so
    ],
)
def test_a_false_statement_is_flagged(answer: str, ledger: Ledger, kind: str) -> None:
    found = flags(answer, ledger, (QUESTION,))
    assert [f.kind for f in found] and {f.kind for f in found} == {kind}, found


@pytest.mark.parametrize(
    ("answer", "ledger"),
    [
        ("数据已加载，下一步是带通滤波。", LOADED),  # the clause with 已 is about loading
        ("There are 22 channels and 192 trials in all.", LOADED),  # 4 files × 48 trials
        ("共有 22 个通道，192 个试次。", LOADED),
        ("CSP+LDA beat TS+LR by 6.9 points (0.812 vs 0.743).", CROSSVAL),  # a difference
        ("CSP+LDA 比切空间分类器高 6.9 个百分点（0.812 对 0.743），p = 0.048。", CROSSVAL),
        ("The confusion matrix is 20 / 0 and 1 / 18.", EVALUATED),  # a matrix's cells
        ("In general, Riemannian classifiers often outperform CSP.", Ledger([])),  # knowledge
        ("Should I split the data by trial?", LOADED),  # a question claims nothing
        (
            "EEGNet outperforms CSP on this benchmark [1].",
            Ledger([], [{"n": 1, "title": "t", "url": "u", "snippet": "s"}]),
        ),  # fmt: skip
        ("The network uses depthwise and separable convolutions.", SEARCHED),  # the source's words
        (
            "With an 80 µV threshold, 3 of 20 epochs exceed it.",
            Ledger(
                [
                    Entry(
                        "epoch_data",
                        "success",
                        "epoched: 17 epochs (left_hand 8, right_hand 9); 3 rejected",
                        args={"reject_uv": 80},
                    )
                ]
            ),
        ),  # fmt: skip
    ],
)
def test_a_true_statement_passes(answer: str, ledger: Ledger) -> None:
    assert not flags(answer, ledger, (QUESTION,)), flags(answer, ledger, (QUESTION,))


def test_an_earlier_turns_step_is_shown_by_the_study_not_by_the_request() -> None:
    study = "EEG study: stage=loaded; 1 file(s); preprocessing: band-pass 8-30 Hz"
    said = "The data were band-passed 8-30 Hz."
    assert not flags(said, Ledger([]), (), study)
    assert flags(said, Ledger([Entry("get_study_state", "success", "x")]), ("band-pass 8-30 Hz",))


def test_a_chinese_paragraph_is_read_sentence_by_sentence() -> None:
    answer = "已加载 sub-01 的两个会话。训练集准确率为 0.99。共有 22 个通道。"
    parts = [p for p in SENTENCE_END.split(answer) if p]
    assert parts == ["已加载 sub-01 的两个会话。", "训练集准确率为 0.99。", "共有 22 个通道。"]
    found = flags(answer, LOADED)
    assert [f.sentence for f in found] == ["训练集准确率为 0.99。"]
    marked = mark(answer, found)
    assert marked.count("⚠️") == 1 and marked.index("⚠️") < marked.index("共有")


def test_a_figure_carries_its_kind_from_the_words_around_it() -> None:
    units = EEG.vocabulary.all_units()
    got = {f.text: f.kind for f in figures("22 个通道、250 Hz、8 held-out test epochs, p = 0.048", units)}  # fmt: skip
    assert got == {"22": "channels", "250": "hz", "8": "events", "0.048": "p"}
    shown = Shown([LOAD], units)
    (twenty_two,) = figures("22 events", units)
    assert not shown.holds(twenty_two) and shown.kinds_of(twenty_two) == ["channels"]


def test_a_range_end_and_a_negative_value_of_a_result_are_shown() -> None:
    """An analysis writes spans and signed changes ("400-1340 ms", "C4 -41.4 %"); an answer may
    state "until 1340 ms" or "a 41.4 % drop". A name's number (sub-01) shows nothing."""
    units = EEG.vocabulary.all_units()
    shown = Shown(
        ["cluster #1: C4, 400-1340 ms; t sum -188.8; mu: C4 -41.4 % (ERD); sub-07"], units
    )
    for said in ("until 1340 ms", "a 41.4 % drop", "a t sum of 188.8", "from 400 ms"):
        (figure,) = figures(said, units)
        assert shown.holds(figure), said
    for said in ("1341 ms", "41.5 %", "7 subjects"):
        (figure,) = figures(said, units)
        assert not shown.holds(figure), said


NOT_APPROVED = Ledger(
    [
        Entry(
            "clear_study",
            "refused",
            error="the user did not approve running clear_study",
            declined=True,
        ),  # fmt: skip
        Entry("list_data_files", "success", result="1 file(s) in the data folder"),
    ]
)


@pytest.mark.parametrize(
    "answer",
    [
        "好的，我会把你的研究中的所有东西都清空。",  # Qwen2.5-Coder-1.5B after the user said no
        "I will clear your study now.",
        "The study was cleared.",
        "OK: clear_study runs next.",
    ],
)
def test_a_call_the_user_did_not_approve_is_never_spoken_of_as_done_or_to_be_done(
    answer: str,
) -> None:
    (flag,) = flags(answer, NOT_APPROVED)
    assert flag.why == "clear_study was not approved, and did not run"
    assert "did not run" in mark(answer, [flag])


@pytest.mark.parametrize(
    "answer",
    [
        "I did not clear the study: the request to run clear_study was not approved.",
        "研究没有被清空，因为你没有批准。",
        "Your data folder holds one file.",
        "If you still want the study cleared, ask again and approve clear_study.",
        "如果你仍想清空研究，请再次提出并批准。",
        "Shall I clear the study once you approve it?",
    ],
)
def test_an_answer_that_denies_the_unapproved_call_or_leaves_it_out_passes(answer: str) -> None:
    assert flags(answer, NOT_APPROVED) == []


def test_a_call_approved_on_a_second_ask_is_no_promise() -> None:
    """Declined once, then approved and run: the run shows it done."""
    ledger = Ledger(
        [
            Entry("clear_study", "refused", declined=True),
            Entry("clear_study", "success", result="study cleared"),
        ]
    )
    assert flags("I will clear the study, as asked.", ledger) == []
