"""Words the whole interface shares."""

TEXT = {
    "common.yes": ("Yes", "是", "是"),
    "common.no": ("No", "否", "否"),
    "common.cancel": ("Cancel", "取消", "取消"),
    "common.remove": ("Remove", "删除", "刪除"),
    "common.language": ("Interface language", "界面语言", "介面語言"),
    "common.language_auto": (
        "Auto (the browser's language)",
        "自动（跟随浏览器语言）",
        "自動（跟隨瀏覽器語言）",
    ),
}
