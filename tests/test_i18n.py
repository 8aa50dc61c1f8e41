"""brainchat's own text: every message in every language, with the same placeholders, in the
right script, and the language chosen from the browser's tag as Chainlit chooses its own."""

from __future__ import annotations

import pytest

from brainchat import i18n

# Characters that exist only in one script: a zh-TW message copied from zh-CN (or the reverse)
# carries some of them.
SIMPLIFIED_ONLY = set(
    "这们个时数据载选择设请错误对话项开关显示为务运间应该图无从让给钮键导删确认连接将体读写网络页"
    "长过还发现问题经结实验计练训测试类动态标题输览历记录帮编辑语单击传滤频谱当前会执详细"
)
TRADITIONAL_ONLY = set(
    "這們個時數據載選擇設請錯誤對話項開關顯示為務運間應該圖無從讓給鈕鍵導刪確認連接將體讀寫網絡頁"
    "長過還發現問題經結實驗計練訓測試類動態標題輸覽歷記錄幫編輯語單擊傳濾頻譜當前會執詳細"
)
# Characters written the same in both scripts (接 in 连接/連接, 示, 前) are no evidence either way.
SIMPLIFIED_ONLY, TRADITIONAL_ONLY = (
    SIMPLIFIED_ONLY - TRADITIONAL_ONLY,
    TRADITIONAL_ONLY - SIMPLIFIED_ONLY,
)


@pytest.mark.parametrize("key", sorted(i18n.table()))
def test_every_message_exists_in_every_language(key: str) -> None:
    texts = i18n.every(key)
    assert len(texts) == len(i18n.LANGS), key
    assert all(text.strip() for text in texts), f"{key}: an empty translation"
    en, cn, tw = texts
    assert i18n.fields(cn) == i18n.fields(en) == i18n.fields(tw), f"{key}: placeholders differ"
    assert not SIMPLIFIED_ONLY & set(tw), f"{key}: zh-TW has simplified characters: {tw}"
    assert not TRADITIONAL_ONLY & set(cn), f"{key}: zh-CN has traditional characters: {cn}"


def test_the_table_is_not_empty_and_english_differs_from_chinese() -> None:
    table = i18n.table()
    assert len(table) > 1
    same = [k for k, (en, cn, _) in table.items() if en == cn and any(c.isalpha() for c in en)]
    # Only text that is the same in both (a name, a unit) may be identical.
    assert len(same) < len(table) / 10, same


@pytest.mark.parametrize(
    ("tag", "lang"),
    [
        ("zh-CN", "zh-CN"),
        ("zh", "zh-CN"),
        ("zh-SG", "zh-CN"),
        ("zh-Hans-CN", "zh-CN"),
        ("zh-TW", "zh-TW"),
        ("zh-HK", "zh-TW"),
        ("zh_TW", "zh-TW"),
        ("zh-Hant", "zh-TW"),
        ("en-GB", "en"),
        ("de-DE", "en"),
        ("de-DE,zh-TW;q=0.8,en;q=0.5", "zh-TW"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_pick_maps_a_browser_tag_to_a_language(tag: str | None, lang: str) -> None:
    assert i18n.pick(tag) == lang


def test_use_and_the_resolver_choose_the_language() -> None:
    key = "common.cancel"
    assert i18n.t(key, "zh-TW") == "取消"
    i18n.set_resolver(lambda: "zh-HK")
    try:
        assert i18n.current() == "zh-TW"
        i18n.use("en-US")
        assert i18n.current() == "en" and i18n.t(key) == "Cancel"
        i18n.use(None)
        assert i18n.current() == "zh-TW"
        i18n.set_resolver(lambda: (_ for _ in ()).throw(LookupError("no session")))
        assert i18n.current() == "en"  # outside a session: English
    finally:
        i18n.set_resolver(None)
        i18n.use(None)
