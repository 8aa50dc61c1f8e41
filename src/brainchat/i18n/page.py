"""The page around a run: its steps' titles, the answer's footer, the stop notice, the Mode
switch and the approval dialog (ui/render.py, ui/run_end.py, ui/modes.py, ui/confirm.py)."""

TEXT = {
    # ui/render.py: the steps of a run
    "page.reasoning": ("Reasoning", "推理", "推理"),
    "page.thinking": ("Thinking", "思考", "思考"),
    "page.no_reasoning": ("(no visible reasoning)", "（无可见的推理）", "（無可見的推理）"),
    "page.calls": ("→ calls {tools}", "→ 调用 {tools}", "→ 呼叫 {tools}"),
    "page.tool_waiting": ("waiting for your approval", "等待你的批准", "等待你的核准"),
    "page.tool_running": ("running…", "运行中…", "執行中…"),
    "page.approve_below": (
        "Waiting for your approval in the chat below.",
        "正在等待你在下方对话中批准。",
        "正在等待你在下方對話中核准。",
    ),
    "page.study_step": ("Study · {stage}", "研究 · {stage}", "研究 · {stage}"),
    "page.asked": ("**Asked:** {question}", "**询问：** {question}", "**詢問：** {question}"),
    "page.plan": ("Plan · {n} steps", "计划 · {n} 步", "計畫 · {n} 步"),
    "page.replan": (
        "Replan {attempt}/{most}",
        "重新计划 {attempt}/{most}",
        "重新計畫 {attempt}/{most}",
    ),
    "page.replanned": (
        "Replanned ({attempt}/{most})",
        "已重新计划（{attempt}/{most}）",
        "已重新計畫（{attempt}/{most}）",
    ),
    "page.step_verified": (
        "Step {id} verified · {title}",
        "第 {id} 步已核实 · {title}",
        "第 {id} 步已核實 · {title}",
    ),
    "page.step_failed": (
        "Step {id} failed · {title}",
        "第 {id} 步失败 · {title}",
        "第 {id} 步失敗 · {title}",
    ),
    "page.study_restored": (
        "Study restored · {stage}",
        "研究已恢复 · {stage}",
        "研究已還原 · {stage}",
    ),
    "page.incomplete": (" · incomplete", " · 不完整", " · 不完整"),
    # ui/run_end.py: the end of a run
    "page.export_label": ("Export analysis", "导出分析", "匯出分析"),
    "page.export_tip": (
        "A Python script that redoes the study and an HTML report, as the study is now",
        "一个重做本研究的 Python 脚本和一份 HTML 报告（按研究的当前状态）",
        "一個重做本研究的 Python 腳本和一份 HTML 報告（依研究的目前狀態）",
    ),
    "page.stopped": (
        "⏹️ **Stopped.** What was done so far stays above; send a new message to go on.",
        "⏹️ **已停止。** 目前完成的内容保留在上方；发送新消息即可继续。",
        "⏹️ **已停止。** 目前完成的內容保留在上方；傳送新訊息即可繼續。",
    ),
    "page.step_stopped": ("⏹️ stopped by you", "⏹️ 已由你停止", "⏹️ 已由你停止"),
    "page.title_stopped": (" · stopped", " · 已停止", " · 已停止"),
    "page.partial": (
        "*(stopped — partial answer)*",
        "*（已停止——部分回答）*",
        "*（已停止——部分回答）*",
    ),
    "page.no_answer": (
        "No answer was written for this run.",
        "本次运行没有写出回答。",
        "本次執行沒有寫出回答。",
    ),
    "page.usage_tip": (
        "Show or hide the table of tokens, time and cost",
        "显示或隐藏 token、时间与费用表",
        "顯示或隱藏 token、時間與費用表",
    ),
}
