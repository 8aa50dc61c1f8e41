"""Model connections: the Add-a-connection form's messages, connecting, removing one."""

TEXT = {
    "connect.button": ("Add a model connection", "添加模型连接", "新增模型連線"),
    "connect.intro": (
        "🔌 **Add a model connection**: any OpenAI-compatible server (OpenAI, DeepSeek, llama.cpp's "
        "`llama-server`, vLLM, Ollama). brainchat asks its `/models` and lists the models it "
        "reports; you then pick the function-call, answer and chat models in the ⚙️ settings "
        "(Models).",
        "🔌 **添加模型连接**：任何兼容 OpenAI 的服务器（OpenAI、DeepSeek、llama.cpp 的 "
        "`llama-server`、vLLM、Ollama）。brainchat 会查询它的 `/models` 并列出其报告的模型；"
        "然后你在 ⚙️ 设置（模型）中选择函数调用、回答和聊天模型。",
        "🔌 **新增模型連線**：任何相容 OpenAI 的伺服器（OpenAI、DeepSeek、llama.cpp 的 "
        "`llama-server`、vLLM、Ollama）。brainchat 會查詢它的 `/models` 並列出其回報的模型；"
        "然後你在 ⚙️ 設定（模型）中選擇函式呼叫、回答和聊天模型。",
    ),
    "connect.again": (
        "🔌 **Add a model connection**: not added (the reason is above). Correct it and try again.",
        "🔌 **添加模型连接**：未添加（原因见上）。请更正后重试。",
        "🔌 **新增模型連線**：未新增（原因見上）。請更正後重試。",
    ),
    "connect.already_open": (
        "The **Add a model connection** form is already open below.",
        "**添加模型连接**表单已在下方打开。",
        "**新增模型連線**表單已在下方開啟。",
    ),
    "connect.asking": (
        "🔌 Asking `{name}` for its models…",
        "🔌 正在向 `{name}` 查询其模型…",
        "🔌 正在向 `{name}` 查詢其模型…",
    ),
    "connect.the_server": ("the server", "该服务器", "該伺服器"),
    "connect.cancelled": (
        "🔌 **Add a model connection**: cancelled; nothing changed.",
        "🔌 **添加模型连接**：已取消；没有任何更改。",
        "🔌 **新增模型連線**：已取消；沒有任何變更。",
    ),
    "connect.closed": (
        "🔌 **Add a model connection**: closed after no answer; nothing changed.",
        "🔌 **添加模型连接**：无回应后已关闭；没有任何更改。",
        "🔌 **新增模型連線**：無回應後已關閉；沒有任何變更。",
    ),
    "connect.not_added": (
        "⚠️ **Connection not added:** {reason}.\n\n"
        "Nothing changed; the models in force stay: {summary}.",
        "⚠️ **连接未添加**：{reason}。\n\n没有任何更改；当前模型保持不变：{summary}。",
        "⚠️ **連線未新增**：{reason}。\n\n沒有任何變更；目前模型維持不變：{summary}。",
    ),
    "connect.none": ("none", "无", "無"),
    "connect.more": (" and {n} more", " 等另外 {n} 个", " 等另外 {n} 個"),
    "connect.kept_stored": (
        "kept for you only, encrypted in the store, and restored in your next chats",
        "仅为你保存，加密存储，并会在你之后的对话中恢复",
        "僅為你保存，加密儲存，並會在你之後的對話中恢復",
    ),
    "connect.kept_chat": ("kept for this chat only", "仅在本次对话中保存", "僅在本次對話中保存"),
    "connect.connected.one": (
        "🔌 **Connected `{name}`** ({url}). The server lists {count} model: {listed}{more}.\n\n"
        "Pick them as function-call, answer and chat model in the ⚙️ settings' **Models** "
        "section (listed as `{example}`), then **Confirm**. The API key is {where}; it is "
        "never shown again.",
        "🔌 **已连接 `{name}`**（{url}）。该服务器列出 {count} 个模型：{listed}{more}。\n\n"
        "请在 ⚙️ 设置的**模型**部分将它们选为函数调用、回答和聊天模型（列为 `{example}`），"
        "然后**确认**。API 密钥{where}；它不会再显示。",
        "🔌 **已連線 `{name}`**（{url}）。該伺服器列出 {count} 個模型：{listed}{more}。\n\n"
        "請在 ⚙️ 設定的**模型**部分將它們選為函式呼叫、回答和聊天模型（列為 `{example}`），"
        "然後**確認**。API 金鑰{where}；它不會再顯示。",
    ),
    "connect.connected.many": (
        "🔌 **Connected `{name}`** ({url}). The server lists {count} models: {listed}{more}.\n\n"
        "Pick them as function-call, answer and chat model in the ⚙️ settings' **Models** "
        "section (listed as `{example}`), then **Confirm**. The API key is {where}; it is "
        "never shown again.",
        "🔌 **已连接 `{name}`**（{url}）。该服务器列出 {count} 个模型：{listed}{more}。\n\n"
        "请在 ⚙️ 设置的**模型**部分将它们选为函数调用、回答和聊天模型（列为 `{example}`），"
        "然后**确认**。API 密钥{where}；它不会再显示。",
        "🔌 **已連線 `{name}`**（{url}）。該伺服器列出 {count} 個模型：{listed}{more}。\n\n"
        "請在 ⚙️ 設定的**模型**部分將它們選為函式呼叫、回答和聊天模型（列為 `{example}`），"
        "然後**確認**。API 金鑰{where}；它不會再顯示。",
    ),
    "connect.remove_ask": (
        "🔌 **Remove the connection `{name}`** ({url})? Its saved API key is deleted, and roles "
        "that use its models go back to the configured models.",
        "🔌 **删除连接 `{name}`**（{url}）？其保存的 API 密钥会被删除，使用其模型的角色会改回已配置的模型。",
        "🔌 **刪除連線 `{name}`**（{url}）？其儲存的 API 金鑰會被刪除，使用其模型的角色會改回已設定的模型。",
    ),
    "connect.keep_it": ("Keep it", "保留", "保留"),
    "connect.kept": (
        "Kept the connection `{name}`.",
        "已保留连接 `{name}`。",
        "已保留連線 `{name}`。",
    ),
    "connect.forgotten_chat": ("in this chat", "（在本次对话中）", "（在本次對話中）"),
    "connect.forgotten_store": (
        "in this chat and in the store (its key is deleted)",
        "（在本次对话和存储中；其密钥已删除）",
        "（在本次對話和儲存中；其金鑰已刪除）",
    ),
    "connect.removed": (
        "🔌 Removed the connection `{name}` {where}. Models in force: {summary}.",
        "🔌 已删除连接 `{name}`{where}。当前模型：{summary}。",
        "🔌 已刪除連線 `{name}`{where}。目前模型：{summary}。",
    ),
    "connect.none_left": (
        "none — add a connection or configure a model",
        "无——请添加连接或配置模型",
        "無——請新增連線或設定模型",
    ),
}
