"""The MCP client's session features in the chat: sampling approval, resource updates and prompt
argument completion (#43). Server, tool and resource names stay as they are."""

TEXT = {
    "mcp_client.sampling_asks": (
        "🤖 **MCP server {server} asks to use your model** (sampling) while running **{tool}**: "
        "up to {max_tokens} tokens from this run's budget.",
        "🤖 **MCP 服务器 {server} 请求使用你的模型**（采样），正在运行 **{tool}**："
        "最多使用本次运行预算中的 {max_tokens} 个 token。",
        "🤖 **MCP 伺服器 {server} 請求使用你的模型**（取樣），正在執行 **{tool}**："
        "最多使用本次執行預算中的 {max_tokens} 個 token。",
    ),
    "mcp_client.sampling_system": (
        "Its instructions to the model:",
        "它给模型的指示：",
        "它給模型的指示：",
    ),
    "mcp_client.sampling_messages": (
        "What it asks:",
        "它的请求：",
        "它的請求：",
    ),
    "mcp_client.sampling_question": (
        "Allow it?",
        "是否允许？",
        "是否允許？",
    ),
    "mcp_client.allow_once": ("Allow once", "允许一次", "允許一次"),
    "mcp_client.allow_always": (
        "Always allow this server",
        "始终允许此服务器",
        "一律允許此伺服器",
    ),
    "mcp_client.deny": ("Deny", "拒绝", "拒絕"),
    "mcp_client.allowed_once": (
        "Allowed once: MCP server {server} used your model.",
        "已允许一次：MCP 服务器 {server} 使用了你的模型。",
        "已允許一次：MCP 伺服器 {server} 使用了你的模型。",
    ),
    "mcp_client.allowed_always": (
        "Allowed: MCP server {server} may use your model for the rest of this conversation.",
        "已允许：在本次对话的其余部分，MCP 服务器 {server} 可以使用你的模型。",
        "已允許：在本次對話的其餘部分，MCP 伺服器 {server} 可以使用你的模型。",
    ),
    "mcp_client.denied": (
        "Denied: MCP server {server} was told you refused.",
        "已拒绝：已告知 MCP 服务器 {server} 你拒绝了。",
        "已拒絕：已告知 MCP 伺服器 {server} 你拒絕了。",
    ),
    "mcp_client.resource_updated": (
        "🔄 MCP server {server} updated `{uri}` ({size} characters): the new text goes with "
        "your next message.",
        "🔄 MCP 服务器 {server} 更新了 `{uri}`（{size} 个字符）：新内容会随你的下一条消息发送。",
        "🔄 MCP 伺服器 {server} 更新了 `{uri}`（{size} 個字元）：新內容會隨你的下一則訊息傳送。",
    ),
    "mcp_client.resource_update_failed": (
        "⚠️ MCP server {server} updated `{uri}`, but it could not be read again: {error}",
        "⚠️ MCP 服务器 {server} 更新了 `{uri}`，但无法重新读取：{error}",
        "⚠️ MCP 伺服器 {server} 更新了 `{uri}`，但無法重新讀取：{error}",
    ),
    "mcp_client.subscribed": (
        "You will see its updates here (the server sends them).",
        "你会在这里看到它的更新（由服务器发送）。",
        "你會在這裡看到它的更新（由伺服器傳送）。",
    ),
    "mcp_client.server_log": (
        "**The server said:**",
        "**服务器消息：**",
        "**伺服器訊息：**",
    ),
    "mcp_client.choices": (
        "**{argument}** of `/{command}`: the server suggests {values}. Click one, or type "
        "`/{command} {argument}=…`.",
        "`/{command}` 的 **{argument}**：服务器建议 {values}。点击其中一个，或输入 "
        "`/{command} {argument}=…`。",
        "`/{command}` 的 **{argument}**：伺服器建議 {values}。點選其中一個，或輸入 "
        "`/{command} {argument}=…`。",
    ),
    "mcp_client.no_choices": (
        "**{argument}** of `/{command}`: the server suggests nothing for “{typed}”.",
        "`/{command}` 的 **{argument}**：服务器对“{typed}”没有建议。",
        "`/{command}` 的 **{argument}**：伺服器對「{typed}」沒有建議。",
    ),
}
