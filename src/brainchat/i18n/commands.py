"""The descriptions of brainchat's own slash commands in the command menu."""

TEXT = {
    "commands.tools": (
        "List the agent's tools, MCP servers and what failed to load",
        "列出智能体的工具、MCP 服务器以及加载失败的项目",
        "列出智能體的工具、MCP 伺服器以及載入失敗的項目",
    ),
    "commands.connect": (
        "Add a model connection: a server's base URL and API key",
        "添加模型连接：服务器的基础 URL 和 API 密钥",
        "新增模型連線：伺服器的基礎 URL 和 API 金鑰",
    ),
    "commands.files": (
        "Your recordings: size, where each came from; remove them",
        "你的记录：大小、来源；可删除",
        "你的記錄：大小、來源；可刪除",
    ),
}
