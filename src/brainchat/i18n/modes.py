"""The Chat / Agent switch and the approval dialog."""

TEXT = {
    "modes.picker": ("Mode", "模式", "模式"),
    "modes.chat": ("Chat", "对话", "對話"),
    "modes.agent": ("Agent", "智能体", "智慧代理"),
    "modes.chat_about": (
        "One model answers directly, no tools.",
        "一个模型直接回答，不调用工具。",
        "一個模型直接回答，不呼叫工具。",
    ),
    "modes.agent_about": (
        "Reasons, searches and runs EEG / MCP tools, then answers.",
        "推理、搜索并运行 EEG / MCP 工具，然后回答。",
        "推理、搜尋並執行 EEG / MCP 工具，然後回答。",
    ),
    "modes.no_model": ("(none)", "（无）", "（無）"),
    "modes.chat_on": (
        "💬 **Chat mode is on** · `{model}` answers directly, with the conversation as context; "
        "no tools.",
        "💬 **对话模式已开启** · `{model}` 以对话为上下文直接回答，不调用工具。",
        "💬 **對話模式已開啟** · `{model}` 以對話為上下文直接回答，不呼叫工具。",
    ),
    "modes.agent_on": (
        "🤖 **Agent mode is on** · {tools} · thinks with `{thinker}`, answers with `{answerer}`.",
        "🤖 **智能体模式已开启** · {tools} · 用 `{thinker}` 思考，用 `{answerer}` 回答。",
        "🤖 **智慧代理模式已開啟** · {tools} · 用 `{thinker}` 思考，用 `{answerer}` 回答。",
    ),
    "modes.show_tools": ("Show tools", "显示工具", "顯示工具"),
    "modes.ask_agent": (
        "🤖 **Switch to Agent mode?** `{thinker}` reasons and calls tools ({tools}: web search, "
        "EEG analysis, MCP servers) in rounds, then `{answerer}` writes the answer with its "
        "sources. Tools that discard data ask you first.",
        "🤖 **切换到智能体模式？** `{thinker}` 会分轮推理并调用工具（{tools}：网络搜索、EEG "
        "分析、MCP 服务器），然后由 `{answerer}` 写出带来源的回答。会丢弃数据的工具会先征求你的同意。",
        "🤖 **切換到智慧代理模式？** `{thinker}` 會分輪推理並呼叫工具（{tools}：網路搜尋、EEG "
        "分析、MCP 伺服器），然後由 `{answerer}` 寫出附來源的回答。會丟棄資料的工具會先徵求你的同意。",
    ),
    "modes.switch_agent": ("Switch to Agent", "切换到智能体", "切換到智慧代理"),
    "modes.stay_chat": ("Stay in Chat", "留在对话模式", "留在對話模式"),
    "modes.stayed": (
        "💬 Stayed in **Chat mode**.",
        "💬 仍在**对话模式**。",
        "💬 仍在**對話模式**。",
    ),
    "confirm.approve_once": ("Approve once", "批准一次", "核准一次"),
    "confirm.approve_always": (
        "Approve for this conversation",
        "在本对话中一直批准",
        "在本對話中一律核准",
    ),
    "confirm.reject": ("Reject", "拒绝", "拒絕"),
    "confirm.approve": ("Approve", "批准", "核准"),
    "confirm.approved_once": ("✅ Approved once", "✅ 已批准一次", "✅ 已核准一次"),
    "confirm.approved_always": (
        "✅ Approved for this conversation",
        "✅ 已在本对话中批准",
        "✅ 已在本對話中核准",
    ),
    "confirm.approved": ("✅ Approved", "✅ 已批准", "✅ 已核准"),
    "confirm.rejected": ("🚫 Rejected", "🚫 已拒绝", "🚫 已拒絕"),
    "confirm.asks": (
        "{icon} The agent wants to run **{name}**. It asks first because {why}.",
        "{icon} 智能体想要运行 **{name}**。它先征求同意，因为 {why}。",
        "{icon} 智慧代理想要執行 **{name}**。它先徵求同意，因為 {why}。",
    ),
    "confirm.question": ("Approve it?", "是否批准？", "是否核准？"),
    "approval.server_destructive": (
        "its MCP server `{server}` marks it as destructive (it may delete or overwrite data)",
        "它的 MCP 服务器 `{server}` 将它标为破坏性操作（可能删除或覆盖数据）",
        "它的 MCP 伺服器 `{server}` 將它標為破壞性操作（可能刪除或覆寫資料）",
    ),
    "approval.plan_step": (
        "single-step mode runs one planned step per confirmation",
        "单步模式每次确认只运行一个计划步骤",
        "單步模式每次確認只執行一個計畫步驟",
    ),
    "approval.first_use": (
        "{name} comes from `{server}`, an MCP server you connected, and is not marked read-only; "
        "its tools ask before their first use in a conversation",
        "{name} 来自你连接的 MCP 服务器 `{server}`，且未标为只读；它的工具在一次对话中首次使用前会先询问",
        "{name} 來自你連接的 MCP 伺服器 `{server}`，且未標為唯讀；它的工具在一次對話中首次使用前會先詢問",
    ),
    "approval.unmarked": (
        "its MCP server `{server}` does not mark it read-only, so by the MCP specification it may "
        "change or delete data; such tools ask before their first use in a conversation",
        "它的 MCP 服务器 `{server}` 没有将它标为只读，按 MCP 规范它可能修改或删除数据；"
        "这类工具在一次对话中首次使用前会先询问",
        "它的 MCP 伺服器 `{server}` 沒有將它標為唯讀，依 MCP 規範它可能修改或刪除資料；"
        "這類工具在一次對話中首次使用前會先詢問",
    ),
    "approval.changes": (
        "{name} changes or discards data",
        "{name} 会修改或丢弃数据",
        "{name} 會修改或丟棄資料",
    ),
}
