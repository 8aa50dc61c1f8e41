"""The first screen: the welcome, what to configure when nothing works, the demo set offer."""

TEXT = {
    "welcome.not_ready": (
        "⚠️ **brainchat is not ready yet.**",
        "⚠️ **brainchat 尚未就绪。**",
        "⚠️ **brainchat 尚未就緒。**",
    ),
    "welcome.try_offline": (
        "To try brainchat without a model first, restart it as `bash scripts/dev.sh run --demo` "
        "(or `brainchat --demo`): scripted models, offline, no key.",
        "想先不接模型试用 brainchat，请以 `bash scripts/dev.sh run --demo`"
        "（或 `brainchat --demo`）重新启动：脚本模型，离线，无需密钥。",
        "想先不接模型試用 brainchat，請以 `bash scripts/dev.sh run --demo`"
        "（或 `brainchat --demo`）重新啟動：腳本模型，離線，無需金鑰。",
    ),
    "welcome.add_connection": (
        "Or connect a model server now, without a restart: **Add a model connection** below (or "
        "`/connect`) opens a short form for its base URL and API key; brainchat lists the server's "
        "models, and you pick the chat, function-call and answer models in the ⚙️ settings.",
        "或者现在就连接一个模型服务器，无需重启：下方的**添加模型连接**（或 `/connect`）"
        "会打开一个简短表单，填写其 base URL 和 API 密钥；brainchat 列出该服务器的模型，"
        "你再在 ⚙️ 设置中选择聊天、函数调用和回答模型。",
        "或者現在就連線一個模型伺服器，無需重啟：下方的**新增模型連線**（或 `/connect`）"
        "會開啟一個簡短表單，填寫其 base URL 和 API 金鑰；brainchat 列出該伺服器的模型，"
        "你再在 ⚙️ 設定中選擇聊天、函式呼叫和回答模型。",
    ),
    "welcome.ready": (
        "👋 **brainchat** is ready, in **{mode} mode**.",
        "👋 **brainchat** 已就绪，当前为**{mode}模式**。",
        "👋 **brainchat** 已就緒，目前為**{mode}模式**。",
    ),
    "welcome.mode.chat": ("Chat", "聊天", "聊天"),
    "welcome.mode.agent": ("Agent", "智能体", "智能體"),
    "welcome.chat_model": (
        "Chat model: `{name}`. ",
        "聊天模型：`{name}`。",
        "聊天模型：`{name}`。",
    ),
    "welcome.roles": (
        "**Models:** thinking and tool calls with `{function_call}`, final answer with `{answer}`.",
        "**模型**：思考与工具调用用 `{function_call}`，最终回答用 `{answer}`。",
        "**模型**：思考與工具呼叫用 `{function_call}`，最終回答用 `{answer}`。",
    ),
    "welcome.help": (
        "Switch **Chat / Agent** with the *Mode* picker in the message bar (Agent asks before it "
        "switches); change models and limits in the ⚙️ settings; type `/tools` to list the "
        "agent's tools, `/connect` to add a model server.",
        "用消息栏中的*模式*选择器切换**聊天 / 智能体**（切换到智能体前会先询问）；"
        "在 ⚙️ 设置中更改模型和限制；输入 `/tools` 列出智能体的工具，`/connect` 添加模型服务器。",
        "用訊息列中的*模式*選擇器切換**聊天 / 智能體**（切換到智能體前會先詢問）；"
        "在 ⚙️ 設定中更改模型和限制；輸入 `/tools` 列出智能體的工具，`/connect` 新增模型伺服器。",
    ),
    "welcome.show_tools": ("Show tools", "显示工具", "顯示工具"),
    "welcome.empty_folder": (
        "The EEG data folder is empty. Write a small synthetic motor-imagery demo set "
        "(2 subjects × 2 sessions, EDF) into {where} to try the EEG tools?",
        "EEG 数据文件夹是空的。要在 {where} 写入一个小型合成运动想象演示数据集"
        "（2 名受试者 × 2 次会话，EDF）来试用 EEG 工具吗？",
        "EEG 資料夾是空的。要在 {where} 寫入一個小型合成運動想像示範資料集"
        "（2 名受試者 × 2 次會話，EDF）來試用 EEG 工具嗎？",
    ),
    "welcome.write_demo": ("Write the demo EEG set", "写入演示 EEG 数据集", "寫入示範 EEG 資料集"),
    "welcome.writing_demo": (
        "Writing the demo EEG set to {where}…",
        "正在将演示 EEG 数据集写入 {where}…",
        "正在將示範 EEG 資料集寫入 {where}…",
    ),
    "welcome.demo_failed": (
        "⚠️ Could not write the demo set: {kind}: {error}",
        "⚠️ 无法写入演示数据集：{kind}：{error}",
        "⚠️ 無法寫入示範資料集：{kind}：{error}",
    ),
    "welcome.demo_written": (
        "✅ Wrote {count} recordings to {where}: {files}.\n\n"
        "Try in Agent mode: *Load all the demo files and tell me what is in them.*",
        "✅ 已将 {count} 个记录写入 {where}：{files}。\n\n"
        "在智能体模式中试试：*载入所有演示文件，告诉我里面有什么。*",
        "✅ 已將 {count} 個記錄寫入 {where}：{files}。\n\n"
        "在智能體模式中試試：*載入所有示範檔案，告訴我裡面有什麼。*",
    ),
}
