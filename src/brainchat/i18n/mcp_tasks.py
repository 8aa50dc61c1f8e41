"""MCP server tasks that outlive their turn: /tasks and the Cancel buttons (#43)."""

TEXT = {
    "commands.tasks": (
        "MCP server tasks still running: status, Cancel",
        "MCP 服务器上仍在运行的任务：状态、取消",
        "MCP 伺服器上仍在執行的任務：狀態、取消",
    ),
    "mcp_tasks.none": (
        "No MCP server task of yours is running.",
        "你没有正在 MCP 服务器上运行的任务。",
        "你沒有正在 MCP 伺服器上執行的任務。",
    ),
    "mcp_tasks.title": (
        "**Your MCP server tasks still running** ({n})",
        "**你在 MCP 服务器上仍在运行的任务**（{n} 个）",
        "**你在 MCP 伺服器上仍在執行的任務**（{n} 個）",
    ),
    "mcp_tasks.left_running": (
        "**Still running on an MCP server after this turn** ({n}): the server did not confirm "
        "the cancel. Cancel it here; otherwise it is cancelled again before your next turn.",
        "**本轮结束后仍在 MCP 服务器上运行的任务**（{n} 个）：服务器没有确认取消。"
        "可在此取消；否则会在你下一轮提问前再次取消。",
        "**本輪結束後仍在 MCP 伺服器上執行的任務**（{n} 個）：伺服器沒有確認取消。"
        "可在此取消；否則會在你下一輪提問前再次取消。",
    ),
    "mcp_tasks.col_server": ("Server", "服务器", "伺服器"),
    "mcp_tasks.col_tool": ("Tool", "工具", "工具"),
    "mcp_tasks.col_task": ("Task", "任务", "任務"),
    "mcp_tasks.col_status": ("Status", "状态", "狀態"),
    "mcp_tasks.col_note": ("Last message", "最新消息", "最新訊息"),
    "mcp_tasks.col_age": ("Running for", "已运行", "已執行"),
    "mcp_tasks.cancel_button": ("Cancel {tool}", "取消 {tool}", "取消 {tool}"),
    "mcp_tasks.cancelled": (
        "Cancelled task `{task}` on MCP server `{server}`.",
        "已取消 MCP 服务器 `{server}` 上的任务 `{task}`。",
        "已取消 MCP 伺服器 `{server}` 上的任務 `{task}`。",
    ),
    "mcp_tasks.not_cancelled": (
        "Task `{task}` on MCP server `{server}` was not cancelled: {why}. Try again with `/tasks`.",
        "MCP 服务器 `{server}` 上的任务 `{task}` 未能取消：{why}。可用 `/tasks` 重试。",
        "MCP 伺服器 `{server}` 上的任務 `{task}` 未能取消：{why}。可用 `/tasks` 重試。",
    ),
}
