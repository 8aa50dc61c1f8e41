"""A turn that another page of its thread took over (#37)."""

TEXT = {
    "live.moved": (
        "This turn continues in another tab or window of this conversation; reload this page to "
        "follow it here.",
        "本轮对话已在此对话的另一个标签页或窗口中继续；重新加载本页即可在此查看。",
        "本輪對話已在此對話的另一個分頁或視窗中繼續；重新載入本頁即可在此查看。",
    ),
}
