"""The worked examples a guided model is shown (eeg/guidance/worked.py, examples.py): a gold set of
requests, in English and Chinese, and the calls a researcher makes for them.

Each call is one the real tool takes; every EEG tool and the web search has an example in each
language, so a request for any of them can meet one; retrieval (BM25 over words and CJK character
pairs) finds an example in the request's own language and leaves out ones that share only a
common word.
"""

from __future__ import annotations

import re

import pytest

from brainchat.eeg.guidance.examples import RELATIVE, nearest, tokens
from brainchat.eeg.guidance.worked import EXAMPLES, POSITIONS, record_of
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools

CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    return {t.name: t for t in build_eeg_tools(Study(tmp_path_factory.mktemp("data")))}


def test_every_example_call_is_one_the_tool_takes(tools) -> None:
    for request, calls in EXAMPLES:
        for name, args in calls:
            if name == "web_search":
                assert set(args) == {"query"}, request
                continue
            assert name in tools, (request, name)
            # a listing's files stand in <brackets>: the model copies names from the listing
            real = {k: (["a.edf"] if isinstance(v, str) and v.startswith("<") else v) for k, v in args.items()}  # fmt: skip
            tools[name].args_schema.model_validate(real)


def test_every_tool_has_an_example_in_english_and_in_chinese(tools) -> None:
    seen: dict[str, set[bool]] = {}
    for request, calls in EXAMPLES:
        for name, _ in calls:
            seen.setdefault(name, set()).add(bool(CJK.search(request)))
    missing = [n for n in [*tools, "web_search"] if seen.get(n) != {False, True}]
    assert not missing, missing


def test_files_picked_by_place_become_positions() -> None:
    for place, positions in POSITIONS.items():
        made = record_of((("load_data", {"files": place}),))
        assert made["positions"] == positions and made["fixed"] == {}


@pytest.mark.parametrize(
    ("request_text", "first"),
    [
        ("我的数据文件夹里有哪些脑电文件？", "list_data_files"),
        ("在网上查一下 EEGNet 用的是哪种卷积？请注明出处。", "web_search"),
        ("Is this separable?", "load_data"),
        ("Wipe the study and begin again.", "clear_study"),
    ],
)
def test_the_nearest_example_is_in_the_requests_language(request_text: str, first: str) -> None:
    found = nearest(request_text, 2)
    assert found and found[0].calls.split("(")[0] == first
    assert bool(CJK.search(found[0].request)) == bool(CJK.search(request_text))


def test_an_example_far_below_the_best_is_left_out() -> None:
    """'Does it generalize ...' shares only "does" with a web question: not shown beside the
    web example that shares its meaning."""
    found = nearest("Search the web: what kind of convolutions does EEGNet use? Cite your sources.", 2)  # fmt: skip
    assert [ex.calls.split("(")[0] for ex in found] == ["web_search"]
    assert 0 < RELATIVE < 1


def test_chinese_is_split_into_characters_and_pairs() -> None:
    assert tokens("带通滤波 8-30 Hz") == [
        "带",
        "通",
        "滤",
        "波",
        "带通",
        "通滤",
        "滤波",
        "8-30",
        "8",
        "30",
        "hz",
        "§preprocess",
    ]
    assert nearest("", 2) == [] and nearest("xyzzy", 2) == []


def test_a_joined_word_counts_its_parts_too() -> None:
    assert {"csp+lda", "csp", "lda"} <= set(tokens("CSP+LDA"))
    assert {"mne-python", "mne", "python"} <= set(tokens("MNE-Python"))


@pytest.mark.parametrize(
    ("english", "chinese", "named"),
    [
        ("Does it hold across sessions?", "跨会话还成立吗？", "§cross_session"),
        ("Leave one subject out.", "留一被试。", "§cross_subject"),
        ("Epoch the recording.", "把记录分段。", "§epoch"),
        ("Run a cluster permutation test.", "做一个基于簇的检验。", "§statistics"),
        ("Look up the literature.", "查一下文献。", "§web"),
    ],
)
def test_a_step_or_choice_named_in_either_language_is_one_token(
    english: str, chinese: str, named: str
) -> None:
    assert named in tokens(english) and named in tokens(chinese)


def test_the_protocol_a_request_names_outweighs_words_shared_by_chance() -> None:
    """The request names a cross-session protocol and a chance level. An example about chance
    levels alone shares more characters with it (机会水平); the cross-session one shares the
    protocol, and is shown."""
    found = nearest("这个分类器换到另一个会话上还能用吗？顺便给出机会水平。", 2)
    protocols = [ex.record.get("fixed", {}).get("cross_validate", {}).get("protocol") for ex in found]  # fmt: skip
    assert "cross_session" in protocols


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("我的研究里现在有什么？", ["inspect"]),
        ("What is in my study right now?", ["inspect"]),
        # beside a step the study is that step's object, not a request to read it
        ("清空当前的研究，重新开始", ["clear"]),
        ("Clear the study and start over.", ["clear"]),
        # a file format is not a file: a question about formats lists nothing
        ("MNE 能读取哪些文件格式？", ["load"]),
        ("我的数据文件夹里有哪些脑电文件？", ["list"]),
    ],
)
def test_the_study_named_alone_is_a_question_about_it(text: str, steps: list[str]) -> None:
    from brainchat.eeg.guidance.terms import STEP_TERMS, named

    assert [n for n in named(text) if n in STEP_TERMS] == steps


def test_a_question_about_the_study_is_shown_a_reading_of_it_not_a_clearing() -> None:
    for text in ("我的研究里现在有什么？", "What is in my study right now?"):
        assert [e.calls for e in nearest(text, 2)][0] == "get_study_state()"
