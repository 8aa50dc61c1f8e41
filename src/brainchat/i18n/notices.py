"""A conversation's own notices: the tool list, a failed run, the export of an analysis."""

TEXT = {
    "notices.tools_failed": (
        "⚠️ Could not list the tools: {error}",
        "⚠️ 无法列出工具：{error}",
        "⚠️ 無法列出工具：{error}",
    ),
    "notices.run_failed": (
        "⚠️ Something went wrong: {kind}: {error}\n\n"
        "*Your conversation is kept; send the message again.*",
        "⚠️ 出错了：{kind}：{error}\n\n*你的对话已保留；请再发送一次消息。*",
        "⚠️ 出錯了：{kind}：{error}\n\n*你的對話已保留；請再傳送一次訊息。*",
    ),
    "notices.exporting": ("Exporting the analysis…", "正在导出分析…", "正在匯出分析…"),
    "notices.export_failed": (
        "⚠️ The export failed: {kind}: {error}",
        "⚠️ 导出失败：{kind}：{error}",
        "⚠️ 匯出失敗：{kind}：{error}",
    ),
    "notices.export_refused": ("⚠️ {error}.", "⚠️ {error}。", "⚠️ {error}。"),
    "notices.exported": (
        "✅ **Analysis exported** ({steps} step(s){models}), saved in the data folder's "
        "`{folder}/`:\n\n"
        "- `{script}`: a Python script that redoes every step with MNE-Python, {packages} "
        "(no brainchat): `python {script} DATA_DIR`\n"
        "- `{report}`: the report (recordings, steps, figures, metrics, settings), "
        "one self-contained HTML file",
        "✅ **分析已导出**（{steps} 个步骤{models}），保存在数据文件夹的 `{folder}/` 中：\n\n"
        "- `{script}`：用 MNE-Python、{packages} 重做每个步骤的 Python 脚本"
        "（无需 brainchat）：`python {script} DATA_DIR`\n"
        "- `{report}`：报告（记录、步骤、图、指标、设置），一个独立的 HTML 文件",
        "✅ **分析已匯出**（{steps} 個步驟{models}），儲存在資料夾的 `{folder}/` 中：\n\n"
        "- `{script}`：用 MNE-Python、{packages} 重做每個步驟的 Python 腳本"
        "（無需 brainchat）：`python {script} DATA_DIR`\n"
        "- `{report}`：報告（記錄、步驟、圖、指標、設定），一個獨立的 HTML 檔案",
    ),
    "notices.exported_models": (", models: {models}", "，模型：{models}", "，模型：{models}"),
}
