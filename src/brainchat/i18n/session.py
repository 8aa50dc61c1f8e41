"""A conversation resumed, a message over the size limit, a long table cut, sign-in limits."""

TEXT = {
    "session.resumed.one": (
        "↩️ **Conversation resumed** in **{mode} mode**; the models see the last {n} answered "
        "turn(s).",
        "↩️ **对话已恢复**，当前为**{mode}模式**；模型能看到最近 {n} 轮已回答的对话。",
        "↩️ **對話已恢復**，目前為**{mode}模式**；模型能看到最近 {n} 輪已回答的對話。",
    ),
    "session.usage_so_far": (
        "Usage so far: {usage}.",
        "目前用量：{usage}。",
        "目前用量：{usage}。",
    ),
    "session.study_pending": (
        "EEG study ({steps}): restored at the first EEG tool call.",
        "EEG 研究（{steps}）：将在第一次调用 EEG 工具时恢复。",
        "EEG 研究（{steps}）：將在第一次呼叫 EEG 工具時恢復。",
    ),
    "session.too_long": (
        "⚠️ This message is {size} ({chars} characters); the limit is {limit} characters (about "
        "200 KB), so it was not sent to the model. Shorten it or split it into several messages. "
        "The rest of the conversation is kept.",
        "⚠️ 这条消息有 {size}（{chars} 个字符）；上限为 {limit} 个字符（约 200 KB），"
        "因此没有发送给模型。请缩短它，或拆成几条消息。对话的其余部分已保留。",
        "⚠️ 這則訊息有 {size}（{chars} 個字元）；上限為 {limit} 個字元（約 200 KB），"
        "因此沒有傳送給模型。請縮短它，或拆成幾則訊息。對話的其餘部分已保留。",
    ),
    "session.more_rows": ("{n} more rows", "另有 {n} 行", "另有 {n} 列"),
    "session.more_columns": ("{n} more columns", "另有 {n} 列", "另有 {n} 欄"),
    "session.not_shown": ("*({more} not shown)*", "*（{more}未显示）*", "*（{more}未顯示）*"),
    "session.too_many_logins": (
        "Too many failed logins: try again in {seconds} s.",
        "登录失败次数过多：请在 {seconds} 秒后重试。",
        "登入失敗次數過多：請在 {seconds} 秒後重試。",
    ),
    "session.ended": (
        "Your session has ended: log in again.",
        "你的会话已结束：请重新登录。",
        "你的工作階段已結束：請重新登入。",
    ),
}
