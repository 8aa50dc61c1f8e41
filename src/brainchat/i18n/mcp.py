"""MCP servers in the chat: sign-in, a server's questions (elicitation), resources, prompts and
the plug button. Server, tool and resource names stay as they are."""

TEXT = {
    "mcp.sign_in": (
        "🔐 **MCP server {server} asks you to sign in.** You sign in at **{host}**, which then "
        "sends you back here.\n\n[Sign in to {server} at {host}]({url})\n\n"
        "The link opens a new tab and is good for {minutes} minutes; the server connects as soon "
        "as you have signed in. brainchat keeps the tokens for you, encrypted, and never shows "
        "them; removing the server signs you out.",
        "🔐 **MCP 服务器 {server} 请你登录**。你将在 **{host}** 登录，之后会被送回这里。\n\n"
        "[在 {host} 登录 {server}]({url})\n\n"
        "链接会在新标签页中打开，{minutes} 分钟内有效；你登录后服务器即会连接。"
        "brainchat 为你加密保存令牌，从不显示；删除该服务器即会让你登出。",
        "🔐 **MCP 伺服器 {server} 請你登入**。你將在 **{host}** 登入，之後會被送回這裡。\n\n"
        "[在 {host} 登入 {server}]({url})\n\n"
        "連結會在新分頁中開啟，{minutes} 分鐘內有效；你登入後伺服器即會連線。"
        "brainchat 為你加密保存權杖，從不顯示；刪除該伺服器即會讓你登出。",
    ),
    "mcp.page.not_accepted": ("Sign-in not accepted", "登录未被接受", "登入未被接受"),
    "mcp.page.not_accepted_text": (
        "This sign-in link is not one of your pending sign-ins: it expired, was already used, or "
        "belongs to someone else. Go back to brainchat and connect the server again for a new "
        "link.",
        "此登录链接不是你待完成的登录之一：它已过期、已被使用，或属于其他人。"
        "请回到 brainchat 重新连接该服务器以获取新链接。",
        "此登入連結不是你待完成的登入之一：它已過期、已被使用，或屬於其他人。"
        "請回到 brainchat 重新連線該伺服器以取得新連結。",
    ),
    "mcp.page.refused": ("Sign-in refused", "登录被拒绝", "登入被拒絕"),
    "mcp.page.refused_text": (
        "The authorization server did not sign you in to MCP server '{server}'. Go back to "
        "brainchat to try again.",
        "授权服务器没有让你登录 MCP 服务器“{server}”。请回到 brainchat 重试。",
        "授權伺服器沒有讓你登入 MCP 伺服器「{server}」。請回到 brainchat 重試。",
    ),
    "mcp.page.signed_in": ("Signed in", "已登录", "已登入"),
    "mcp.page.signed_in_text": (
        "Signed in to MCP server '{server}'. You can close this tab and go back to brainchat.",
        "已登录 MCP 服务器“{server}”。你可以关闭此标签页，回到 brainchat。",
        "已登入 MCP 伺服器「{server}」。你可以關閉此分頁，回到 brainchat。",
    ),
    "mcp.asks": (
        "🗨️ MCP server **{server}** asks (during {tool}):\n\n",
        "🗨️ MCP 服务器 **{server}** 提问（在 {tool} 期间）：\n\n",
        "🗨️ MCP 伺服器 **{server}** 提問（在 {tool} 期間）：\n\n",
    ),
    "mcp.correct": (
        "\n\nSome answers do not fit; correct them below.",
        "\n\n有些回答不符合要求；请在下方更正。",
        "\n\n有些回答不符合要求；請在下方更正。",
    ),
    "mcp.no_answer": ("no answer in time: cancelled", "未及时回答：已取消", "未及時回答：已取消"),
    "mcp.closed": ("closed", "已关闭", "已關閉"),
    "mcp.asked": (
        "🗨️ MCP server **{server}** asked:\n\n{message}\n\n→ {outcome}",
        "🗨️ MCP 服务器 **{server}** 提问了：\n\n{message}\n\n→ {outcome}",
        "🗨️ MCP 伺服器 **{server}** 提問了：\n\n{message}\n\n→ {outcome}",
    ),
    "mcp.usage": (
        "Type `/resource` to list the MCP servers' resources, or `/resource SERVER URI` to attach "
        "one (a template's `{…}` parts filled in).",
        "输入 `/resource` 列出各 MCP 服务器的资源，或输入 `/resource SERVER URI` 附加一个"
        "（模板的 `{…}` 部分需填好）。",
        "輸入 `/resource` 列出各 MCP 伺服器的資源，或輸入 `/resource SERVER URI` 附加一個"
        "（範本的 `{…}` 部分需填好）。",
    ),
    "mcp.give_both": (
        "⚠️ Give both the server and the resource's URI. {usage}",
        "⚠️ 请同时给出服务器和资源的 URI。{usage}",
        "⚠️ 請同時給出伺服器和資源的 URI。{usage}",
    ),
    "mcp.list_failed": (
        "⚠️ Could not list the resources of MCP server '{name}': {error}",
        "⚠️ 无法列出 MCP 服务器“{name}”的资源：{error}",
        "⚠️ 無法列出 MCP 伺服器「{name}」的資源：{error}",
    ),
    "mcp.no_resources": (
        "No MCP server offers resources (configured, or connected with the plug button).",
        "没有 MCP 服务器提供资源（无论是配置的，还是用插头按钮连接的）。",
        "沒有 MCP 伺服器提供資源（無論是設定的，還是用插頭按鈕連線的）。",
    ),
    "mcp.template": (" (template)", "（模板）", "（範本）"),
    "mcp.attach": ("Attach {uri}", "附加 {uri}", "附加 {uri}"),
    "mcp.resources": (
        "**MCP resources** (attach one to your next message):\n",
        "**MCP 资源**（附加一个到你的下一条消息）：\n",
        "**MCP 資源**（附加一個到你的下一則訊息）：\n",
    ),
    "mcp.none": ("none", "无", "無"),
    "mcp.no_server": (
        "⚠️ No connected MCP server {server} (connected: {known}).",
        "⚠️ 没有已连接的 MCP 服务器 {server}（已连接：{known}）。",
        "⚠️ 沒有已連線的 MCP 伺服器 {server}（已連線：{known}）。",
    ),
    "mcp.attach_failed": (
        "⚠️ Could not attach {uri}: {error}",
        "⚠️ 无法附加 {uri}：{error}",
        "⚠️ 無法附加 {uri}：{error}",
    ),
    "mcp.attached": (
        "📎 Attached `{uri}` from MCP server **{server}** ({size} characters): it goes with your "
        "next message.",
        "📎 已从 MCP 服务器 **{server}** 附加 `{uri}`（{size} 个字符）：它会随你的下一条消息发送。",
        "📎 已從 MCP 伺服器 **{server}** 附加 `{uri}`（{size} 個字元）：它會隨你的下一則訊息傳送。",
    ),
    "mcp.prompt_sent": (
        "Prompt `/{command}`, sent as your message:\n\n{quoted}",
        "提示 `/{command}`，作为你的消息发送：\n\n{quoted}",
        "提示 `/{command}`，作為你的訊息傳送：\n\n{quoted}",
    ),
    "mcp.unavailable": (
        "⚠️ MCP support is unavailable: {error}",
        "⚠️ MCP 支持不可用：{error}",
        "⚠️ MCP 支援無法使用：{error}",
    ),
    "mcp.list_tools_failed": (
        "⚠️ MCP server `{name}` connected but its tools could not be listed: {error}",
        "⚠️ MCP 服务器 `{name}` 已连接，但无法列出其工具：{error}",
        "⚠️ MCP 伺服器 `{name}` 已連線，但無法列出其工具：{error}",
    ),
    "mcp.no_tools": ("no tools", "没有工具", "沒有工具"),
    "mcp.connected": (
        "🔌 MCP server `{name}` connected; Agent mode can now use {names}.",
        "🔌 MCP 服务器 `{name}` 已连接；智能体模式现在可以使用 {names}。",
        "🔌 MCP 伺服器 `{name}` 已連線；智能體模式現在可以使用 {names}。",
    ),
    "mcp.prompts_note": (
        "its prompts are slash commands: {ids}",
        "它的提示是斜杠命令：{ids}",
        "它的提示是斜線指令：{ids}",
    ),
    "mcp.resources_note": (
        "its resources can be attached with `/resource` and read by the agent",
        "它的资源可以用 `/resource` 附加，并由智能体读取",
        "它的資源可以用 `/resource` 附加，並由智能體讀取",
    ),
    "mcp.disconnected": (
        "🔌 MCP server `{name}` disconnected; its tools are removed.",
        "🔌 MCP 服务器 `{name}` 已断开；其工具已移除。",
        "🔌 MCP 伺服器 `{name}` 已中斷連線；其工具已移除。",
    ),
    "mcp.disconnected_signed_out": (
        "🔌 MCP server `{name}` disconnected; its tools are removed, and you are signed out of "
        "it (its tokens are deleted).",
        "🔌 MCP 服务器 `{name}` 已断开；其工具已移除，你也已从中登出（其令牌已删除）。",
        "🔌 MCP 伺服器 `{name}` 已中斷連線；其工具已移除，你也已從中登出（其權杖已刪除）。",
    ),
    "mcp.note_join": ("; ", "；", "；"),
    "mcp.note": (" {text}.", "{text}。", "{text}。"),
}
