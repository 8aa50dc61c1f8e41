"""brainchat's own UI text follows the chosen language: the settings panel, the welcome, step
titles and notices come out in 简体中文 or 繁體中文 under `i18n.use`, and in the same English as
before otherwise. Tool names, model names and figures stay as they are."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from brainchat import i18n
from brainchat.session import Session
from brainchat.settings import load_settings


def spec(**kw: object) -> str:
    return json.dumps({"provider": "openai", "api_key": "k", **kw})


@pytest.fixture
def lang() -> Iterator[None]:
    yield
    i18n.use(None)


@pytest.fixture
def session() -> Session:
    return Session(load_settings({"AGENT_FUNCTION_CALL_MODEL": spec(model="fc")}, dotenv=False))


def panel_labels(session: Session) -> list[str]:
    from brainchat.ui import panel

    tabs = panel.sections(session)
    labels = [tab.label for tab in tabs]
    for w in panel.widgets(session):
        labels.append(w.label)
        labels += list(getattr(w, "items", None) or {})
    return labels


@pytest.mark.parametrize(
    ("lang_tag", "words"),
    [
        (
            "zh-CN",
            [
                "模型",
                "高级",
                "界面",
                "界面语言",
                "最长执行时间（秒，10–300）",
                "函数调用模型：引导",
                "自动（跟随浏览器语言）",
            ],
        ),  # fmt: skip
        (
            "zh-TW",
            [
                "模型",
                "進階",
                "介面",
                "介面語言",
                "最長執行時間（秒，10–300）",
                "函式呼叫模型：引導",
                "自動（跟隨瀏覽器語言）",
            ],
        ),  # fmt: skip
    ],
)
def test_the_settings_panel_speaks_chinese(session: Session, lang: None, lang_tag: str, words: list[str]) -> None:  # fmt: skip
    i18n.use(lang_tag)
    shown = "\n".join(panel_labels(session))
    for word in words:
        assert word in shown, (word, shown)
    # each language is offered by its own name, whatever the interface language
    assert {"English", "简体中文", "繁體中文"} <= set(panel_labels(session))


def test_the_settings_panel_keeps_its_english_and_its_values(session: Session, lang: None) -> None:
    from brainchat.ui import panel

    i18n.use("en")
    labels = panel_labels(session)
    for label in ("Models", "Agent", "Advanced", "Interface language", "Max execution time, seconds (10–300)"):  # fmt: skip
        assert any(label in shown for shown in labels), label
    i18n.use("zh-CN")
    inputs = {w.id: w for w in panel.widgets(session)}
    assert set(inputs["function_call_tool_calling"].items.values()) == {"native", "prompt", "auto"}
    assert set(inputs["interface_language"].items.values()) == {"auto", "en", "zh-CN", "zh-TW"}
    assert inputs["interface_language"].initial_value == "auto"  # outside a chat: none chosen


def test_the_settings_summary_in_chinese_keeps_model_names_and_values(session: Session, lang: None) -> None:  # fmt: skip
    from brainchat.ui import panel

    i18n.use("zh-TW")
    said = panel.summary(session)
    assert "函式呼叫：`fc`（溫度 預設，工具呼叫 native，引導 auto）" in said, said
    assert "最大迭代" in said and "max iterations" not in said


@pytest.mark.parametrize(
    ("lang_tag", "ready", "roles"),
    [
        (
            "en",
            "👋 **brainchat** is ready, in **Agent mode**.",
            "**Models:** thinking and tool calls with `fc`, final answer with `a`.",
        ),  # fmt: skip
        (
            "zh-CN",
            "👋 **brainchat** 已就绪，当前为**智能体模式**。",
            "**模型**：思考与工具调用用 `fc`，最终回答用 `a`。",
        ),  # fmt: skip
        (
            "zh-TW",
            "👋 **brainchat** 已就緒，目前為**智能體模式**。",
            "**模型**：思考與工具呼叫用 `fc`，最終回答用 `a`。",
        ),  # fmt: skip
    ],
)
def test_the_welcome_in_each_language(lang: None, lang_tag: str, ready: str, roles: str) -> None:
    from brainchat.ui import format as fmt

    i18n.use(lang_tag)
    assert i18n.t("welcome.ready", mode=i18n.t("welcome.mode.agent")) == ready
    assert fmt.roles_text({"function_call": "fc", "answer": "a"}) == roles


@pytest.mark.parametrize(
    ("lang_tag", "titles"),
    [
        (
            "en",
            [
                "web_search · 4 results · 120 ms",
                "train_model · failed · 2.00 s",
                "Agent run · 2 rounds · 1 tool call",
                "Evaluation · enough to answer",
                "x · epoch 3/12 · loss 0.500 · val acc 0.81 · ETA 9 s",
            ],
        ),  # fmt: skip
        (
            "zh-CN",
            [
                "web_search · 4 个结果 · 120 ms",
                "train_model · 失败 · 2.00 s",
                "智能体运行 · 2 轮 · 1 次工具调用",
                "评估 · 足以回答",
                "x · 第 3/12 轮 · 损失 0.500 · 验证准确率 0.81 · 约剩 9 秒",
            ],
        ),  # fmt: skip
        (
            "zh-TW",
            [
                "web_search · 4 個結果 · 120 ms",
                "train_model · 失敗 · 2.00 s",
                "智能體執行 · 2 輪 · 1 次工具呼叫",
                "評估 · 足以回答",
                "x · 第 3/12 輪 · 損失 0.500 · 驗證準確率 0.81 · 約剩 9 秒",
            ],
        ),  # fmt: skip
    ],
)
def test_step_titles_translate_their_words_and_keep_tool_names_and_figures(lang: None, lang_tag: str, titles: list[str]) -> None:  # fmt: skip
    from brainchat.events import Evaluation, ToolFinished
    from brainchat.ui import step_text as st

    i18n.use(lang_tag)
    top = [{"title": f"t{i}", "url": f"https://e.org/{i}"} for i in range(4)]
    found = ToolFinished(call_id="1", name="web_search", status="success", duration=0.12, summary="", top=top)  # fmt: skip
    failed = ToolFinished(call_id="2", name="train_model", status="error", duration=2.0, summary="x")  # fmt: skip
    progress = {"epoch": 3, "epochs": 12, "loss": 0.5, "val_acc": 0.81, "eta": 9}
    assert [
        st.finished_title(found),
        st.finished_title(failed),
        st.run_title(2, 1),
        st.evaluation_title(Evaluation(verdict="enough", reason="r")),
        st.progress_title("x", "", progress),
    ] == titles


PUNCTUATION = set("：。，、！？（）；「」“”")


@pytest.mark.parametrize("key", sorted(i18n.table()))
def test_bold_text_closes_where_markdown_can_close_it(key: str) -> None:
    """`**模型：**思考` shows its asterisks (a closing `**` after punctuation must be followed
    by a space or punctuation, CommonMark's right-flanking rule): the colon goes after the `**`."""
    for text in i18n.every(key):
        pieces = text.split("**")
        for i in range(1, len(pieces) - 1, 2):  # pieces[i] is bold; pieces[i + 1] follows it
            before, after = pieces[i][-1:], pieces[i + 1][:1]
            if before in PUNCTUATION and after and not after.isspace() and after not in PUNCTUATION:  # fmt: skip
                raise AssertionError(f"{key}: bold closes after {before!r} before {after!r}: {text}")  # fmt: skip


@pytest.mark.parametrize("lang_tag", ["zh-CN", "zh-TW"])
def test_the_stats_table_and_tool_listing_speak_chinese(lang: None, lang_tag: str) -> None:
    from brainchat.events import RoleStats, Stats
    from brainchat.ui import format as fmt

    i18n.use(lang_tag)
    row = RoleStats(role="function_call", model="fc", calls=2, input_tokens=10, output_tokens=5, seconds=0.5, cost=None)  # fmt: skip
    table = fmt.agent_stats_table(Stats(rows=[row], total_seconds=1.0, total_cost=None))
    assert (
        "| 角色 | 模型 |" in table and ("函数调用" if lang_tag == "zh-CN" else "函式呼叫") in table
    )
    assert "| fc | 2 |" in table  # the model's name and the figures as they are
    assert i18n.t("format.tools_count.many", n=3) == ("3 个工具" if lang_tag == "zh-CN" else "3 個工具")  # fmt: skip


@pytest.mark.parametrize(
    ("lang_tag", "said"),
    [
        ("en", "the limit is 200,000 characters"),
        ("zh-CN", "上限为 200,000 个字符"),
        ("zh-TW", "上限為 200,000 個字元"),
    ],  # fmt: skip
)
def test_notices_outside_a_run_speak_the_language(lang: None, lang_tag: str, said: str) -> None:
    from brainchat.ui import plan_view, structured_view
    from brainchat.ui.message_limit import MAX_MESSAGE_CHARS, too_long_notice

    i18n.use(lang_tag)
    notice = too_long_notice("x" * (MAX_MESSAGE_CHARS + 1))
    assert notice is not None and said in notice, notice
    table = structured_view.structured_block([{f"c{i}": i for i in range(40)}] * 200)
    assert {"en": "more rows", "zh-CN": "另有", "zh-TW": "另有"}[lang_tag] in table
    steps = [{"id": 1, "title": "Load", "status": "done", "tool": "load_data"}]
    assert "✓ 1. Load (`load_data`)" == plan_view.steps_text(steps)  # the plan's own words


def test_a_refused_panel_value_is_explained_in_the_users_language(session: Session, lang: None) -> None:  # fmt: skip
    from brainchat.ui import panel

    bad = panel.overrides_from({"max_iterations": 99, "function_call_temperature": "hot"})
    i18n.use("en")
    assert sorted(panel.error_line(e) for e in panel.problems(session, bad)) == [
        "Max iterations: 99 is not valid; allowed range is 1 to 30",
        "function_call temperature: 'hot' is not valid; expected a float from 0 to 2",
    ]  # as before: str(ConfigError)
    i18n.use("zh-TW")
    assert sorted(panel.error_line(e) for e in panel.problems(session, bad)) == [
        "「函式呼叫溫度」：'hot' 無效；應為 0 到 2 之間的數字",
        "「最大迭代次數」：99 無效；允許範圍為 1 到 30",
    ]


def test_a_search_step_body_counts_its_results_in_the_users_language(lang: None) -> None:
    from brainchat.events import ToolFinished
    from brainchat.ui import step_text as st

    i18n.use("zh-CN")
    top = [{"title": f"t{i}", "url": f"https://e.org/{i}"} for i in range(4)]
    found = ToolFinished(call_id="1", name="web_search", status="success", duration=0.1, summary="4 results", top=top)  # fmt: skip
    assert st._first(found) == "4 个结果" and "results" not in st._first(found)
